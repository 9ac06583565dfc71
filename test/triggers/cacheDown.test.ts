import nock from 'nock';
import {
  APP_ID,
  PROVIDER,
  SECRET,
  TARGET_URL,
  authData,
  messageIdAt,
  payload,
  signedRequest,
  subscription,
} from '../helpers/fixtures';
import { usePlatform } from '../helpers/platform';

/**
 * Everything exactly-once rests on z.cache (claims, the shared history of secrets, Skip Outdated Events), which
 * Zapier does not document publicly (README, "Deploying to Zapier"). Here every z.cache call fails, through core's
 * handler and RPC client: a Zap still turns on, and each delivery still runs, at worst twice; nothing is lost, and
 * nothing ends in an error (errors count towards Zapier turning a Zap off).
 */

const zapier = usePlatform({ fault: () => ({ kind: 'error' }) });
const secretPath = `/api/v1/app/${APP_ID}/endpoint/${subscription.id}/secret`;
const body = JSON.stringify(payload);
const deliver = (msgId: string, inputData: Record<string, unknown> = {}) =>
  zapier().perform({
    authData,
    inputData,
    subscribeData: subscription,
    rawRequest: signedRequest(body, { msgId, secrets: [SECRET] }),
  });

beforeEach(() => {
  // With no shared history to look at, a delivery reads the secret from Svix to be sure of it.
  nock(PROVIDER).persist().get(secretPath).reply(200, { key: SECRET });
});

describe('z.cache failing every call', () => {
  it('runs each delivery, a copy of it again at worst, and never fails it', async () => {
    const id = messageIdAt(Date.now() - 60_000);
    const first = await deliver(id);
    const copy = await deliver(id);
    expect(first).toEqual([expect.objectContaining({ id, auctionUuid: payload.auctionUuid })]);
    expect(copy).toEqual([expect.objectContaining({ id })]);
    expect(zapier().calls().length).toBeGreaterThan(0);
  });

  it('runs a delivery with Skip Outdated Events on: no record of the newest is no reason to skip', async () => {
    const id = messageIdAt(Date.now() - 60_000);
    await expect(deliver(id, { skipOutdated: true })).resolves.toEqual([expect.objectContaining({ id })]);
  });

  it('turns a Zap on', async () => {
    const endpointPath = `/api/v1/app/${APP_ID}/endpoint`;
    const made = { id: subscription.id, url: TARGET_URL, metadata: {} };
    nock(PROVIDER)
      .post(endpointPath)
      .reply(201, made)
      .get(endpointPath)
      .query({ limit: 250 })
      .reply(200, { data: [], done: true });
    await expect(zapier().subscribe({ authData, targetUrl: TARGET_URL, inputData: {} })).resolves.toEqual(
      expect.objectContaining({ id: subscription.id }),
    );
  });
});
