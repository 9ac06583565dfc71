import nock from 'nock';
import { createAppTester } from 'zapier-platform-core';
import app from '../../src';
import { auctionStatusChangedOperations } from '../../src/triggers/auctionStatusChanged';
import { PROVIDER_RETRY_SCHEDULE_MS } from '../../src/sandbox/emulator';
import { SEEN_TTL_SECONDS } from '../../src/triggers/dedupe';
import {
  APP_ID,
  ENDPOINT_ID,
  PROVIDER,
  SECRET,
  authData,
  failure,
  newSecret,
  payload,
  signedRequest,
  subscription,
} from '../helpers/fixtures';

const perform = auctionStatusChangedOperations.perform;
const body = JSON.stringify(payload);
const OTHER_ENDPOINT = 'ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Zz9';

describe('exactly-once Zap runs under at-least-once delivery', () => {
  it('does not run a message a second time for the same Zap', async () => {
    const appTester = createAppTester(app);
    const subscribeData = subscription;
    await expect(
      appTester(perform, { authData, subscribeData, rawRequest: signedRequest(body) }, true),
    ).resolves.toHaveLength(1);
    // A redelivery is signed afresh (new timestamp) but carries the same message id.
    await expect(appTester(perform, { authData, subscribeData, rawRequest: signedRequest(body) })).resolves.toEqual([]);
  });

  it('runs the same message once in each of two Zaps', async () => {
    const appTester = createAppTester(app);
    const first = subscription;
    const second = { id: OTHER_ENDPOINT, secret: SECRET };
    await expect(
      appTester(perform, { authData, subscribeData: first, rawRequest: signedRequest(body) }, true),
    ).resolves.toHaveLength(1);
    await expect(
      appTester(perform, { authData, subscribeData: second, rawRequest: signedRequest(body) }),
    ).resolves.toHaveLength(1);
  });

  it('never lets a refused forgery mark a message id as run', async () => {
    const appTester = createAppTester(app);
    const subscribeData = subscription;
    nock(PROVIDER).get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`).reply(200, { key: SECRET });
    const forged = await failure(
      appTester(
        perform,
        { authData, subscribeData, rawRequest: signedRequest(body, { secrets: [newSecret()] }) },
        true,
      ),
    );
    expect(forged.code).toBe('DeliveryRefused');
    await expect(
      appTester(perform, { authData, subscribeData, rawRequest: signedRequest(body) }),
    ).resolves.toHaveLength(1);
  });

  it('does not mark a delivery the Zap filtered out (it costs no cache round trip)', async () => {
    const appTester = createAppTester(app);
    const subscribeData = subscription;
    const filtered = { statuses: ['LOTS_SOLD'] };
    await expect(
      appTester(perform, { authData, subscribeData, rawRequest: signedRequest(body), inputData: filtered }, true),
    ).resolves.toEqual([]);
    // The tester keeps its z.cache on itself; its type does not say so.
    const cache: unknown = Reflect.get(appTester, 'zcacheTestObj');
    expect(cache).toEqual({});
    // Had it been marked, a later run with the filter changed would have been dropped.
    await expect(
      appTester(perform, { authData, subscribeData, rawRequest: signedRequest(body), inputData: {} }),
    ).resolves.toHaveLength(1);
  });

  it('remembers runs for longer than the provider retries (about 28 hours)', () => {
    const retriesMs = PROVIDER_RETRY_SCHEDULE_MS.reduce((sum, delay) => sum + delay, 0);
    expect(SEEN_TTL_SECONDS * 1000).toBeGreaterThan(retriesMs);
  });

  it('re-reads a mismatched secret at most once per ten minutes, however many forgeries arrive', async () => {
    const appTester = createAppTester(app);
    const subscribeData = subscription;
    const scope = nock(PROVIDER)
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .once()
      .reply(200, { key: SECRET });
    for (let i = 0; i < 5; i += 1) {
      const forged = await failure(
        appTester(
          perform,
          { authData, subscribeData, rawRequest: signedRequest(body, { secrets: [newSecret()] }) },
          i === 0,
        ),
      );
      expect(forged.code).toBe('DeliveryRefused');
    }
    scope.done();
  });
});
