import { createServer } from 'node:http';
import { MessageAttemptTriggerType, MessageStatus, Svix, Webhook } from 'svix';
import { SvixEmulator, type EmulatorOptions } from '../../src/tools/sandbox/emulator';
import { listenOnLoopback } from '../../src/tools/sandbox/net';
import { auctionStatusChangeEventType, EVENT_TYPE_NAME } from '../../src/svix/eventType';
import { timeOfSvixId } from '../../src/svix/ksuid';
import { startReceiver, stringHeaders, type Received, type Receiver } from '../helpers/receiver';
import {
  apiError,
  recordingFetch,
  schemaErrors,
  schemaFor,
  schemaMismatches,
  type Recorded,
} from '../helpers/svixSchemas';

/**
 * The Svix emulator, driven by Svix's own JS SDK as its client.
 * Every answer the SDK receives is also checked against Svix's
 * response schemas, and every delivery is checked with the SDK's verifier.
 */

const KEY = 'testsk_emulatorContract.eu';

let emulator: SvixEmulator;
let svix: Svix;
let recorded: Recorded[];
const receivers: Receiver[] = [];

const start = async (options: Partial<EmulatorOptions> = {}): Promise<string> => {
  emulator = new SvixEmulator({ apiKey: KEY, retryScheduleMs: [5, 5, 5], ...options });
  const url = await emulator.start();
  recorded = [];
  // The SDK's fetch records each raw answer for the schema check.
  svix = new Svix(KEY, { serverUrl: url, fetch: recordingFetch(recorded), numRetries: 0 });
  return url;
};

/** A raw request with the account key, recorded for the schema check like the SDK's. */
const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
  const response = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const answer = { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  recorded.push({ method, path, ...answer });
  return answer;
};

const receiver = async (answer?: (index: number) => number): Promise<Receiver> => {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
};

const registerEventType = () =>
  svix.eventType.create({
    name: EVENT_TYPE_NAME,
    description: auctionStatusChangeEventType.description,
    schemas: auctionStatusChangeEventType.schemas,
  });

const payload = { auctioneerUuid: 'a1', auctionUuid: 'b2', status: 'OPEN_FOR_BIDDING' };

/**
 * A delivery's payload once the SDK's verifier accepts its signature with
 * `secret` (svix 2's verify returns nothing and throws when it refuses).
 */
const verifiedPayload = (secret: string, delivery: Received): unknown => {
  new Webhook(secret).verify(delivery.body, stringHeaders(delivery.headers));
  const parsed: unknown = JSON.parse(delivery.body);
  return parsed;
};

afterEach(async () => {
  // Every answer the SDK saw in this test matches Svix's schema.
  const mismatches = schemaMismatches(recorded, schemaFor);
  expect(mismatches).toEqual([]);
  await emulator.stop();
  for (const started of receivers.splice(0)) await started.close();
});

describe('keys, paths and errors', () => {
  it('refuses a request without the key with 401 {code, detail}', async () => {
    const url = await start();
    const refused = await apiError(new Svix('testsk_wrong', { serverUrl: url, numRetries: 0 }).application.list());
    expect(refused.code).toBe(401);
    expect(schemaErrors('HttpErrorOut', refused.body)).toEqual([]);
    const bare = await fetch(`${url}/api/v1/app`);
    expect(bare.status).toBe(401);
  });

  it('answers the same with or without a trailing slash', async () => {
    const url = await start();
    await svix.application.create({ name: 'Harbour Street Auctions' });
    const headers = { Authorization: `Bearer ${KEY}` };
    const [plain, slashed] = await Promise.all([
      fetch(`${url}/api/v1/app`, { headers }).then((response) => response.json()),
      fetch(`${url}/api/v1/app/`, { headers }).then((response) => response.json()),
    ]);
    expect(slashed).toEqual(plain);
  });

  it('answers an invalid body with 422 naming the field', async () => {
    const url = await start();
    const response = await fetch(`${url}/api/v1/app`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ uid: 'no-name' }),
    });
    expect(response.status).toBe(422);
    const body: unknown = await response.json();
    expect(schemaErrors('HTTPValidationError', body)).toEqual([]);
    expect(body).toEqual({ detail: [{ loc: ['body', 'name'], msg: 'field required', type: 'value_error.missing' }] });
  });

  it('refuses a body over the size limit with 413', async () => {
    await start({ maxBodyBytes: 2_048 });
    const app = await svix.application.create({ name: 'Sizes' });
    await registerEventType();
    const refused = await apiError(
      svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload: { ...payload, status: 'x'.repeat(4_096) } }),
    );
    expect(refused.code).toBe(413);
    const accepted = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    expect(accepted.id).toMatch(/^msg_[A-Za-z0-9]{27}$/);
  });
});

describe('Consumer Apps', () => {
  it('creates, reads by id and by uid, and lists', async () => {
    await start();
    const created = await svix.application.create({ name: 'Harbour Street Auctions', uid: 'harbour-street' });
    expect(created.id).toMatch(/^app_[A-Za-z0-9]{27}$/);
    expect(created.uid).toBe('harbour-street');
    expect((await svix.application.get(created.id)).name).toBe('Harbour Street Auctions');
    expect((await svix.application.get('harbour-street')).id).toBe(created.id);
    await svix.application.create({ name: 'Northgate Fine Art' });
    const first = await svix.application.list({ limit: 1 });
    expect(first.data.map((app) => app.id)).toEqual([created.id]);
    expect(first.done).toBe(false);
    const second = await svix.application.list({ limit: 1, iterator: first.iterator ?? '' });
    expect(second.data.map((app) => app.name)).toEqual(['Northgate Fine Art']);
    expect(second.done).toBe(true);
  });

  it('refuses a second app with the same uid, but returns it with get_if_exists', async () => {
    await start();
    const created = await svix.application.create({ name: 'Harbour', uid: 'harbour' });
    expect((await apiError(svix.application.create({ name: 'Harbour', uid: 'harbour' }))).code).toBe(409);
    expect((await svix.application.getOrCreate({ name: 'Harbour', uid: 'harbour' })).id).toBe(created.id);
    expect((await svix.application.list()).data).toHaveLength(1);
  });

  it('replays the first answer for a repeated Idempotency-Key', async () => {
    await start();
    const first = await svix.application.create({ name: 'Once' }, { idempotencyKey: 'create-once-1' });
    const again = await svix.application.create({ name: 'Once' }, { idempotencyKey: 'create-once-1' });
    expect(again.id).toBe(first.id);
    const other = await svix.application.create({ name: 'Once' }, { idempotencyKey: 'create-once-2' });
    expect(other.id).not.toBe(first.id);
    expect((await svix.application.list()).data).toHaveLength(2);
  });

  it('answers 404 for an unknown app', async () => {
    await start();
    expect((await apiError(svix.application.get('app_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9'))).code).toBe(404);
  });
});

describe('event types', () => {
  it('creates (409 when it exists), reads, upserts with PUT and lists', async () => {
    await start();
    const created = await registerEventType();
    expect(created.schemas).toEqual(auctionStatusChangeEventType.schemas);
    expect((await apiError(registerEventType())).code).toBe(409);
    expect((await svix.eventType.get(EVENT_TYPE_NAME)).description).toBe(auctionStatusChangeEventType.description);
    const updated = await svix.eventType.upsert(EVENT_TYPE_NAME, { description: 'Changed', schemas: {} });
    expect(updated.description).toBe('Changed');
    expect((await svix.eventType.get(EVENT_TYPE_NAME)).schemas).toEqual({});
    // PUT on a name that does not exist yet creates it. Listed by name (event_type.rs, list_event_types).
    await svix.eventType.upsert('AUCTION_ARCHIVED', { description: 'Archived auctions' });
    expect((await svix.eventType.list()).data.map((eventType) => eventType.name)).toEqual([
      'AUCTION_ARCHIVED',
      EVENT_TYPE_NAME,
    ]);
  });

  it('answers 404 for an unknown event type', async () => {
    await start();
    expect((await apiError(svix.eventType.get('NOPE'))).code).toBe(404);
  });
});

describe('endpoints', () => {
  it('creates with eventTypes or the older filterTypes name and reads it back as eventTypes, by id or uid', async () => {
    const url = await start();
    const app = await svix.application.create({ name: 'Endpoints' });
    await registerEventType();
    const endpoint = await svix.endpoint.create(app.id, {
      url: 'http://127.0.0.1:9/hook',
      uid: 'zap-1',
      eventTypes: [EVENT_TYPE_NAME],
      description: 'Belongs to a Zap',
    });
    expect(endpoint.id).toMatch(/^ep_[A-Za-z0-9]{27}$/);
    expect(endpoint.eventTypes).toEqual([EVENT_TYPE_NAME]);
    expect((await svix.endpoint.get(app.id, 'zap-1')).id).toBe(endpoint.id);
    const raw: unknown = await fetch(`${url}/api/v1/app/${app.id}/endpoint/${endpoint.id}`, {
      headers: { Authorization: `Bearer ${KEY}` },
    }).then((response) => response.json());
    expect(raw).toMatchObject({
      id: endpoint.id,
      eventTypes: [EVENT_TYPE_NAME],
      description: 'Belongs to a Zap',
      uid: 'zap-1',
    });
    expect((await svix.endpoint.list(app.id)).data.map((listed) => listed.id)).toEqual([endpoint.id]);
    // svix 2 sends only eventTypes; clients of the older contract still send filterTypes.
    const older = await call('POST', `/api/v1/app/${app.id}/endpoint`, {
      url: 'http://127.0.0.1:9/older',
      filterTypes: [EVENT_TYPE_NAME],
    });
    expect(older).toMatchObject({ status: 201, body: { eventTypes: [EVENT_TYPE_NAME] } });
    expect(older.body).not.toHaveProperty('filterTypes');
  });

  it('refuses both field names at once, and an event type that does not exist (422)', async () => {
    const url = await start();
    const app = await svix.application.create({ name: 'Endpoints' });
    await registerEventType();
    const both = await fetch(`${url}/api/v1/app/${app.id}/endpoint`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: 'http://127.0.0.1:9/',
        eventTypes: [EVENT_TYPE_NAME],
        filterTypes: [EVENT_TYPE_NAME],
      }),
    });
    expect(both.status).toBe(422);
    const unknown = await apiError(
      svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/', eventTypes: ['NOT_REGISTERED'] }),
    );
    expect(unknown.code).toBe(422);
    // As the server words it (endpoint/crud.rs, validate_event_types), under eventTypes whichever name was sent.
    const missing = {
      detail: [
        {
          loc: ['body', 'eventTypes'],
          msg: "The following event types don't exist: NOT_REGISTERED",
          type: 'value_error',
        },
      ],
    };
    expect(unknown.body).toEqual(missing);
    const older = { url: 'http://127.0.0.1:9/', filterTypes: ['NOT_REGISTERED'] };
    expect(await call('POST', `/api/v1/app/${app.id}/endpoint`, older)).toEqual({ status: 422, body: missing });
  });

  it('refuses a duplicate uid with 409, and deletes (then 404)', async () => {
    await start();
    const app = await svix.application.create({ name: 'Endpoints' });
    const endpoint = await svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/', uid: 'only-one' });
    expect((await apiError(svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/', uid: 'only-one' }))).code).toBe(
      409,
    );
    await svix.endpoint.delete(app.id, endpoint.id);
    expect((await apiError(svix.endpoint.get(app.id, endpoint.id))).code).toBe(404);
    expect((await apiError(svix.endpoint.delete(app.id, endpoint.id))).code).toBe(404);
  });

  it('gives the signing secret, and after a rotation signs with both during the grace period', async () => {
    await start();
    const target = await receiver();
    const app = await svix.application.create({ name: 'Rotation' });
    await registerEventType();
    const endpoint = await svix.endpoint.create(app.id, { url: target.url, eventTypes: [EVENT_TYPE_NAME] });
    const { key: before } = await svix.endpoint.getSecret(app.id, endpoint.id);
    expect(before).toMatch(/^whsec_[A-Za-z0-9+/=]{32,100}$/);
    await svix.endpoint.rotateSecret(app.id, endpoint.id, {});
    const { key: after } = await svix.endpoint.getSecret(app.id, endpoint.id);
    expect(after).not.toBe(before);

    const message = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await emulator.idle();
    const [delivery] = target.received;
    if (!delivery) throw new Error('no delivery');
    expect(String(delivery.headers['svix-signature']).split(' ')).toHaveLength(2);
    for (const secret of [before, after]) {
      expect(verifiedPayload(secret, delivery)).toEqual(payload);
    }
    expect(delivery.headers['svix-id']).toBe(message.id);
  });

  it('stops signing with the old secret once the grace period is over', async () => {
    await start({ rotationGraceMs: 0 });
    const target = await receiver();
    const app = await svix.application.create({ name: 'Rotation' });
    const endpoint = await svix.endpoint.create(app.id, { url: target.url });
    const { key: before } = await svix.endpoint.getSecret(app.id, endpoint.id);
    await svix.endpoint.rotateSecret(app.id, endpoint.id, {});
    await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await emulator.idle();
    const [delivery] = target.received;
    if (!delivery) throw new Error('no delivery');
    expect(String(delivery.headers['svix-signature']).split(' ')).toHaveLength(1);
    expect(() => new Webhook(before).verify(delivery.body, stringHeaders(delivery.headers))).toThrow();
  });
});

describe('endpoint PATCH', () => {
  it('changes only the fields sent, by id or uid', async () => {
    await start();
    const app = await svix.application.create({ name: 'Patches' });
    await registerEventType();
    const created = await svix.endpoint.create(app.id, {
      url: 'http://127.0.0.1:9/hook',
      uid: 'zap-1',
      description: 'Belongs to a Zap',
      eventTypes: [EVENT_TYPE_NAME],
      metadata: { zap: '1' },
      throttleRate: 10,
    });
    const described = await svix.endpoint.patch(app.id, 'zap-1', { description: 'Renamed' });
    expect(described).toMatchObject({
      id: created.id,
      uid: 'zap-1',
      url: 'http://127.0.0.1:9/hook',
      description: 'Renamed',
      metadata: { zap: '1' },
      throttleRate: 10,
      disabled: false,
      eventTypes: [EVENT_TYPE_NAME],
    });
    expect(described.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());
    expect(described.createdAt).toEqual(created.createdAt);

    const moved = await svix.endpoint.patch(app.id, created.id, {
      url: 'http://127.0.0.1:9/moved',
      uid: 'zap-2',
      metadata: { zap: '2' },
      throttleRate: 20,
    });
    expect(moved).toMatchObject({ url: 'http://127.0.0.1:9/moved', uid: 'zap-2', metadata: { zap: '2' } });
    expect((await svix.endpoint.get(app.id, 'zap-2')).description).toBe('Renamed');
    expect((await apiError(svix.endpoint.get(app.id, 'zap-1'))).code).toBe(404);
    expect(recorded.filter((answer) => answer.method === 'PATCH').map((answer) => answer.status)).toEqual([200, 200]);
  });

  it('takes eventTypes or the older filterTypes, and null clears a nullable field', async () => {
    await start();
    const app = await svix.application.create({ name: 'Patches' });
    await registerEventType();
    await svix.eventType.create({ name: 'OTHER', description: 'Other' });
    const endpoint = await svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/', uid: 'zap', throttleRate: 5 });
    const path = `/api/v1/app/${app.id}/endpoint/${endpoint.id}`;

    expect(await call('PATCH', path, { eventTypes: ['OTHER'], channels: ['lots'] })).toMatchObject({
      status: 200,
      body: { eventTypes: ['OTHER'], channels: ['lots'], uid: 'zap', throttleRate: 5 },
    });
    expect((await svix.endpoint.patch(app.id, endpoint.id, { eventTypes: [EVENT_TYPE_NAME] })).eventTypes).toEqual([
      EVENT_TYPE_NAME,
    ]);
    expect(await call('PATCH', path, { filterTypes: ['OTHER'] })).toMatchObject({
      status: 200,
      body: { eventTypes: ['OTHER'] },
    });
    const cleared = await call('PATCH', path, { eventTypes: null, channels: null, uid: null, throttleRate: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).not.toHaveProperty('eventTypes');
    expect(cleared.body).not.toHaveProperty('channels');
    expect(cleared.body).not.toHaveProperty('uid');
    expect(cleared.body).not.toHaveProperty('throttleRate');
    // An empty body changes nothing.
    const same = await call('PATCH', path, {});
    expect(same).toMatchObject({ status: 200, body: { id: endpoint.id, url: 'http://127.0.0.1:9/' } });
  });

  it('refuses what the contract refuses, and then changes nothing', async () => {
    await start();
    const app = await svix.application.create({ name: 'Patches' });
    await registerEventType();
    const endpoint = await svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/', uid: 'mine' });
    await svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/', uid: 'taken' });
    const path = `/api/v1/app/${app.id}/endpoint/${endpoint.id}`;

    const both = await call('PATCH', path, { eventTypes: [EVENT_TYPE_NAME], filterTypes: [EVENT_TYPE_NAME] });
    expect(both.status).toBe(422);
    expect(await call('PATCH', path, { description: 'x', eventTypes: [EVENT_TYPE_NAME, 'NOPE'] })).toEqual({
      status: 422,
      body: {
        detail: [
          { loc: ['body', 'eventTypes'], msg: "The following event types don't exist: NOPE", type: 'value_error' },
        ],
      },
    });
    expect(await call('PATCH', path, { filterTypes: ['NOPE'] })).toEqual({
      status: 422,
      body: {
        detail: [
          { loc: ['body', 'eventTypes'], msg: "The following event types don't exist: NOPE", type: 'value_error' },
        ],
      },
    });
    for (const body of [
      { url: 'not a url' },
      { description: null },
      { disabled: 'yes' },
      { metadata: { count: 1 } },
      { throttleRate: 1.5 },
      { uid: 'has space' },
    ]) {
      expect(await call('PATCH', path, body)).toMatchObject({ status: 422 });
    }
    expect((await call('PATCH', path, undefined)).status).toBe(422);
    expect((await apiError(svix.endpoint.patch(app.id, endpoint.id, { uid: 'taken' }))).code).toBe(409);
    // Its own uid again is no conflict.
    expect((await svix.endpoint.patch(app.id, endpoint.id, { uid: 'mine' })).uid).toBe('mine');
    expect((await apiError(svix.endpoint.patch(app.id, 'ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9', {}))).code).toBe(404);

    const after = await call('GET', path);
    expect(after.body).toMatchObject({ url: 'http://127.0.0.1:9/', description: '', uid: 'mine' });
    expect(after.body).not.toHaveProperty('eventTypes');
  });

  it('re-enables a disabled endpoint, and deliveries resume', async () => {
    await start();
    const target = await receiver();
    const app = await svix.application.create({ name: 'Paused' });
    const endpoint = await svix.endpoint.create(app.id, { url: target.url, disabled: true });
    await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload: { ...payload, status: 'DRAFT' } });
    await emulator.idle();
    expect(target.received).toHaveLength(0);

    expect((await svix.endpoint.patch(app.id, endpoint.id, { disabled: false })).disabled).toBe(false);
    const resumed = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await emulator.idle();
    const [delivery] = target.received;
    if (!delivery) throw new Error('no delivery after re-enabling');
    expect(delivery.headers['svix-id']).toBe(resumed.id);
    const { key } = await svix.endpoint.getSecret(app.id, endpoint.id);
    expect(verifiedPayload(key, delivery)).toEqual(payload);

    await svix.endpoint.patch(app.id, endpoint.id, { disabled: true });
    await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await emulator.idle();
    expect(target.received).toHaveLength(1);
  });
});

describe('messages and deliveries', () => {
  it('creates (202), reads, and lists newest first with event_types, limit, iterator and with_content', async () => {
    await start();
    const app = await svix.application.create({ name: 'Messages' });
    await registerEventType();
    const sent = [];
    // 4 ms apart: within one 4 ms slot, ids sort by their random part, as Svix's do.
    let now = Date.now();
    jest.spyOn(Date, 'now').mockImplementation(() => (now += 4));
    for (const status of ['DRAFT', 'OPEN_FOR_BIDDING', 'LOTS_SOLD']) {
      sent.push(await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload: { ...payload, status } }));
    }
    await svix.message.create(app.id, { eventType: 'SOMETHING_ELSE', payload: {} });
    jest.restoreAllMocks();
    expect(
      recorded
        .filter((answer) => answer.method === 'POST' && answer.path.endsWith('/msg'))
        .map((answer) => answer.status),
    ).toEqual([202, 202, 202, 202]);
    expect((await svix.message.get(app.id, sent[0]?.id ?? '', { withContent: true })).payload).toEqual({
      ...payload,
      status: 'DRAFT',
    });

    const first = await svix.message.list(app.id, { eventTypes: [EVENT_TYPE_NAME], limit: 2 });
    expect(first.data.map((message) => message.id)).toEqual([sent[2]?.id, sent[1]?.id]);
    expect(first.done).toBe(false);
    const rest = await svix.message.list(app.id, {
      eventTypes: [EVENT_TYPE_NAME],
      limit: 2,
      iterator: first.iterator ?? '',
    });
    expect(rest.data.map((message) => message.id)).toEqual([sent[0]?.id]);
    expect(rest.done).toBe(true);
    const bare = await svix.message.list(app.id, { withContent: false, limit: 1 });
    expect(bare.data[0]).toMatchObject({ eventType: 'SOMETHING_ELSE', payload: {} });
  });

  it('lists the messages made between after (its own 4 ms kept) and before (its own left out), a page at a time', async () => {
    let now = Date.UTC(2026, 0, 5, 9, 0, 0);
    // A message is stamped with the time it is made.
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    await start();
    const app = await svix.application.create({ name: 'Windows' });
    await registerEventType();
    const sent = [];
    for (let second = 0; second < 6; second += 1) {
      now = Date.UTC(2026, 0, 5, 9, 0, second);
      sent.push(await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload }));
    }
    const between = { after: new Date(Date.UTC(2026, 0, 5, 9, 0, 1)), before: new Date(Date.UTC(2026, 0, 5, 9, 0, 5)) };
    const first = await svix.message.list(app.id, { ...between, limit: 2 });
    expect(first.data.map((message) => message.id)).toEqual([sent[4]?.id, sent[3]?.id]);
    expect(first.done).toBe(false);
    const rest = await svix.message.list(app.id, { ...between, limit: 2, iterator: first.iterator ?? '' });
    expect(rest.data.map((message) => message.id)).toEqual([sent[2]?.id, sent[1]?.id]);
    expect(rest.done).toBe(true);
    expect((await svix.message.list(app.id, { after: between.after })).data).toHaveLength(5);
    expect((await svix.message.list(app.id, { before: between.after })).data).toHaveLength(1);
    jest.restoreAllMocks();
  });

  it('refuses a bound that is not a date-time (400 generic_error, as a query it cannot read), naming it', async () => {
    const url = await start();
    const app = await svix.application.create({ name: 'Bad window' });
    const answer = await fetch(`${url}/api/v1/app/${app.id}/msg?after=yesterday`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(await answer.json())).toContain('after');
  });

  it('gives a message an id that tells the same time as its timestamp', async () => {
    await start();
    const app = await svix.application.create({ name: 'Times' });
    const endpoint = await svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/' });
    const sent = [];
    for (let index = 0; index < 20; index += 1) {
      sent.push(await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload }));
    }
    // The id holds the time in 4 ms units, the timestamp to the millisecond.
    const lag = (id: string, at: Date): number => {
      const fromId = timeOfSvixId(id);
      if (fromId === undefined) throw new Error(`${id} is not a Svix id`);
      return at.getTime() - fromId;
    };
    const lags = [
      ...sent.map((message) => lag(message.id, message.timestamp)),
      lag(app.id, app.createdAt),
      lag(endpoint.id, endpoint.createdAt),
    ];
    expect(lags.filter((ms) => ms < 0 || ms >= 4)).toEqual([]);
  });

  it('delivers to each matching, enabled endpoint with headers the SDK verifier accepts', async () => {
    const startedSeconds = Math.floor(Date.now() / 1000);
    await start();
    const [matching, other, disabled] = [await receiver(), await receiver(), await receiver()];
    if (!matching || !other || !disabled) throw new Error('receivers');
    const app = await svix.application.create({ name: 'Deliveries' });
    await registerEventType();
    await svix.eventType.create({ name: 'OTHER', description: 'Other' });
    const endpoint = await svix.endpoint.create(app.id, { url: matching.url, eventTypes: [EVENT_TYPE_NAME] });
    await svix.endpoint.create(app.id, { url: other.url, eventTypes: ['OTHER'] });
    await svix.endpoint.create(app.id, { url: disabled.url, disabled: true });
    const message = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await emulator.idle();

    expect(other.received).toHaveLength(0);
    expect(disabled.received).toHaveLength(0);
    const [delivery] = matching.received;
    if (!delivery) throw new Error('no delivery');
    const { key } = await svix.endpoint.getSecret(app.id, endpoint.id);
    expect(verifiedPayload(key, delivery)).toEqual(payload);
    expect(delivery.headers).toMatchObject({ 'svix-id': message.id, 'content-type': 'application/json' });
    // Signed during the test, however long it took.
    expect(Number(delivery.headers['svix-timestamp'])).toBeGreaterThanOrEqual(startedSeconds);
    expect(Number(delivery.headers['svix-timestamp'])).toBeLessThanOrEqual(Date.now() / 1000);
  });

  it('retries a failed delivery on the schedule and keeps every attempt', async () => {
    await start({ retryScheduleMs: [5, 5, 5] });
    const flaky = await receiver((index) => (index < 2 ? 503 : 200));
    const app = await svix.application.create({ name: 'Retries' });
    await svix.endpoint.create(app.id, { url: flaky.url });
    const message = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await emulator.idle();
    expect(flaky.received).toHaveLength(3);
    expect(new Set(flaky.received.map((delivery) => delivery.headers['svix-id']))).toEqual(new Set([message.id]));
    expect(
      emulator.attempts(app.id, message.id).map((attempt) => [attempt.status, attempt.responseStatusCode]),
    ).toEqual([
      ['fail', 503],
      ['fail', 503],
      ['success', 200],
    ]);
  });

  it('gives up after the last retry', async () => {
    await start({ retryScheduleMs: [5, 5] });
    const down = await receiver(() => 500);
    const app = await svix.application.create({ name: 'Down' });
    await svix.endpoint.create(app.id, { url: down.url });
    const message = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await emulator.idle();
    expect(down.received).toHaveLength(3);
    expect(emulator.stats().deliveries).toMatchObject({ exhausted: 1, succeeded: 0, pending: 0 });
    expect(emulator.attempts(app.id, message.id)).toHaveLength(3);
  });

  it('treats a time-out as a failure and retries it', async () => {
    await start({ retryScheduleMs: [5], attemptTimeoutMs: 100 });
    let calls = 0;
    const hanging = createServer((_request, response) => {
      calls += 1;
      if (calls === 1) setTimeout(() => response.writeHead(200).end(), 1_000);
      else response.writeHead(200).end();
    });
    const port = await listenOnLoopback(hanging);
    const app = await svix.application.create({ name: 'Slow' });
    await svix.endpoint.create(app.id, { url: `http://127.0.0.1:${port}/` });
    const message = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await emulator.idle();
    hanging.closeAllConnections();
    hanging.close();
    expect(emulator.attempts(app.id, message.id).map((attempt) => attempt.status)).toEqual(['fail', 'success']);
  });

  it('resends a message to one endpoint on request', async () => {
    await start();
    const target = await receiver();
    const app = await svix.application.create({ name: 'Resend' });
    const endpoint = await svix.endpoint.create(app.id, { url: target.url });
    const message = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await emulator.idle();
    emulator.resend(app.id, message.id, endpoint.id);
    await emulator.idle();
    expect(target.received.map((delivery) => delivery.headers['svix-id'])).toEqual([message.id, message.id]);
    expect(emulator.attempts(app.id, message.id).map((attempt) => attempt.triggerType)).toEqual([
      'scheduled',
      'manual',
    ]);
  });

  it("lists an endpoint's attempts, newest first, each with the URL it went to (attempt.rs, list_attempts_by_endpoint)", async () => {
    await start({ retryScheduleMs: [] });
    const down = await receiver(() => 503);
    const up = await receiver();
    const app = await svix.application.create({ name: 'Attempts' });
    const endpoint = await svix.endpoint.create(app.id, { url: down.url });
    const other = await svix.endpoint.create(app.id, { url: up.url });
    // The second attempt a slot of 4 ms after the first: within one, ids sort by their random part, as Svix's do.
    let now = Date.now();
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      const message = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
      await emulator.idle();
      now += 8;
      await svix.endpoint.patch(app.id, endpoint.id, { url: up.url });
      emulator.resend(app.id, message.id, endpoint.id);
      await emulator.idle();
      const seen = (await svix.messageAttempt.listByEndpoint(app.id, endpoint.id)).data.map(
        ({ url, status, triggerType, msgId, endpointId }) => ({ url, status, triggerType, msgId, endpointId }),
      );
      const sent = { msgId: message.id, endpointId: endpoint.id };
      expect(seen).toEqual([
        { url: up.url, status: MessageStatus.Success, triggerType: MessageAttemptTriggerType.Manual, ...sent },
        { url: down.url, status: MessageStatus.Fail, triggerType: MessageAttemptTriggerType.Scheduled, ...sent },
      ]);
      const failed = await svix.messageAttempt.listByEndpoint(app.id, endpoint.id, { status: MessageStatus.Fail });
      expect(failed.data.map((attempt) => attempt.url)).toEqual([down.url]);
      const paged = await svix.messageAttempt.listByEndpoint(app.id, endpoint.id, { limit: 1 });
      expect(paged).toMatchObject({ data: [{ url: up.url }], done: false });
      // Another endpoint's attempts are its own; an endpoint that is not there answers 404.
      expect((await svix.messageAttempt.listByEndpoint(app.id, other.id)).data).toHaveLength(1);
      expect((await apiError(svix.messageAttempt.listByEndpoint(app.id, 'ep_missing'))).code).toBe(404);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('never delivers off this machine', async () => {
    await start({ retryScheduleMs: [] });
    const app = await svix.application.create({ name: 'Outside' });
    await svix.endpoint.create(app.id, { url: 'https://receiver.invalid/hook' });
    const message = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await emulator.idle();
    expect(emulator.attempts(app.id, message.id)).toMatchObject([{ status: 'fail', responseStatusCode: 0 }]);
  });

  it('answers a get by the message id, or by the eventId it was created with', async () => {
    await start();
    const app = await svix.application.create({ name: 'Record' });
    const message = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload, eventId: 'order-42' });
    expect((await svix.message.get(app.id, message.id)).id).toBe(message.id);
    expect((await svix.message.get(app.id, 'order-42')).id).toBe(message.id);
    expect((await apiError(svix.message.get(app.id, 'order-43'))).code).toBe(404);
  });

  it('keeps a payload for its retention, then answers {"expired": true}; deleting the content is the same at once', async () => {
    let later = 0;
    await start({ clock: () => Date.now() + later, retryScheduleMs: [] });
    const app = await svix.application.create({ name: 'Retention' });
    const hour = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload, payloadRetentionHours: 1 });
    const days = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload, payloadRetentionPeriod: 2 });
    const usual = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    const deleted = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await svix.message.expungeContent(app.id, deleted.id);
    expect(recorded.filter((answer) => answer.method === 'DELETE').map((answer) => answer.status)).toEqual([204]);
    const payloads = async () =>
      Promise.all(
        [hour, days, usual, deleted].map(
          async (message) => (await svix.message.get(app.id, message.id, { withContent: true })).payload,
        ),
      );
    const expired = { expired: true };
    expect(await payloads()).toEqual([payload, payload, payload, expired]);
    later = 2 * 60 * 60 * 1000;
    expect(await payloads()).toEqual([expired, payload, payload, expired]);
    later = 3 * 24 * 60 * 60 * 1000;
    expect(await payloads()).toEqual([expired, expired, payload, expired]);
    later = 91 * 24 * 60 * 60 * 1000;
    expect(await payloads()).toEqual([expired, expired, expired, expired]);
    // The log says the same (asked back from now: unbounded, it would reach 90 days from the later clock only).
    const window = { withContent: true, before: new Date(Date.now() + 60_000) };
    expect((await svix.message.list(app.id, window)).data.map((message) => message.payload)).toEqual([
      expired,
      expired,
      expired,
      expired,
    ]);
  });

  it('refuses both retention fields at once (422), and a retention out of bounds', async () => {
    await start();
    const app = await svix.application.create({ name: 'Retention bounds' });
    const both = await call('POST', `/api/v1/app/${app.id}/msg`, {
      eventType: EVENT_TYPE_NAME,
      payload,
      payloadRetentionPeriod: 1,
      payloadRetentionHours: 1,
    });
    expect(both.status).toBe(422);
    for (const outOfBounds of [
      { payloadRetentionPeriod: 91 },
      { payloadRetentionHours: 0 },
      { payloadRetentionHours: 1.5 },
    ]) {
      expect(
        (await call('POST', `/api/v1/app/${app.id}/msg`, { eventType: EVENT_TYPE_NAME, payload, ...outOfBounds }))
          .status,
      ).toBe(422);
    }
  });

  it('does not deliver a message again once its content is gone', async () => {
    await start({ retryScheduleMs: [50] });
    const target = await receiver(() => 503);
    const app = await svix.application.create({ name: 'Expunged' });
    const endpoint = await svix.endpoint.create(app.id, { url: target.url });
    const message = await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    await svix.message.expungeContent(app.id, message.id);
    await emulator.idle();
    emulator.resend(app.id, message.id, endpoint.id);
    await emulator.idle();
    // The first attempt may have been under way already; no retry and no resend follows.
    expect(target.received.length).toBeLessThanOrEqual(1);
  });

  it('keeps a bounded message log, forgetting the oldest', async () => {
    await start({ limits: { maxMessagesPerApp: 3 } });
    const app = await svix.application.create({ name: 'Bounded' });
    const sent = [];
    // 4 ms apart: within one 4 ms slot, ids sort by their random part, as Svix's do.
    let now = Date.now();
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    for (let index = 0; index < 5; index += 1) {
      now += 4;
      sent.push(
        await svix.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload: { ...payload, status: `S${index}` } }),
      );
    }
    jest.restoreAllMocks();
    const listed = await svix.message.list(app.id);
    expect(listed.data.map((message) => message.id)).toEqual([sent[4]?.id, sent[3]?.id, sent[2]?.id]);
    expect((await apiError(svix.message.get(app.id, sent[0]?.id ?? ''))).code).toBe(404);
    expect(emulator.stats().messages).toBe(3);
  });
});
