import nock from 'nock';
import { createAppTester } from 'zapier-platform-core';
import app from '../../src';
import { auctionStatusChangedOperations } from '../../src/triggers/auctionStatusChanged';
import {
  APP_ID,
  ENDPOINT_ID,
  MSG_ID,
  PROVIDER,
  SECRET,
  authData,
  failure,
  newSecret,
  payload,
  signedRequest,
  subscription,
} from '../helpers/fixtures';

const appTester = createAppTester(app);
const perform = auctionStatusChangedOperations.perform;
const subscribeData = subscription;
const body = JSON.stringify(payload);

const run = (
  rawRequest: { content: string; headers: Record<string, string> },
  inputData: Record<string, unknown> = {},
) => appTester(perform, { authData, subscribeData, rawRequest, cleanedRequest: payload, inputData }, true);

describe('perform (a live delivery)', () => {
  it("verifies, decodes and maps a delivery signed by the provider's reference library", async () => {
    const at = new Date(Date.UTC(2026, 10, 22, 9, 30, 15));
    jest.useFakeTimers({
      now: at.getTime() + 2000,
      doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'setInterval', 'queueMicrotask'],
    });
    try {
      await expect(run(signedRequest(body, { at }))).resolves.toEqual([
        {
          id: MSG_ID,
          auctionUuid: payload.auctionUuid,
          auctioneerUuid: payload.auctioneerUuid,
          status: 'OPEN_FOR_BIDDING',
          statusLabel: 'Open For Bidding',
          eventType: 'AUCTION_STATUS_CHANGE',
          occurredAt: '2026-11-22T09:30:15+00:00',
        },
      ]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('accepts white-labelled Http-Webhook-* headers', async () => {
    await expect(run(signedRequest(body, { headerPrefix: 'Http-Webhook' }))).resolves.toHaveLength(1);
  });

  it('accepts any one of several v1 signatures (during a secret rotation)', async () => {
    await expect(run(signedRequest(body, { secrets: [newSecret(), SECRET] }))).resolves.toHaveLength(1);
  });

  it('refuses a delivery signed with another secret, after re-reading the endpoint secret once', async () => {
    const scope = nock(PROVIDER)
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .once()
      .reply(200, { key: SECRET });
    const refused = await failure(run(signedRequest(body, { secrets: [newSecret()] })));
    expect(refused.code).toBe('DeliveryRefused');
    expect(refused.message).toMatch(/did not come from your Consumer App, so the Zap did not run/);
    scope.done();
  });

  it('runs a delivery signed with a rotated secret that the stored one no longer matches', async () => {
    const rotated = newSecret();
    const scope = nock(PROVIDER)
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .reply(200, { key: rotated });
    await expect(run(signedRequest(body, { secrets: [rotated] }))).resolves.toHaveLength(1);
    scope.done();
  });

  it('makes no provider request when the stored secret verifies', async () => {
    // The network is closed and nothing is mocked: any request would fail this run.
    await expect(run(signedRequest(body))).resolves.toHaveLength(1);
  });

  it.each([
    [
      'a body changed after signing',
      (r: ReturnType<typeof signedRequest>) => ({ ...r, content: r.content.replace('OPEN', 'SHUT') }),
    ],
    ['no signature header', (r: ReturnType<typeof signedRequest>) => ({ ...r, headers: { 'Http-Svix-Id': MSG_ID } })],
  ])('refuses %s', async (_what, tamper) => {
    nock(PROVIDER).get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`).optionally().reply(200, { key: SECRET });
    const refused = await failure(run(tamper(signedRequest(body))));
    expect(refused.code).toBe('DeliveryRefused');
  });

  it('refuses deliveries signed more than five minutes ago or ahead', async () => {
    const old = await failure(run(signedRequest(body, { at: new Date(Date.now() - 6 * 60_000) })));
    expect(old.message).toMatch(/more than 5 minutes ago/);
    const ahead = await failure(run(signedRequest(body, { at: new Date(Date.now() + 6 * 60_000) })));
    expect(ahead.message).toMatch(/in the future/);
  });

  it('names the field of a payload that does not decode, never its value', async () => {
    const bad = JSON.stringify({ ...payload, status: 42, auctionUuid: undefined, extra: 'SECRET-VALUE-123' });
    const refused = await failure(run(signedRequest(bad)));
    expect(refused.code).toBe('InvalidPayload');
    expect(refused.message).toMatch(/AuctionStatusChange\.status/);
    expect(refused.message).toMatch(/AuctionStatusChange\.auctionUuid/);
    expect(refused.message).not.toContain('42');
    expect(refused.message).not.toContain('SECRET-VALUE-123');
  });

  it('reports a body that is not JSON in plain words', async () => {
    const refused = await failure(run(signedRequest('<html>not json</html>')));
    expect(refused.message).toMatch(/body is not JSON/);
  });

  it('applies the statuses filter case-insensitively', async () => {
    await expect(run(signedRequest(body), { statuses: ['open_for_bidding'] })).resolves.toHaveLength(1);
    await expect(run(signedRequest(body), { statuses: ['Open For Bidding', 'CLOSED'] })).resolves.toHaveLength(1);
    await expect(run(signedRequest(body), { statuses: ['CLOSED'] })).resolves.toEqual([]);
  });

  it('applies the auctioneer filter', async () => {
    await expect(
      run(signedRequest(body), { auctioneerUuid: payload.auctioneerUuid.toUpperCase() }),
    ).resolves.toHaveLength(1);
    await expect(run(signedRequest(body), { auctioneerUuid: '11111111-2222-3333-4444-555555555555' })).resolves.toEqual(
      [],
    );
  });

  it('asks to turn the Zap off and on when the subscription data is missing', async () => {
    const refused = await failure(appTester(perform, { authData, rawRequest: signedRequest(body) }));
    expect(refused.message).toMatch(/Turn the Zap off and on again/);
  });
});
