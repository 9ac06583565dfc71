import nock from 'nock';
import { auctionStatusChangeEventType } from '../../src/svix/eventType';
import { setupEndpointUid } from '../../src/tools/setup/setup';
import { parkedUrlOf, zapScopeOf, zapUidOf } from '../../src/zap/policy';
import { requestSettings } from '../../src/zapier/io';
import { SvixEmulator } from '../../src/tools/sandbox/emulator';
import { SvixClient } from '../../src/tools/setup/client';
import { runSetup } from '../../src/tools/setup/setup';
import { endpointDescription, EVENT_TYPE_ARCHIVED, THROTTLE_RATE } from '../../src/zap/endpoint';
import { APP_ID, ENDPOINT_ID, PROVIDER, SECRET, TARGET_URL, authData, failure } from '../helpers/fixtures';
import { usePlatform } from '../helpers/platform';

const zapier = usePlatform();
const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{32}$/;
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
    // The Zap's first generation, on since now.
    const on = new RegExp(`^\\{"zap":"${scope}","gen":"1","on":"\\d{13}"\\}$`);
    return (
      SECRET_PATTERN.test(secret) &&
      uid === zapUidOf(scope) &&
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
  it("creates the Zap's endpoint with a secret made here, then lists the endpoints to check the pace: two calls", async () => {
    nock.cleanAll();
    const own = { ...endpointOut, uid: zapUidOf(SCOPE), throttleRate: 25, metadata: { zap: SCOPE, gen: '1', on: '1' } };
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBody)
      .reply(201, endpointOut)
      .get(endpointPath)
      .query({ limit: 250 })
      .reply(200, { data: [own], done: true, iterator: null });
    const before = Date.now();
    const subscribed = await subscribe();
    expect(subscribed).toEqual({
      id: ENDPOINT_ID,
      secret: sentSecret,
      checkedAt: expect.any(Number),
      zap: SCOPE,
      on: expect.any(Number),
      gen: 1,
    });
    expect(sentSecret).toMatch(SECRET_PATTERN);
    expect(Reflect.get(Object(subscribed), 'checkedAt')).toBeGreaterThanOrEqual(before);
    expect(Reflect.get(Object(subscribed), 'on')).toBe(Reflect.get(Object(subscribed), 'checkedAt'));
    scope.done();
  });

  it("paces another Zap's endpoint and its own to share 25 a second, until a listing shows them so", async () => {
    nock.cleanAll();
    const zapEndpoint = (id: string, zap: string, throttleRate: number) => ({
      ...{ ...endpointOut, id, uid: zapUidOf(zap), throttleRate },
      metadata: { zap, gen: '1', on: '1' },
    });
    const other = 'ep_3MgMz1gUzcPqGSswxJCDjzQgXIB';
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBody)
      .reply(201, endpointOut)
      .get(endpointPath)
      .query({ limit: 250 })
      .reply(200, { data: [zapEndpoint(other, 'zap-x', 25), zapEndpoint(ENDPOINT_ID, SCOPE, 25)], done: true })
      .patch(`${endpointPath}/${other}`, { throttleRate: 12 })
      .reply(200, zapEndpoint(other, 'zap-x', 12))
      .patch(`${endpointPath}/${ENDPOINT_ID}`, { throttleRate: 12 })
      .reply(200, zapEndpoint(ENDPOINT_ID, SCOPE, 12))
      .get(endpointPath)
      .query({ limit: 250 })
      .reply(200, { data: [zapEndpoint(other, 'zap-x', 12), zapEndpoint(ENDPOINT_ID, SCOPE, 12)], done: true });
    await subscribe();
    scope.done();
  });

  it("points the Zap's endpoint at a new subscription: a new generation, enabled, its secret read", async () => {
    nock.cleanAll();
    const kept = { ...endpointOut, uid: zapUidOf(SCOPE), throttleRate: 25, disabled: true };
    const pointed = (gen: string) => ({ ...kept, disabled: false, metadata: { zap: SCOPE, gen, on: '1700000000000' } });
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBody)
      .reply(409, { code: 'conflict', detail: 'An endpoint with this uid already exists.' })
      .get(`${endpointPath}/${zapUidOf(SCOPE)}`)
      .reply(200, { ...kept, metadata: { zap: SCOPE, gen: '4', on: '1700000000000' } })
      .patch(`${endpointPath}/${ENDPOINT_ID}`, {
        url: TARGET_URL,
        disabled: false,
        description: endpointDescription(),
        metadata: { zap: SCOPE, gen: '5', on: '1700000000000' },
      })
      .reply(200, pointed('5'))
      .get(`${endpointPath}/${ENDPOINT_ID}/secret`)
      .reply(200, { key: SECRET })
      .get(endpointPath)
      .query({ limit: 250 })
      .reply(200, { data: [pointed('5')], done: true });
    await expect(subscribe()).resolves.toEqual(
      expect.objectContaining({ id: ENDPOINT_ID, secret: SECRET, gen: 5, on: 1_700_000_000_000 }),
    );
    scope.done();
  });

  it("leaves the endpoint to a newer subscribe of the Zap that pointed it since (an edit's calls crossing)", async () => {
    nock.cleanAll();
    const kept = { ...endpointOut, uid: zapUidOf(SCOPE), throttleRate: 25 };
    const at = (gen: string, url = TARGET_URL) => ({
      ...kept,
      url,
      metadata: { zap: SCOPE, gen, on: '1700000000000' },
    });
    const newer = at('6', 'https://hooks.zapier.com/hooks/standard/1234567/newer/');
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBody)
      .reply(409, { code: 'conflict', detail: 'An endpoint with this uid already exists.' })
      .get(`${endpointPath}/${zapUidOf(SCOPE)}`)
      .reply(200, at('4'))
      .get(`${endpointPath}/${ENDPOINT_ID}/secret`)
      .reply(200, { key: SECRET })
      .patch(`${endpointPath}/${ENDPOINT_ID}`)
      .reply(200, at('5'))
      // The listing after: a newer subscribe (generation 6) pointed it meanwhile. No PATCH follows.
      .get(endpointPath)
      .query({ limit: 250 })
      .reply(200, { data: [newer], done: true });
    await expect(subscribe()).resolves.toEqual(expect.objectContaining({ gen: 5 }));
    scope.done();
    expect(nock.pendingMocks()).toEqual([]);
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

  it('says whom to show it to when Svix refuses the endpoint for another reason (the event type exists)', async () => {
    const invalidUrl = { detail: [{ loc: ['body', 'url'], msg: 'invalid url', type: 'value_error' }] };
    const scope = nock(PROVIDER)
      .post(endpointPath, endpointBody)
      .reply(422, invalidUrl)
      .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
      .reply(200, eventTypeOut);
    const refused = await failure(subscribe());
    expect(refused.code).toBe('SvixInvalidData');
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
      /^Ask whoever set up your Consumer App to un-archive the AUCTION_STATUS_CHANGE event type/,
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
    [403, { code: 'insufficient access', detail: 'Insufficient access for the given operation.' }, 'SvixForbidden'],
    [400, { code: 'generic_error', detail: 'Generic error' }, 'SvixBadRequest'],
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

  it('derives one uid per Zap: by its id where Zapier names it, else by its target URL', () => {
    const named = zapUidOf(zapScopeOf({ id: 417 }, TARGET_URL));
    expect(zapUidOf(zapScopeOf({ id: 417 }, `${TARGET_URL}x`))).toBe(named);
    expect(zapUidOf(SCOPE)).not.toBe(named);
    expect(zapUidOf(zapScopeOf(undefined, `${TARGET_URL}x`))).not.toBe(zapUidOf(SCOPE));
    expect(named).toMatch(/^zapier-zap-[0-9a-f]{32}$/);
    expect(setupEndpointUid(TARGET_URL)).not.toBe(zapUidOf(SCOPE));
  });
});

describe('performSubscribe within Zapier’s 30-second limit', () => {
  const KEY = 'testsk_slowSvixKey';
  const saved = { ...requestSettings };
  afterEach(() => Object.assign(requestSettings, saved));

  it('shares one budget among its calls: a slow Svix ends it with a plain message, not a time-out of Zapier', async () => {
    // The Zap turned on once, then again: its create is refused (the endpoint exists) and it reads the endpoint,
    // each answer taking 300 ms of a 500 ms budget.
    let slow = false;
    const emulator = new SvixEmulator({ apiKey: KEY, delayMs: () => (slow ? 300 : undefined) });
    const serverUrl = await emulator.start();
    try {
      const { appId } = await runSetup({ client: new SvixClient({ baseUrl: serverUrl, apiKey: KEY }) });
      const authData = { apiKey: KEY, appId, serverUrl };
      await zapier().subscribe({ authData, targetUrl: TARGET_URL, inputData: {} });
      Object.assign(requestSettings, { timeoutMs: 1_000, operationBudgetMs: 500 });
      slow = true;
      const before = emulator.stats().requests;
      const refused = await failure(zapier().subscribe({ authData, targetUrl: TARGET_URL, inputData: {} }));
      expect(refused.code).toBe('SvixUnreachable');
      expect(refused.message).toMatch(/did not answer in time/);
      // The budget stopped it before its second call could answer.
      expect(emulator.stats().requests - before).toBeLessThanOrEqual(2);
    } finally {
      await emulator.stop();
    }
  });
});

describe('performUnsubscribe', () => {
  const stored = { id: ENDPOINT_ID, secret: SECRET, checkedAt: 0, zap: SCOPE, on: 0, gen: 1 };
  const damaged = { id: '../../app', secret: SECRET };

  const zapOwn = (metadata: Record<string, string>) => ({
    ...{ ...endpointOut, uid: zapUidOf(SCOPE), throttleRate: 25 },
    metadata: { zap: SCOPE, gen: '2', on: '1700000000000', ...metadata },
  });

  it('parks the endpoint its subscription pointed, where nothing answers, keeping when', async () => {
    const scope = nock(PROVIDER)
      .get(`${endpointPath}/${ENDPOINT_ID}`)
      .reply(200, zapOwn({}))
      .patch(
        `${endpointPath}/${ENDPOINT_ID}`,
        (body: unknown) =>
          JSON.stringify(Object.keys(Object(body))) === '["url","metadata","description"]' &&
          Reflect.get(Object(body), 'url') === parkedUrlOf(SCOPE) &&
          /^\{"zap":"[^"]+","gen":"2","on":"1700000000000","parked":"\d{13}"\}$/.test(
            JSON.stringify(Reflect.get(Object(body), 'metadata')),
          ),
      )
      .reply(200, zapOwn({ parked: '1' }));
    const subscribeData = { ...stored, gen: 2, zap: SCOPE };
    await expect(zapier().unsubscribe({ authData, targetUrl: TARGET_URL, subscribeData })).resolves.toEqual({
      removed: true,
    });
    scope.done();
  });

  it("changes nothing when the endpoint serves a newer generation (an edit's new version subscribed first)", async () => {
    const scope = nock(PROVIDER)
      .get(`${endpointPath}/${ENDPOINT_ID}`)
      .reply(200, zapOwn({ gen: '3' }));
    const subscribeData = { ...stored, gen: 2, zap: SCOPE };
    await expect(zapier().unsubscribe({ authData, targetUrl: TARGET_URL, subscribeData })).resolves.toEqual({
      removed: false,
    });
    scope.done();
  });

  it('succeeds when the endpoint is already gone (404)', async () => {
    const scope = nock(PROVIDER)
      .get(`${endpointPath}/${ENDPOINT_ID}`)
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

  it("falls back to the Zap's uid when the stored id is missing or malformed, and parks it when at that URL", async () => {
    const scope = nock(PROVIDER)
      .get(`${endpointPath}/${zapUidOf(SCOPE)}`)
      .reply(200, zapOwn({}))
      .patch(`${endpointPath}/${ENDPOINT_ID}`)
      .reply(200, zapOwn({ parked: '1' }));
    await zapier().unsubscribe({ authData, targetUrl: TARGET_URL, subscribeData: damaged });
    scope.done();
  });

  it('says to reconnect when the key was revoked after the Zap was turned on', async () => {
    nock(PROVIDER)
      .get(`${endpointPath}/${ENDPOINT_ID}`)
      .reply(401, { code: 'authentication_failed', detail: 'Invalid token' });
    const refused = await failure(zapier().unsubscribe({ authData, subscribeData: stored }));
    expect(refused.name).toBe('ExpiredAuthError');
    expect(refused.message).toMatch(/^Reconnect your account in Zapier/);
    expect(refused.message).not.toMatch(/What happened|whsec_/);
  });
});
