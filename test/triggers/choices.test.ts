import nock from 'nock';
import { createAppTester } from 'zapier-platform-core';
import app from '../../src';
import { auctionStatusChanged } from '../../src/triggers/auctionStatusChanged';
import { virtualRuntime } from '../helpers/clock';
import { shortTime } from '../../src/fields/auctionStatusChanged';
import { choiceOperations, recentAuctioneers, recentStatuses } from '../../src/triggers/choices';
import { APP_ID, PROVIDER, authData, messageIdAt } from '../helpers/fixtures';

/** The dropdowns of Auction Status Changed, fed by the Consumer App's recent events. */

const appTester = createAppTester(app);
const listPath = `/api/v1/app/${APP_ID}/msg`;
const query = { event_types: 'AUCTION_STATUS_CHANGE', limit: '250', with_content: 'true' };
const HARBOUR = '0e7c2f44-3b8e-4f6d-a1d2-9c5b8e7a4f20';
const NORTHGATE = '7d1e9a02-55c4-4b8e-9f10-3a2b6c8d4e11';

const message = (auctioneerUuid: string, status: string, timestamp: string, eventType = 'AUCTION_STATUS_CHANGE') => ({
  id: messageIdAt(Date.parse(timestamp)),
  eventType,
  payload: { auctioneerUuid, auctionUuid: '5b0f1c1e-8d2a-4c59-9a37-2f1f7e0b6c11', status },
  timestamp,
});

const log = (data: unknown[]) =>
  nock(PROVIDER).get(listPath).query(query).reply(200, { data, iterator: null, prevIterator: null, done: true });

describe('the statuses dropdown', () => {
  it('offers each status seen recently once, newest first, labelled for a person', async () => {
    const scope = log([
      message(HARBOUR, 'LOTS_SOLD', '2026-11-22T12:00:00Z'),
      message(NORTHGATE, 'OPEN_FOR_BIDDING', '2026-11-22T11:00:00Z'),
      // The same status written another way is the same choice.
      message(HARBOUR, 'open for bidding', '2026-11-22T10:00:00Z'),
      message(HARBOUR, 'DRAFT', '2026-11-22T09:00:00Z'),
      // Not decodable (no status): skipped, not fatal.
      { ...message(HARBOUR, 'x', '2026-11-22T08:00:00Z'), payload: { auctioneerUuid: HARBOUR } },
    ]);
    await expect(appTester(choiceOperations.listStatuses, { authData })).resolves.toEqual([
      { id: 'LOTS_SOLD', name: 'Lots Sold (LOTS_SOLD)' },
      { id: 'OPEN_FOR_BIDDING', name: 'Open For Bidding (OPEN_FOR_BIDDING)' },
      { id: 'DRAFT', name: 'Draft (DRAFT)' },
    ]);
    scope.done();
  });

  it('is empty, not an error, when the Consumer App has no events yet', async () => {
    log([]);
    await expect(appTester(choiceOperations.listStatuses, { authData })).resolves.toEqual([]);
  });

  it("is what the trigger's statuses field offers, with free text still allowed", () => {
    const fields = auctionStatusChanged(virtualRuntime()).operation.inputFields ?? [];
    const statuses = fields.find((field) => typeof field === 'object' && 'key' in field && field.key === 'statuses');
    expect(statuses).toMatchObject({ dynamic: 'recent_statuses.id.name', list: true });
    // A static `choices` list would refuse statuses not seen yet.
    expect(statuses).not.toHaveProperty('choices');
    expect(recentStatuses.display.hidden).toBe(true);
  });
});

describe('the auctioneers dropdown', () => {
  it('offers each auctioneer seen recently once, with when they were last seen, saying when no name was sent', async () => {
    log([
      message(NORTHGATE, 'LOTS_SOLD', '2026-11-22T12:05:00Z'),
      message(HARBOUR, 'OPEN_FOR_BIDDING', '2026-11-22T11:00:00Z'),
      message(NORTHGATE.toUpperCase(), 'DRAFT', '2026-11-21T09:00:00Z'),
      message(HARBOUR, 'DRAFT', '2026-11-20T09:00:00Z', 'SOMETHING_ELSE'),
    ]);
    await expect(appTester(choiceOperations.listAuctioneers, { authData })).resolves.toEqual([
      { id: NORTHGATE, name: `${NORTHGATE} (no name sent, last event 22 Nov 2026, 12:05 UTC)` },
      { id: HARBOUR, name: `${HARBOUR} (no name sent, last event 22 Nov 2026, 11:00 UTC)` },
    ]);
  });

  it('names an auctioneer when a recent event carries the name (the published auctioneer model), and shows the UUID otherwise', async () => {
    const named = message(HARBOUR, 'LOTS_SOLD', '2026-11-22T12:00:00Z');
    const older = message(HARBOUR, 'DRAFT', '2026-11-21T12:00:00Z');
    log([
      named,
      message(NORTHGATE, 'OPEN_FOR_BIDDING', '2026-11-22T11:00:00Z'),
      {
        ...older,
        payload: {
          ...older.payload,
          auctioneer: {
            '@class': 'com.vendor.scaffold.models.auctionapi.AuctioneerApiModel',
            id: 42,
            name: 'Harbour Street Auctions',
          },
        },
      },
    ]);
    await expect(appTester(choiceOperations.listAuctioneers, { authData })).resolves.toEqual([
      { id: HARBOUR, name: 'Harbour Street Auctions (0e7c2f44…, last event 22 Nov 2026, 12:00 UTC)' },
      { id: NORTHGATE, name: `${NORTHGATE} (no name sent, last event 22 Nov 2026, 11:00 UTC)` },
    ]);
  });

  it('names an auctioneer from a plain auctioneerName the service may send too, the newest name winning', async () => {
    const renamed = message(HARBOUR, 'LOTS_SOLD', '2026-11-22T12:00:00Z');
    const earlier = message(HARBOUR, 'DRAFT', '2026-11-21T12:00:00Z');
    log([
      { ...renamed, payload: { ...renamed.payload, auctioneerName: ' Harbour & Sons ' } },
      { ...earlier, payload: { ...earlier.payload, auctioneerName: 'Harbour Street Auctions' } },
    ]);
    await expect(appTester(choiceOperations.listAuctioneers, { authData })).resolves.toEqual([
      { id: HARBOUR, name: 'Harbour & Sons (0e7c2f44…, last event 22 Nov 2026, 12:00 UTC)' },
    ]);
  });

  it("is what the trigger's auctioneer field offers", () => {
    const fields = auctionStatusChanged(virtualRuntime()).operation.inputFields ?? [];
    const auctioneer = fields.find(
      (field) => typeof field === 'object' && 'key' in field && field.key === 'auctioneerUuid',
    );
    expect(auctioneer).toMatchObject({ dynamic: 'recent_auctioneers.id.name' });
    expect(recentAuctioneers.display.hidden).toBe(true);
    // Nobody is asked to type an ID (requirements §4.2.1, check D004); the help says where a bare UUID leads.
    const help = typeof auctioneer === 'object' && 'helpText' in auctioneer ? String(auctioneer.helpText) : '';
    expect(help).not.toMatch(/paste|type/i);
    expect(help).toMatch(/by name where the auction service sends one, otherwise by UUID/);
    expect(help).toMatch(/ask the auction service's support team whose it is/);
  });

  it('writes times briefly, in UTC', () => {
    expect(shortTime('2026-01-05T07:04:00+00:00')).toBe('5 Jan 2026, 07:04 UTC');
    expect(shortTime('not a time')).toBe('not a time');
  });
});
