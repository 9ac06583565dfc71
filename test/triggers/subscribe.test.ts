import nock from 'nock';
import { createAppTester } from 'zapier-platform-core';
import app from '../../src';
import { auctionStatusChangeEventType } from '../../src/svix/eventType';
import { endpointUid } from '../../src/svix/ids';
import { timeOfProviderId } from '../../src/svix/ksuid';
import { registryKey, zapScopeOf } from '../../src/zap/policy';
import { requestSettings } from '../../src/zapier/io';
import { ProviderEmulator } from '../../src/tools/sandbox/emulator';
import { ProviderClient } from '../../src/tools/setup/client';
import { runSetup } from '../../src/tools/setup/setup';
import { endpointDescription, EVENT_TYPE_ARCHIVED, THROTTLE_RATE } from '../../src/zap/endpoint';
import { operationsFor } from '../../src/triggers/auctionStatusChanged';
import { virtualRuntime } from '../helpers/clock';
import { APP_ID, ENDPOINT_ID, PROVIDER, SECRET, TARGET_URL, authData, failure } from '../helpers/fixtures';
import { IDENTITY, usePlatform } from '../helpers/platform';

const zapier = usePlatform();
const UID = endpointUid('zapier', TARGET_URL);
const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{32}$/;
/** Each subscription's endpoint has a uid of its own. */
const UID_PATTERN = /^zapier-[0-9a-f]{30}$/;
/** No Zap named: the Zap's scope is its target URL's. */
const SCOPE = zapScopeOf(undefined, TARGET_URL);

const endpointOut = {
  id: ENDPOINT_ID,
  url: TARGET_URL,
  uid: 'zapier-0123456789abcdef0123456789abcd',
  description: endpointDescription(),
  eventTypes: ['AUCTION_STATUS_CHANGE'],
  disabled: false,
  metadata: {},
  createdAt: '2026-11-22T10:00:00Z',
  updatedAt: '2026-11-22T10:00:00Z',
};
const eventTypeOut = {
  ...auctionStatusChangeEventType,
  deprecated: false,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
};

/** The secret the subscribe sent with its create call. */
let sentSecret: string | undefined;
/** The exact body of the create call: a uid of its own, paced at 25 a second (alone in the Consumer App) unless the
 * plan refused it, described and labelled by the Zap. */
const endpointBodyOf =
  ({ paced = true, description = endpointDescription(), scope = SCOPE } = {}) =>
  (body: unknown): boolean => {
    if (typeof body !== 'object' || body === null || !('secret' in body) || typeof body.secret !== 'string')
      return false;
    if (!('uid' in body) || typeof body.uid !== 'string' || !('metadata' in body)) return false;
    sentSecret = body.secret;
    const { secret, uid, metadata, ...rest } = body;
    // Since when the Zap runs events: its first turning on, now.
    const on = new RegExp(`^\\{"zap":"${scope}","on":"\\d{13}"\\}$`);
    return (
      SECRET_PATTERN.test(secret) &&
      UID_PATTERN.test(uid) &&
      on.test(JSON.stringify(metadata)) &&
      JSON.stringify(rest) ===
        JSON.stringify({
          url: TARGET_URL,
          description,
          eventTypes: ['AUCTION_STATUS_CHANGE'],
          ...(paced ? { throttleRate: THROTTLE_RATE } : {}),
        })
    );
  };
const endpointBody = endpointBodyOf();
const endpointPath = `/api/v1/app/${APP_ID}/endpoint`;
const subscribe = () => zapier().subscribe({ authData, targetUrl: TARGET_URL, inputData: {} });
/** What the app itself wrote to the log (not core's record of each request, which holds the request bodies). */
const appLog = (): string =>
  JSON.stringify(zapier().platform.logLines.filter((line) => JSON.stringify(line).includes('"log_type":"console"')));

beforeEach(() => {
  sentSecret = undefined;
  // No endpoint in the Consumer App yet: what the subscribe lists when z.cache holds none (zap/life.ts).
  nock(PROVIDER).persist().get(endpointPath).query({ limit: 250 }).reply(200, { data: [], done: true, iterator: null });
});

describe('performSubscribe', () => {
  it('creates the endpoint with a secret made here, in one provider call, and keeps what deliveries need', async () => {
    // What the connection test leaves in z.cache: the Consumer App has no endpoint of this integration yet.
    zapier().platform.poke(IDENTITY, registryKey({ appId: APP_ID, baseUrl: PROVIDER }), { endpoints: [] });
    nock.cleanAll();
    const scope = nock(PROVIDER).post(endpointPath, endpointBody).reply(201, endpointOut);
    const before = Date.now();
    const subscribed = await subscribe();
    expect(subscribed).toEqual({
      id: ENDPOINT_ID,
      secret: sentSecret,
      checkedAt: expect.any(Number),
      zap: SCOPE,
      // The earlier of now and when Svix made the endpoint (its id; this one's is from long before).
      on: timeOfProviderId(ENDPOINT_ID),
      cacheHonoursNx: true,
    });
    expect(sentSecret).toMatch(SECRET_PATTERN);
    expect(JSON.stringify(subscribed)).toMatch(/"checkedAt":\d+/);
    expect(Reflect.get(Object(subscribed), 'checkedAt')).toBeGreaterThanOrEqual(before);
    scope.done();
  });

  it('lists the Consumer App’s endpoints first when z.cache knows none of them, and keeps them there', async () => {
    nock.cleanAll();
    const other = {
      ...endpointOut,
      id: 'ep_3MgMz1gUzcPqGSswxJCDjzQgXIB',
      throttleRate: 25,
      metadata: { zap: 'zap-x' },
    };
    const scope = nock(PROVIDER)
      .get(endpointPath)
      .query({ limit: 250 })
      .reply(200, { data: [other], done: true, iterator: null })
      .post(endpointPath, (body: unknown) => JSON.stringify(body).includes('"throttleRate":12'))
      .reply(201, endpointOut)
      .patch(`${endpointPath}/${other.id}`, { throttleRate: 12 })
      .reply(200, other);
    await subscribe();
    scope.done();
    expect(zapier().platform.peek(IDENTITY, registryKey({ appId: APP_ID, baseUrl: PROVIDER }))).toEqual({
      endpoints: [
        { id: other.id, zap: 'zap-x', rate: 12 },
        { id: ENDPOINT_ID, zap: SCOPE, rate: 12 },
      ],
    });
  });

  it("records that the local tester's cache ignores nx", async () => {
    nock(PROVIDER).post(endpointPath, endpointBody).reply(201, endpointOut);
    const tester = createAppTester(app);
    await expect(
      tester(operationsFor(virtualRuntime()).performSubscribe, { authData, targetUrl: TARGET_URL, inputData: {} }),
    ).resolves.toEqual(expect.objectContaining({ cacheHonoursNx: false }));
  });

  it('registers the event type exactly as the published interface gives it when the endpoint is refused for lack of it', async () => {
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBody)
      .reply(422, { detail: [{ loc: ['body', 'eventTypes', '0'], msg: 'Unknown event type', type: 'value_error' }] })
      .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
      .reply(404, { code: 'not_found', detail: 'Entity not found' })
      .post('/api/v1/event-type', {
        name: 'AUCTION_STATUS_CHANGE',
        description: auctionStatusChangeEventType.description,
        archived: false,
        schemas: {
          '1': {
            description: auctionStatusChangeEventType.schemas['1'].description,
            title: 'Auction Status Change',
            type: 'object',
            properties: {
              auctioneerUuid: { type: 'string', description: 'UUID of the auctioneer the auction belongs to.' },
              auctionUuid: { type: 'string', description: 'UUID of the auction.' },
              status: { type: 'string', description: "The auction's new status (its registration status)." },
            },
            required: ['auctionUuid', 'auctioneerUuid', 'status'],
          },
        },
      })
      .reply(201, eventTypeOut)
      .post(endpointPath, endpointBody)
      .reply(201, endpointOut);
    await expect(subscribe()).resolves.toEqual(expect.objectContaining({ id: ENDPOINT_ID }));
    scope.done();
  });

  it.each([
    ['reading it', 403, 404],
    ['registering it', 404, 403],
  ])(
    'says whom to ask when the event type is missing and this key may not register it (403 %s)',
    async (_what, readStatus, registerStatus) => {
      const scope = nock(PROVIDER)
        .post(endpointPath, endpointBody)
        .reply(422, { detail: [{ loc: ['body', 'eventTypes', '0'], msg: 'Unknown event type', type: 'value_error' }] })
        .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
        .reply(readStatus, { code: 'x', detail: 'x' });
      if (readStatus === 404)
        scope.post('/api/v1/event-type').reply(registerStatus, { code: 'forbidden', detail: 'x' });
      const refused = await failure(subscribe());
      expect(refused.code).toBe('EventTypeMissing');
      expect(refused.message).toMatch(
        /^Ask whoever set up your Consumer App to register the AUCTION_STATUS_CHANGE event type in Svix/,
      );
      expect(refused.message).not.toMatch(/npm|terminal/i);
      scope.done();
    },
  );

  it('says whom to show it to when the provider refuses the endpoint for another reason (the event type exists)', async () => {
    const invalidUrl = { detail: [{ loc: ['body', 'url'], msg: 'invalid url', type: 'value_error' }] };
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBody)
      .reply(422, invalidUrl)
      .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
      .reply(200, eventTypeOut);
    const refused = await failure(subscribe());
    expect(refused.code).toBe('ProviderInvalidData');
    // The field Svix names (url: Zapier's address for the Zap) is for the log: nobody typed it.
    expect(refused.message).toMatch(/^Show this to whoever set up your Consumer App in Svix: Svix did not accept/);
    expect(refused.message).not.toMatch(/\burl\b/);
    scope.done();
    expect(appLog()).not.toMatch(/throttl|pacing/i);
  });

  // Svix's server refuses an endpoint naming an archived event type with 422 on eventTypes, while reading the
  // type answers 200 with archived: true (endpoint/crud.rs validate_event_types; event_type.rs).
  const archivedRefusal = {
    detail: [
      {
        loc: ['body', 'eventTypes'],
        msg: "The following event types don't exist: AUCTION_STATUS_CHANGE",
        type: 'value_error',
      },
    ],
  };

  it('un-archives an archived event type (PATCH of archived alone) and makes the endpoint, blaming no pacing', async () => {
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBody)
      .reply(422, archivedRefusal)
      .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
      .reply(200, { ...eventTypeOut, archived: true })
      .patch('/api/v1/event-type/AUCTION_STATUS_CHANGE', { archived: false })
      .reply(200, eventTypeOut)
      .post(endpointPath, endpointBody)
      .reply(201, endpointOut);
    await expect(subscribe()).resolves.toEqual(expect.objectContaining({ id: ENDPOINT_ID }));
    scope.done();
    expect(appLog()).toContain('Un-archived the AUCTION_STATUS_CHANGE event type');
    expect(appLog()).not.toMatch(/throttl|pacing/i);
  });

  it('says who does what when the event type is archived and this key may not un-archive it (403)', async () => {
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBody)
      .reply(422, archivedRefusal)
      .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
      .reply(200, { ...eventTypeOut, archived: true })
      .patch('/api/v1/event-type/AUCTION_STATUS_CHANGE', { archived: false })
      .reply(403, { code: 'insufficient access', detail: 'Insufficient access for the given operation.' });
    const refused = await failure(subscribe());
    expect(refused.code).toBe('EventTypeArchived');
    expect(refused.message).toBe(EVENT_TYPE_ARCHIVED);
    expect(refused.message).toMatch(
      /^Ask whoever owns your Svix account to un-archive the AUCTION_STATUS_CHANGE event type/,
    );
    expect(refused.message.length).toBeLessThanOrEqual(250);
    scope.done();
  });

  it('makes the endpoint without pacing only when Svix refuses the throttleRate field itself (422 naming it), and logs that', async () => {
    // No source says a plan refuses throttleRate; should one, this is the answer it would give.
    const body = { detail: [{ loc: ['body', 'throttleRate'], msg: 'not available', type: 'value_error' }] };
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBody)
      .reply(422, body)
      .post(endpointPath, endpointBodyOf({ paced: false }))
      .reply(201, endpointOut);
    await expect(subscribe()).resolves.toEqual(expect.objectContaining({ id: ENDPOINT_ID }));
    scope.done();
    expect(JSON.stringify(zapier().platform.logLines)).toContain(`throttleRate ${THROTTLE_RATE} (422)`);
  });

  it.each([
    [403, { code: 'insufficient access', detail: 'Insufficient access for the given operation.' }, 'ProviderForbidden'],
    [400, { code: 'generic_error', detail: 'Generic error' }, 'ProviderBadRequest'],
  ])('says what Svix refused (%d) at once, without trying again unpaced', async (status, body, code) => {
    const scope = nock(PROVIDER).post(endpointPath, endpointBody).reply(status, body);
    expect((await failure(subscribe())).code).toBe(code);
    scope.done();
    expect(appLog()).not.toMatch(/throttl|pacing/i);
  });

  it("names the Zap in the endpoint, as Svix's dashboard shows it, when Zapier gives its name or id", async () => {
    const named = endpointDescription({ id: 417, name: 'Email "new" lots' });
    expect(named).toMatch(/^Zapier: Auction Status Changed \(Zap "Email 'new' lots"\)\./);
    expect(endpointDescription({ id: 417 })).toMatch(/^Zapier: Auction Status Changed \(Zap 417\)\./);
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBodyOf({ description: named, scope: zapScopeOf({ id: 417 }, TARGET_URL) }))
      .reply(201, endpointOut);
    const meta = { zap: { id: 417, name: 'Email "new" lots' } };
    await zapier().subscribe({ authData, targetUrl: TARGET_URL, inputData: {}, meta });
    scope.done();
  });

  it('derives the same uid for the same target URL and another for another (the uid an unsubscribe falls back to)', () => {
    expect(endpointUid('zapier', TARGET_URL)).toBe(UID);
    expect(endpointUid('zapier', `${TARGET_URL}x`)).not.toBe(UID);
    expect(endpointUid('setup', TARGET_URL)).not.toBe(UID);
    expect(UID).toMatch(/^[a-zA-Z0-9\-_.]{1,256}$/);
  });
});

describe('performSubscribe within Zapier’s 30-second limit', () => {
  const KEY = 'testsk_slowProviderKey';
  const saved = { ...requestSettings };
  afterEach(() => Object.assign(requestSettings, saved));

  it('shares one budget among its calls: a slow provider ends it with a plain message, not a time-out of Zapier', async () => {
    // z.cache knows no endpoint yet, so the subscribe lists them, then creates its own: each answer takes 200 ms of a
    // 300 ms budget.
    const emulator = new ProviderEmulator({ apiKey: KEY, delayMs: () => 200 });
    const serverUrl = await emulator.start();
    try {
      const { appId } = await runSetup({ client: new ProviderClient({ baseUrl: serverUrl, apiKey: KEY }) });
      Object.assign(requestSettings, { timeoutMs: 1_000, operationBudgetMs: 300 });
      const before = emulator.stats().requests;
      const authData = { apiKey: KEY, appId, serverUrl };
      const refused = await failure(zapier().subscribe({ authData, targetUrl: TARGET_URL, inputData: {} }));
      expect(refused.code).toBe('ProviderUnreachable');
      expect(refused.message).toMatch(/did not answer in time/);
      // The budget stopped it before its second call could answer.
      expect(emulator.stats().requests - before).toBeLessThanOrEqual(2);
    } finally {
      await emulator.stop();
    }
  });
});

describe('performUnsubscribe', () => {
  const stored = { id: ENDPOINT_ID, secret: SECRET };
  const damaged = { id: '../../app', secret: SECRET };

  it('deletes the endpoint the subscribe created', async () => {
    const scope = nock(PROVIDER).delete(`${endpointPath}/${ENDPOINT_ID}`).reply(204);
    await expect(zapier().unsubscribe({ authData, targetUrl: TARGET_URL, subscribeData: stored })).resolves.toEqual({
      removed: true,
    });
    scope.done();
  });

  it('succeeds when the endpoint is already gone (404)', async () => {
    const scope = nock(PROVIDER)
      .delete(`${endpointPath}/${ENDPOINT_ID}`)
      .reply(404, { code: 'not_found', detail: 'Entity not found' });
    await expect(zapier().unsubscribe({ authData, subscribeData: stored })).resolves.toEqual({ removed: false });
    scope.done();
  });

  it('with neither a stored id nor a target URL, removes nothing and calls nothing', async () => {
    await expect(zapier().unsubscribe({ authData, subscribeData: damaged })).resolves.toEqual({ removed: false });
  });

  it('refuses to turn a Zap on without an address to send events to, and calls nothing', async () => {
    const refused = await failure(zapier().subscribe({ authData, inputData: {} }));
    expect(refused).toMatchObject({ code: 'MissingTargetUrl' });
  });

  it('falls back to the uid of the target URL when the stored id is missing or malformed', async () => {
    const scope = nock(PROVIDER).delete(`${endpointPath}/${UID}`).reply(204);
    await zapier().unsubscribe({ authData, targetUrl: TARGET_URL, subscribeData: damaged });
    scope.done();
  });

  it('says to reconnect when the key was revoked after the Zap was turned on', async () => {
    nock(PROVIDER)
      .delete(`${endpointPath}/${ENDPOINT_ID}`)
      .reply(401, { code: 'authentication_failed', detail: 'Invalid token' });
    const refused = await failure(zapier().unsubscribe({ authData, subscribeData: stored }));
    expect(refused.name).toBe('ExpiredAuthError');
    expect(refused.message).toMatch(/^Reconnect your account in Zapier/);
    expect(refused.message).not.toMatch(/What happened|whsec_/);
  });
});
