import nock from 'nock';
import { EXTRA_LIMITS } from '../../src/fields/extraFields';
import { eventTimeMs } from '../../src/fields/auctionStatusChanged';
import { ClassNames } from '../../src/models';
import { encodeKsuidMs, timeOfSvixId } from '../../src/svix/ksuid';
import { CLAIM_TTL_SECONDS } from '../../src/delivery/claim';
import { newestKey } from '../../src/triggers/outdated';
import {
  APP_ID,
  MSG_ID,
  MSG_OCCURRED_AT,
  MSG_TIME,
  PROVIDER,
  authData,
  failure,
  messageIdAt,
  payload,
  signedRequest,
  subscription,
} from '../helpers/fixtures';
import { IDENTITY, usePlatform } from '../helpers/platform';
import { CACHE_SCOPE } from '../../src/zapier/io';

/** What the Zap receives: when the event happened, protection from late arrivals, and every field sent. */

/** A key whose next read answers as if it were absent. */
let missNext: string | undefined;
const zapier = usePlatform({
  fault: (call) => {
    if (call.method !== 'zcache_get' || call.key !== missNext) return undefined;
    missNext = undefined;
    return { kind: 'miss' };
  },
});
const listPath = `/api/v1/app/${APP_ID}/msg`;

const deliver = (event: object, options: { msgId?: string; at?: Date } = {}, inputData: object = {}) =>
  zapier().perform({
    authData,
    subscribeData: subscription,
    rawRequest: signedRequest(JSON.stringify(event), options),
    inputData,
  });

const logOf = (messages: Array<{ id: string; event: object; timestamp: string }>) =>
  nock(PROVIDER)
    .get(listPath)
    .query(true)
    .reply(200, {
      data: messages.map(({ id, event, timestamp }) => ({
        id,
        eventType: 'AUCTION_STATUS_CHANGE',
        payload: event,
        timestamp,
      })),
      iterator: null,
      prevIterator: null,
      done: true,
    });

const keysOf = (fields: unknown): unknown[] =>
  Array.isArray(fields)
    ? fields.map((field: unknown) => (typeof field === 'object' && field !== null ? Reflect.get(field, 'key') : field))
    : [fields];

const only = (result: unknown): Record<string, unknown> => {
  if (!Array.isArray(result) || result.length !== 1) throw new Error('expected one item');
  const [item]: unknown[] = result;
  if (typeof item !== 'object' || item === null) throw new Error('expected an item');
  return Object.fromEntries(Object.entries(item));
};

describe('Occurred At: when the event happened, from the message id', () => {
  it("reads the contract's example id to the second (a plain one-second KSUID)", () => {
    const at = timeOfSvixId('msg_1srOrx2ZWZBpBUvZwXKQmoEYga2');
    expect(at === undefined ? undefined : new Date(Math.floor(at / 1000) * 1000).toISOString()).toBe(
      '2021-05-21T20:04:03.000Z',
    );
  });

  it('is the same for the first delivery, a retry signed two hours later, and the Test trigger item', async () => {
    const first = only(await deliver(payload, { at: new Date(MSG_TIME + 5_000) }));
    zapier().platform.clear();
    const retry = only(await deliver(payload, { at: new Date(MSG_TIME + 2 * 3600_000) }));
    const scope = logOf([{ id: MSG_ID, event: payload, timestamp: new Date(MSG_TIME).toISOString() }]);
    const listed = only(await zapier().performList({ authData, inputData: {} }));
    scope.done();
    expect(first.occurredAt).toBe(MSG_OCCURRED_AT);
    expect(retry.occurredAt).toBe(first.occurredAt);
    expect(listed).toEqual(first);
  });

  it.each([
    ['an id that is not a KSUID', 'msg_not-a-ksuid-at-all-00000000', true],
    ['an id of another kind', `ep_${encodeKsuidMs(MSG_TIME, Buffer.alloc(15))}`, true],
    ['an id made after the delivery was signed', messageIdAt(MSG_TIME + 3600_000), true],
    ['an id from before Svix used them', messageIdAt(Date.UTC(2015, 0, 1)), true],
    ['an id made a moment before', messageIdAt(MSG_TIME - 1_000), false],
  ])('falls back to the signing time for %s', (_what, id, fallsBack) => {
    const signedAt = MSG_TIME;
    expect(eventTimeMs(id, signedAt) === signedAt).toBe(fallsBack);
  });
});

describe('Skip Outdated Events', () => {
  const auction = payload.auctionUuid;
  const sold = { ...payload, status: 'LOTS_SOLD' };
  const opened = { ...payload, status: 'OPEN_FOR_BIDDING' };
  const earlier = messageIdAt(MSG_TIME - 60_000);
  const later = messageIdAt(MSG_TIME);

  it.each([[true], ['true'], ['yes'], ['YES']])('when on (%j), skips a late retry of an earlier status', async (on) => {
    await expect(deliver(sold, { msgId: later }, { skipOutdated: on })).resolves.toHaveLength(1);
    await expect(deliver(opened, { msgId: earlier }, { skipOutdated: on })).resolves.toEqual([]);
    // Another auction is not held back.
    await expect(
      deliver({ ...opened, auctionUuid: 'another' }, { msgId: messageIdAt(MSG_TIME - 90_000) }, { skipOutdated: on }),
    ).resolves.toHaveLength(1);
  });

  it('claims an event it skipped as outdated: turned off by an edit, the option does not run it when sent again', async () => {
    // #53.6: 962d0e2 left the skipped event unclaimed, and ran it once the option was off.
    await expect(deliver(sold, { msgId: later }, { skipOutdated: true })).resolves.toHaveLength(1);
    await expect(deliver(opened, { msgId: earlier }, { skipOutdated: true })).resolves.toEqual([]);
    await expect(deliver(opened, { msgId: earlier }, { skipOutdated: false })).resolves.toEqual([]);
  });

  it('runs a redelivered message once, and records its time once', async () => {
    await expect(deliver(sold, { msgId: later }, { skipOutdated: true })).resolves.toHaveLength(1);
    await expect(deliver(sold, { msgId: later }, { skipOutdated: true })).resolves.toEqual([]);
    const key = newestKey(subscription.id, auction);
    const writes = zapier()
      .calls()
      .filter((call) => call.key === key && call.method === 'zcache_set');
    expect(writes).toHaveLength(1);
  });

  it('keeps the newest time per auction with the scope and retention of the exactly-once marks', async () => {
    await deliver(sold, { msgId: later }, { skipOutdated: true });
    const key = newestKey(subscription.id, auction);
    const calls = zapier()
      .calls()
      .filter((call) => call.key === key);
    // Read before the run, read again (a newer one may have been recorded meanwhile), then recorded.
    expect(calls).toEqual([
      expect.objectContaining({ method: 'zcache_get', scope: CACHE_SCOPE }),
      expect.objectContaining({ method: 'zcache_get', scope: CACHE_SCOPE }),
      expect.objectContaining({ method: 'zcache_set', scope: CACHE_SCOPE, ttl: CLAIM_TTL_SECONDS, nx: false }),
    ]);
  });

  it('never moves the newest time back when an overlapping run recorded a newer event first', async () => {
    await expect(deliver(sold, { msgId: later }, { skipOutdated: true })).resolves.toHaveLength(1);
    const key = newestKey(subscription.id, auction);
    // The earlier event's run checked before the newer one was recorded: its first read finds nothing.
    missNext = key;
    await expect(deliver(opened, { msgId: earlier }, { skipOutdated: true })).resolves.toHaveLength(1);
    expect(zapier().platform.peek(IDENTITY, key)).toEqual({ at: timeOfSvixId(later) });
  });

  it.each([[false], ['false'], ['no'], [undefined], ['']])(
    'when off (%j), runs every event and costs nothing extra',
    async (off) => {
      await expect(deliver(sold, { msgId: later }, { skipOutdated: off })).resolves.toHaveLength(1);
      await expect(deliver(opened, { msgId: earlier }, { skipOutdated: off })).resolves.toHaveLength(1);
      expect(
        zapier()
          .calls()
          .filter((call) => call.key.startsWith('newest:')),
      ).toEqual([]);
    },
  );

  it('stops the run, naming the field, when its value cannot be read', async () => {
    const refused = await failure(deliver(sold, { msgId: later }, { skipOutdated: 'maybe' }));
    expect(refused.code).toBe('InvalidFilter');
    expect(refused.message).toMatch(/^Open the Zap, set "Skip Outdated Events" again/);
  });
});

describe('every field the auction service sends', () => {
  const auctioneer = { '@class': ClassNames.AuctioneerApiModel, id: '12345678901234567890', name: 'Harbour Street' };
  const address = {
    '@class': ClassNames.AddressModel,
    addressLine1: '12 Harbour Street',
    addressLine2: 'Old Town',
    postcode: 'YO21 3PU',
    countryCode: 'FR',
  };

  it('decodes a nested published model with its codec and maps it through its field specs', async () => {
    const item = only(await deliver({ ...payload, title: 'Spring Sale', auctioneer, address }));
    expect(item).toMatchObject({
      ...payload,
      title: 'Spring Sale',
      auctioneer__id: '12345678901234567890',
      auctioneer__name: 'Harbour Street',
      address__addressLine1: '12 Harbour Street',
      address__countryCode: 'fr',
      address__city: null,
    });
    expect(item).not.toHaveProperty('auctioneer__@class');
  });

  it('gives a model its default (countryCode uk) and keeps fields the model does not know', async () => {
    const { countryCode: _dropped, ...withoutCountry } = address;
    const item = only(await deliver({ ...payload, address: { ...withoutCountry, floor: 2 } }));
    expect(item).toMatchObject({ address__countryCode: 'uk', address__floor: 2 });
  });

  it('passes a structure that does not decode through as it is, and still runs the Zap', async () => {
    const broken = { '@class': ClassNames.AddressModel, addressLine1: 7 };
    const item = only(await deliver({ ...payload, address: broken }));
    expect(item).toMatchObject({ address__addressLine1: 7 });
    expect(item).not.toHaveProperty('address__countryCode');
  });

  it('flattens any other structure with __, and keeps lists of plain values as lists', async () => {
    const item = only(
      await deliver({ ...payload, lot: { number: 12, tags: ['art', 'oil'], seller: { town: 'Leeds' } } }),
    );
    expect(item).toMatchObject({ lot__number: 12, lot__tags: ['art', 'oil'], lot__seller__town: 'Leeds' });
  });

  it("never lets a payload field overwrite the integration's own fields", async () => {
    const item = only(
      await deliver({ ...payload, id: 'theirs', eventType: 'theirs', occurredAt: 'theirs', statusLabel: 'theirs' }),
    );
    expect(item).toMatchObject({
      id: MSG_ID,
      eventType: 'AUCTION_STATUS_CHANGE',
      occurredAt: MSG_OCCURRED_AT,
      statusLabel: 'Open For Bidding',
      payload__id: 'theirs',
      payload__statusLabel: 'theirs',
    });
  });

  it('stays bounded: nesting 990 deep, 1,000 fields and a megabyte of text', async () => {
    // As deep as the reader follows (docs/guarantees.md, Exact data); deeper is refused in plain words.
    const deep = `${'{"next":'.repeat(990)}"bottom"${'}'.repeat(990)}`;
    const many = Array.from({ length: 1_000 }, (_, index) => `"field${index}":${index}`).join(',');
    const promised = JSON.stringify(payload).slice(1, -1);
    const photos = JSON.stringify(Array.from({ length: 11 }, () => 'p'.repeat(10_000)));
    const body = `{${promised},"deep":${deep},"photos":${photos},"count":7,${many},"big":"${'x'.repeat(1_000_000)}"}`;
    const item = only(
      await zapier().perform({ authData, subscribeData: subscription, rawRequest: signedRequest(body), inputData: {} }),
    );
    expect(item).toMatchObject(payload);
    expect(Object.keys(item).length).toBeLessThanOrEqual(7 + EXTRA_LIMITS.fields);
    expect(JSON.stringify(item).length).toBeLessThan(EXTRA_LIMITS.totalLength + 20_000);
    expect(Object.keys(item).filter((key) => key.startsWith('deep__'))).toEqual([]);
    // A list too long for the text allowance keeps what fits, and fields after it still arrive.
    expect(Array.isArray(item.photos) ? item.photos.length : 0).toBe(EXTRA_LIMITS.totalLength / 10_000);
    expect(item.count).toBe(7);
    expect(item.field0).toBe(0);
  });

  it('keeps __proto__ and constructor out, and the prototype clean', async () => {
    const body = `{"auctioneerUuid":"a","auctionUuid":"b","status":"OPEN","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}`;
    const result = await zapier().perform({
      authData,
      subscribeData: subscription,
      rawRequest: signedRequest(body),
      inputData: {},
    });
    if (!Array.isArray(result) || result.length !== 1) throw new Error('expected one item');
    const [item]: unknown[] = result;
    if (typeof item !== 'object' || item === null) throw new Error('expected an item');
    expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
    expect(Reflect.get(item, 'polluted')).toBeUndefined();
    expect(Object.keys(item)).not.toContain('__proto__');
    expect(Object.keys(item)).not.toContain('constructor');
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('gives Test trigger items the same extra fields as live ones', async () => {
    const event = { ...payload, title: 'Spring Sale', auctioneer };
    const live = only(await deliver(event));
    const scope = logOf([{ id: MSG_ID, event, timestamp: new Date(MSG_TIME).toISOString() }]);
    const listed = only(await zapier().performList({ authData, inputData: {} }));
    scope.done();
    expect(listed).toEqual(live);
  });

  it('labels the extra fields seen in the recent message log for the Zap editor', async () => {
    const scope = logOf([
      {
        id: MSG_ID,
        event: {
          ...payload,
          lotTitle: 'Spring Sale',
          auctioneer,
          id: 'x',
          lots: 12,
          reserveMet: true,
          tags: ['a', 'b'],
        },
        timestamp: new Date(MSG_TIME).toISOString(),
      },
    ]);
    const fields = await zapier().invoke('triggers.auction_status_changed.operation.outputFields', {
      authData,
      inputData: {},
    });
    scope.done();
    expect(fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: 'lotTitle', label: 'Lot Title', type: 'string' }),
        expect.objectContaining({ key: 'lots', label: 'Lots', type: 'number' }),
        expect.objectContaining({ key: 'reserveMet', label: 'Reserve Met', type: 'boolean' }),
        expect.objectContaining({ key: 'tags', label: 'Tags', list: true }),
        expect.objectContaining({ key: 'auctioneer__name', label: 'Auctioneer Name' }),
        expect.objectContaining({ key: 'payload__id', label: 'Payload ID' }),
        expect.objectContaining({ key: 'occurredAt', label: 'Occurred At' }),
      ]),
    );
  });

  it('gives the editor no extra fields, and no error, when the message log cannot be read', async () => {
    nock(PROVIDER).get(listPath).query(true).reply(500, {});
    const fields = await zapier().invoke('triggers.auction_status_changed.operation.outputFields', {
      authData,
      inputData: {},
    });
    expect(keysOf(fields)).toEqual([
      'id',
      'auctionUuid',
      'auctioneerUuid',
      'status',
      'statusLabel',
      'eventType',
      'occurredAt',
    ]);
  });
});
