import nock from 'nock';
import { createAppTester } from 'zapier-platform-core';
import app from '../../src';
import { operationsFor } from '../../src/triggers/auctionStatusChanged';
import { virtualRuntime } from '../helpers/clock';
import { auctionStatusChangedSample } from '../../src/fields/auctionStatusChanged';
import { THIS_ZAP_DISABLED } from '../../src/zap/endpoint';
import { APP_ID, ENDPOINT_ID, PROVIDER, SECRET, authData, failure, messageIdAt, payload } from '../helpers/fixtures';

const appTester = createAppTester(app);
const { performList } = operationsFor(virtualRuntime());

/** A message of the log: its id carries its creation time, as Svix's do. */
const ids = new Map<string, string>();
const idAt = (timestamp: string): string => {
  const id = ids.get(timestamp) ?? messageIdAt(Date.parse(timestamp));
  ids.set(timestamp, id);
  return id;
};
const message = (_label: string, status: string, timestamp: string) => ({
  id: idAt(timestamp),
  eventType: 'AUCTION_STATUS_CHANGE',
  eventId: null,
  channels: null,
  tags: null,
  payload: { ...payload, status },
  timestamp,
});
const listPath = `/api/v1/app/${APP_ID}/msg`;
const query = { event_types: 'AUCTION_STATUS_CHANGE', limit: '50', with_content: 'true' };

describe('performList (the Zap editor\'s "Test trigger")', () => {
  it('maps recent messages newest first, exactly as perform maps deliveries', async () => {
    const scope = nock(PROVIDER)
      .get(listPath)
      .query(query)
      .reply(200, {
        data: [
          message('newest', 'CLOSED', '2026-11-22T12:00:00.123Z'),
          message('oldest', 'OPEN_FOR_BIDDING', '2026-11-22T09:30:15Z'),
        ],
        iterator: idAt('2026-11-22T09:30:15Z'),
        prevIterator: null,
        done: true,
      });
    const items = await appTester(performList, { authData });
    expect(items).toEqual([
      {
        ...auctionStatusChangedSample,
        id: idAt('2026-11-22T12:00:00.123Z'),
        status: 'CLOSED',
        statusLabel: 'Closed',
        occurredAt: '2026-11-22T12:00:00+00:00',
      },
      { ...auctionStatusChangedSample, id: idAt('2026-11-22T09:30:15Z'), occurredAt: '2026-11-22T09:30:15+00:00' },
    ]);
    scope.done();
  });

  it('returns no event when the message log has none: the built-in sample is never shown as a real event', async () => {
    // Zapier's editor then says it found no auction and offers to skip the test; a skipped test uses the
    // trigger's sample, which Zapier marks as such (check D006, and its guide to sample data).
    const scope = nock(PROVIDER).get(listPath).query(query).reply(200, { data: [], iterator: null, done: true });
    await expect(appTester(performList, { authData })).resolves.toEqual([]);
    scope.done();
  });

  it('returns no event when the filters leave none, rather than an event the Zap would not run for', async () => {
    nock(PROVIDER)
      .get(listPath)
      .query(query)
      .reply(200, { data: [message('only', 'CLOSED', '2026-11-22T12:00:00Z')], iterator: null, done: true });
    await expect(appTester(performList, { authData, inputData: { statuses: ['draft'] } })).resolves.toEqual([]);
  });

  it('applies the filters', async () => {
    nock(PROVIDER)
      .get(listPath)
      .query(query)
      .reply(200, {
        data: [
          message('newest', 'CLOSED', '2026-11-22T12:00:00Z'),
          message('oldest', 'OPEN_FOR_BIDDING', '2026-11-22T09:30:15Z'),
        ],
        iterator: null,
        done: true,
      });
    const items = await appTester(performList, { authData, inputData: { statuses: ['closed'] } });
    expect(items.map((item) => item.status)).toEqual(['CLOSED']);
  });

  it('skips a message that does not decode, and names its field when none does', async () => {
    nock(PROVIDER)
      .get(listPath)
      .query(query)
      .reply(200, {
        data: [
          {
            ...message('newest', 'CLOSED', '2026-11-22T12:00:00Z'),
            payload: { status: 'CLOSED' },
          },
        ],
        iterator: null,
        done: true,
      });
    const refused = await failure(appTester(performList, { authData }));
    expect(refused.message).toMatch(/\bauctionUuid: missing/);
  });

  it("explains an answer that is not Svix's JSON", async () => {
    nock(PROVIDER)
      .get(listPath)
      .query(query)
      .reply(200, '<html>captive portal</html>', { 'Content-Type': 'text/html' });
    const refused = await failure(appTester(performList, { authData }));
    expect(refused.message).toMatch(/Server URL/);
  });

  describe('of a Zap that is on (its subscribe stored its endpoint)', () => {
    const subscribeData = { id: ENDPOINT_ID, secret: SECRET, checkedAt: 0, zap: 'zap', on: 0, gen: 1 };
    const endpointPath = `/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}`;
    const endpoint = (disabled: boolean) => ({ id: ENDPOINT_ID, url: 'https://hooks.zapier.com/x/', disabled });

    it('says, in plain words, that Svix disabled its endpoint and that turning the Zap off and on brings it back', async () => {
      const scope = nock(PROVIDER).get(endpointPath).reply(200, endpoint(true));
      const refused = await failure(appTester(performList, { authData, subscribeData }));
      expect(refused).toMatchObject({ message: THIS_ZAP_DISABLED, code: 'EndpointDisabled' });
      expect(refused.message).toMatch(/^Turn this Zap off and on again so that auction events reach it: Svix disabled/);
      scope.done();
    });

    it('lists as usual when its endpoint is enabled, or gone (turning it on again makes a new one)', async () => {
      for (const [status, body] of [
        [200, endpoint(false)],
        [404, { code: 'not_found', detail: 'Entity not found' }],
      ] as const) {
        const scope = nock(PROVIDER)
          .get(endpointPath)
          .reply(status, body)
          .get(listPath)
          .query(query)
          .reply(200, { data: [], iterator: null, done: true });
        // No events yet: an empty list, not the built-in example dressed as one.
        await expect(appTester(performList, { authData, subscribeData })).resolves.toEqual([]);
        scope.done();
      }
    });
  });
});
