import { createServer } from 'node:http';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { encodeKsuidMs } from '../../src/svix/ksuid';
import { auctionStatusChangeEventType, EVENT_TYPE_NAME } from '../../src/svix/eventType';
import { SvixEmulator, type EmulatorOptions } from '../../src/tools/sandbox/emulator';
import { errorAnswer } from '../../src/tools/sandbox/emulator/server';
import { listenOnLoopback } from '../../src/tools/sandbox/net';
import { startReceiver, type Receiver } from '../helpers/receiver';

/**
 * The emulator against Svix's published server (svix-webhooks, server/svix-server), one row of issue 45's table
 * at a time: each test names the server file that states the behaviour it holds the emulator to.
 */

const KEY = 'testsk_fidelity';
let emulator: SvixEmulator;
const receivers: Receiver[] = [];

const start = async (options: Partial<EmulatorOptions> = {}): Promise<void> => {
  emulator = new SvixEmulator({ apiKey: KEY, retryScheduleMs: [5, 5, 5], ...options });
  await emulator.start();
};

afterEach(async () => {
  jest.restoreAllMocks();
  await emulator.stop();
  for (const started of receivers.splice(0)) await started.close();
});

const receiver = async (answer?: (index: number) => number): Promise<Receiver> => {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
};

type Answer = { status: number; body: unknown };
const call = async (method: string, path: string, body?: unknown, key = KEY): Promise<Answer> => {
  const response = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
};

const Id = t.type({ id: t.string });
const Key = t.type({ key: t.string });
const Listed = t.type({ data: t.array(Id), done: t.boolean, iterator: t.union([t.string, t.null]) });
const decoded = <A>(codec: t.Decoder<unknown, A>, answer: Answer): A => {
  const result = codec.decode(answer.body);
  if (!isRight(result)) throw new Error(`unexpected answer ${answer.status}: ${JSON.stringify(answer.body)}`);
  return result.right;
};

const newApp = async (name = 'Fidelity'): Promise<string> =>
  decoded(Id, await call('POST', '/api/v1/app', { name })).id;
const registerEventType = () =>
  call('POST', '/api/v1/event-type', {
    name: EVENT_TYPE_NAME,
    description: auctionStatusChangeEventType.description,
    schemas: auctionStatusChangeEventType.schemas,
  });
const archiveEventType = () => call('DELETE', `/api/v1/event-type/${EVENT_TYPE_NAME}`);
const payload = { auctioneerUuid: 'a1', auctionUuid: 'b2', status: 'OPEN_FOR_BIDDING' };
const send = async (app: string): Promise<string> =>
  decoded(Id, await call('POST', `/api/v1/app/${app}/msg`, { eventType: EVENT_TYPE_NAME, payload })).id;
const newEndpoint = async (app: string, url: string, extra: Record<string, unknown> = {}): Promise<string> =>
  decoded(Id, await call('POST', `/api/v1/app/${app}/endpoint`, { url, ...extra })).id;
/** An integration key of `app`, made as `npm run setup` makes one. */
const integrationKey = async (app: string): Promise<string> => {
  const integration = decoded(Id, await call('POST', `/api/v1/app/${app}/integration`, { name: 'Zapier' }));
  return decoded(Key, await call('POST', `/api/v1/app/${app}/integration/${integration.id}/key/rotate`)).key;
};

describe('1. an archived event type (v1/endpoints/endpoint/crud.rs validate_event_types; event_type.rs)', () => {
  it('refuses an endpoint made or patched to it (422 on eventTypes), while reading the type answers archived', async () => {
    await start();
    const app = await newApp();
    await registerEventType();
    const existing = await newEndpoint(app, 'http://127.0.0.1:9/', { eventTypes: [EVENT_TYPE_NAME] });
    expect((await archiveEventType()).status).toBe(204);
    const made = await call('POST', `/api/v1/app/${app}/endpoint`, {
      url: 'http://127.0.0.1:9/x',
      eventTypes: [EVENT_TYPE_NAME],
    });
    expect(made).toEqual({
      status: 422,
      body: { detail: [expect.objectContaining({ loc: ['body', 'eventTypes'], type: 'value_error' })] },
    });
    const patched = await call('PATCH', `/api/v1/app/${app}/endpoint/${existing}`, { eventTypes: [EVENT_TYPE_NAME] });
    expect(patched.status).toBe(422);
    const read = await call('GET', `/api/v1/event-type/${EVENT_TYPE_NAME}`);
    expect(read).toEqual({ status: 200, body: expect.objectContaining({ archived: true }) });
    // An endpoint that filtered on it before keeps doing so (event_type.rs, on archiving).
    expect((await call('GET', `/api/v1/app/${app}/endpoint/${existing}`)).body).toMatchObject({
      eventTypes: [EVENT_TYPE_NAME],
    });
  });
});

describe('2. creating an event type again (v1/endpoints/event_type.rs create_event_type)', () => {
  it('un-archives an archived one (201), and refuses a live one with 409 event_type_exists', async () => {
    await start();
    await registerEventType();
    await archiveEventType();
    const again = await registerEventType();
    expect(again).toEqual({ status: 201, body: expect.objectContaining({ name: EVENT_TYPE_NAME, archived: false }) });
    expect(await registerEventType()).toEqual({
      status: 409,
      body: { code: 'event_type_exists', detail: 'An event_type with this name already exists' },
    });
  });

  it('un-archives with a PATCH of archived alone, keeping the description and schemas', async () => {
    await start();
    await registerEventType();
    await archiveEventType();
    const patched = await call('PATCH', `/api/v1/event-type/${EVENT_TYPE_NAME}`, { archived: false });
    expect(patched).toEqual({
      status: 200,
      body: expect.objectContaining({ archived: false, description: auctionStatusChangeEventType.description }),
    });
  });
});

describe('3. listing messages (v1/utils/mod.rs filter_and_paginate_time_limited; v1/endpoints/message.rs)', () => {
  /** Messages made at T0 + 0…5 s (Date.now pinned for each). */
  const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
  const sendAt = async (app: string, seconds: readonly number[]): Promise<string[]> => {
    let now = T0;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const sent: string[] = [];
    for (const second of seconds) {
      now = T0 + second * 1000;
      sent.push(await send(app));
    }
    jest.restoreAllMocks();
    return sent;
  };
  const list = async (app: string, query: string) =>
    decoded(Listed, await call('GET', `/api/v1/app/${app}/msg?${query}`)).data.map((message) => message.id);
  const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

  it('bounds on the id at 4 ms: after keeps its own slot, before leaves out its own; both: newest first', async () => {
    await start({ clock: () => T0 + 60_000 });
    const app = await newApp();
    const sent = await sendAt(app, [0, 1, 2, 3, 4, 5]);
    // The emulator's old reading (times, both exclusive) kept neither end.
    expect(await list(app, `after=${at(1)}&before=${at(4)}`)).toEqual([sent[3], sent[2], sent[1]]);
    expect(await list(app, `before=${at(1)}`)).toEqual([sent[0]]);
  });

  it('with after alone, chooses the oldest after it (the page printed newest first)', async () => {
    await start({ clock: () => T0 + 60_000 });
    const app = await newApp();
    const sent = await sendAt(app, [0, 1, 2, 3, 4, 5]);
    expect(await list(app, `after=${at(2)}&limit=2`)).toEqual([sent[3], sent[2]]);
  });

  it('takes an iterator that names no message, as a cursor on the id', async () => {
    await start({ clock: () => T0 + 60_000 });
    const app = await newApp();
    const sent = await sendAt(app, [0, 1, 2, 3]);
    const between = `msg_${encodeKsuidMs(T0 + 2500, new Uint8Array(15))}`;
    expect(await list(app, `iterator=${between}`)).toEqual([sent[2], sent[1], sent[0]]);
  });

  it('with no bounds, lists the last 90 days only', async () => {
    const later = { ms: 0 };
    await start({ clock: () => Date.now() + later.ms });
    const app = await newApp();
    await send(app);
    expect(await list(app, '')).toHaveLength(1);
    later.ms = 91 * 24 * 60 * 60 * 1000;
    expect(await list(app, '')).toEqual([]);
  });

  it('refuses a limit over 250 with 422, and a query value it cannot read with 400 generic_error', async () => {
    await start();
    const app = await newApp();
    expect((await call('GET', `/api/v1/app/${app}/msg?limit=251`)).status).toBe(422);
    expect((await call('GET', `/api/v1/app/${app}/msg?limit=250`)).status).toBe(200);
    for (const query of ['limit=many', 'after=yesterday', 'with_content=perhaps']) {
      expect(await call('GET', `/api/v1/app/${app}/msg?${query}`)).toEqual({
        status: 400,
        body: { code: 'generic_error', detail: expect.any(String) },
      });
    }
  });
});

describe('4. rotation (v1/endpoints/endpoint/secrets.rs rotate_key; endpoint/mod.rs EndpointSecretRotateIn)', () => {
  it('keeps at most 10 old keys signing: the 11th rotation within their grace is refused with 400 limit_reached', async () => {
    await start();
    const app = await newApp();
    const endpoint = await newEndpoint(app, 'http://127.0.0.1:9/');
    const rotate = (body: unknown) => call('POST', `/api/v1/app/${app}/endpoint/${endpoint}/secret/rotate`, body);
    for (let count = 0; count < 10; count += 1) expect((await rotate({})).status).toBe(204);
    expect(await rotate({})).toEqual({ status: 400, body: { code: 'limit_reached', detail: expect.any(String) } });
    // With no grace, the key replaced stops at once and does not count.
    expect((await rotate({ gracePeriodSeconds: 0 })).status).toBe(204);
  });

  it('refuses a grace period outside 0 to 604,800 s (422)', async () => {
    await start();
    const app = await newApp();
    const endpoint = await newEndpoint(app, 'http://127.0.0.1:9/');
    const rotate = (body: unknown) => call('POST', `/api/v1/app/${app}/endpoint/${endpoint}/secret/rotate`, body);
    for (const gracePeriodSeconds of [-1, 604_801, 1.5]) {
      expect((await rotate({ gracePeriodSeconds })).status).toBe(422);
    }
    expect((await rotate({ gracePeriodSeconds: 604_800 })).status).toBe(204);
  });
});

describe('5. retries (worker.rs calculate_retry_delay, limit_retry_delay, retry_after)', () => {
  it('varies each wait by ±20% (here the random number gives the most)', async () => {
    await start({ retryScheduleMs: [100], random: () => 1 });
    const down = await receiver(() => 500);
    const app = await newApp();
    await newEndpoint(app, down.url);
    const message = await send(app);
    await emulator.idle();
    expect(emulator.attempts(app, message).map((attempt) => attempt.nextAttemptInMs)).toEqual([120, undefined]);
  });

  it("waits at least the penalty after a 429, and holds the endpoint's Retry-After to 1-2x that", async () => {
    await start({ retryScheduleMs: [5, 5], overloadPenaltyMs: 40, random: () => 0.5 });
    const server = createServer((_request, response) => response.writeHead(429, { 'retry-after': '3600' }).end());
    const port = await listenOnLoopback(server);
    const app = await newApp();
    await newEndpoint(app, `http://127.0.0.1:${port}/`);
    const message = await send(app);
    await emulator.idle();
    server.close();
    expect(emulator.attempts(app, message).map((attempt) => attempt.nextAttemptInMs)).toEqual([80, 80, undefined]);
  });

  it('waits at least the penalty after a time-out', async () => {
    await start({ retryScheduleMs: [5], overloadPenaltyMs: 40, attemptTimeoutMs: 50, random: () => 0.5 });
    const server = createServer(() => undefined);
    const port = await listenOnLoopback(server);
    const app = await newApp();
    await newEndpoint(app, `http://127.0.0.1:${port}/`);
    const message = await send(app);
    await emulator.idle();
    server.closeAllConnections();
    server.close();
    expect(emulator.attempts(app, message)[0]?.nextAttemptInMs).toBe(40);
  });
});

describe('6. an endpoint failing for good (worker.rs process_endpoint_failure)', () => {
  it('is disabled once a message used up its retries over the window after the first did; then gets nothing', async () => {
    await start({ retryScheduleMs: [5], disableAfterMs: 100 });
    const down = await receiver(() => 500);
    const app = await newApp();
    const endpoint = await newEndpoint(app, down.url);
    await send(app);
    await emulator.idle();
    await new Promise((resolve) => setTimeout(resolve, 150));
    await send(app);
    await emulator.idle();
    expect((await call('GET', `/api/v1/app/${app}/endpoint/${endpoint}`)).body).toMatchObject({ disabled: true });
    const seen = down.received.length;
    const third = await send(app);
    await emulator.idle();
    emulator.resend(app, third, endpoint);
    await emulator.idle();
    expect(down.received).toHaveLength(seen);
  });

  it('is not disabled when a delivery succeeded between the failures', async () => {
    await start({ retryScheduleMs: [5], disableAfterMs: 100 });
    let failing = true;
    const flaky = await receiver(() => (failing ? 500 : 204));
    const app = await newApp();
    const endpoint = await newEndpoint(app, flaky.url);
    await send(app);
    await emulator.idle();
    failing = false;
    await send(app);
    await emulator.idle();
    failing = true;
    await new Promise((resolve) => setTimeout(resolve, 150));
    await send(app);
    await emulator.idle();
    expect((await call('GET', `/api/v1/app/${app}/endpoint/${endpoint}`)).body).toMatchObject({ disabled: false });
  });
});

describe('7. error bodies (error.rs HttpError::permission_denied, IntoResponse for Error)', () => {
  it('refuses with 403 code "insufficient access" (a space)', async () => {
    await start();
    const app = await newApp();
    const key = await integrationKey(app);
    const refused = await call('POST', `/api/v1/app/${app}/msg`, { eventType: EVENT_TYPE_NAME, payload }, key);
    expect(refused).toEqual({
      status: 403,
      body: { code: 'insufficient access', detail: 'Insufficient access for the given operation.' },
    });
  });

  it('answers a failure of its own with 500 and the body {}', () => {
    expect(errorAnswer(new Error('the database went away'))).toEqual({ status: 500, body: {} });
  });
});

describe('8. app-scoped keys (core/permissions.rs; the routes in v1/endpoints/*.rs)', () => {
  it("may use their app's routes and read event types; may not post messages, write event types or expunge", async () => {
    await start();
    const app = await newApp();
    const other = await newApp('Another');
    await registerEventType();
    const message = await send(app);
    const key = await integrationKey(app);
    const as = (method: string, path: string, body?: unknown) =>
      call(method, path, body, key).then((answer) => answer.status);
    expect(await as('GET', `/api/v1/app/${app}`)).toBe(200);
    expect(await as('GET', `/api/v1/event-type/${EVENT_TYPE_NAME}`)).toBe(200);
    expect(await as('GET', '/api/v1/event-type')).toBe(200);
    expect(await as('POST', `/api/v1/app/${app}/endpoint`, { url: 'http://127.0.0.1:9/' })).toBe(201);
    expect(await as('GET', `/api/v1/app/${app}/msg/${message}`)).toBe(200);
    expect(await as('POST', `/api/v1/app/${app}/msg`, { eventType: EVENT_TYPE_NAME, payload })).toBe(403);
    expect(await as('DELETE', `/api/v1/app/${app}/msg/${message}/content`)).toBe(403);
    expect(await as('POST', '/api/v1/event-type', { name: 'OTHER', description: 'x' })).toBe(403);
    expect(await as('PATCH', `/api/v1/event-type/${EVENT_TYPE_NAME}`, { archived: true })).toBe(403);
    expect(await as('GET', `/api/v1/app/${other}/endpoint`)).toBe(404);
  });
});

describe('9. throttleRate (v1/endpoints/endpoint/mod.rs EndpointIn, EndpointPatch)', () => {
  it('takes a whole number of at least 1, or the older rateLimit, and refuses 0, negatives and fractions', async () => {
    await start();
    const app = await newApp();
    const make = (body: Record<string, unknown>) =>
      call('POST', `/api/v1/app/${app}/endpoint`, { url: 'http://127.0.0.1:9/', ...body });
    for (const throttleRate of [0, -1, 2.5, 65_536]) expect((await make({ throttleRate })).status).toBe(422);
    expect(await make({ throttleRate: 25 })).toEqual({
      status: 201,
      body: expect.objectContaining({ throttleRate: 25 }),
    });
    expect(await make({ rateLimit: 5 })).toEqual({ status: 201, body: expect.objectContaining({ throttleRate: 5 }) });
    const endpoint = await newEndpoint(app, 'http://127.0.0.1:9/y');
    expect((await call('PATCH', `/api/v1/app/${app}/endpoint/${endpoint}`, { throttleRate: 0 })).status).toBe(422);
  });

  it('never refuses a rate for a plan unless told to assume one does (no source says a plan refuses it)', async () => {
    await start({ assumePlanRefusesThrottleRate: true });
    const app = await newApp();
    const refused = await call('POST', `/api/v1/app/${app}/endpoint`, { url: 'http://127.0.0.1:9/', throttleRate: 25 });
    expect(refused).toEqual({
      status: 422,
      body: { detail: [expect.objectContaining({ loc: ['body', 'throttleRate'] })] },
    });
  });
});

describe('10. resend of an expired message; eventTypes [] (v1/endpoints/attempt.rs resend_webhook; endpoint/mod.rs)', () => {
  it('refuses to resend a message whose payload is gone with 400 missing_payload', async () => {
    await start();
    const target = await receiver();
    const app = await newApp();
    const endpoint = await newEndpoint(app, target.url);
    const message = await send(app);
    await emulator.idle();
    await call('DELETE', `/api/v1/app/${app}/msg/${message}/content`);
    const resent = await call('POST', `/api/v1/app/${app}/msg/${message}/endpoint/${endpoint}/resend`);
    expect(resent).toEqual({ status: 400, body: { code: 'missing_payload', detail: expect.any(String) } });
  });

  it('refuses an endpoint with an empty eventTypes list (422), on create and on patch', async () => {
    await start();
    const app = await newApp();
    const made = await call('POST', `/api/v1/app/${app}/endpoint`, { url: 'http://127.0.0.1:9/', eventTypes: [] });
    expect(made.status).toBe(422);
    const endpoint = await newEndpoint(app, 'http://127.0.0.1:9/');
    expect((await call('PATCH', `/api/v1/app/${app}/endpoint/${endpoint}`, { eventTypes: [] })).status).toBe(422);
  });
});

describe("a Zap's endpoint pointed elsewhere while its messages are retried (worker.rs)", () => {
  /** The URL each attempt of the message went to, oldest first. */
  const urls = (app: string, message: string) => emulator.attempts(app, message).map((attempt) => attempt.url);

  it('sends an attempt after a PATCH to the new URL at once: the API clears the cache of endpoints (endpoint/crud.rs)', async () => {
    await start({ retryScheduleMs: [] });
    const before = await receiver(() => 500);
    const after = await receiver();
    const app = await newApp();
    const endpoint = await newEndpoint(app, before.url);
    const message = await send(app);
    await emulator.idle();
    expect((await call('PATCH', `/api/v1/app/${app}/endpoint/${endpoint}`, { url: after.url })).status).toBe(200);
    emulator.resend(app, message, endpoint);
    await emulator.idle();
    expect(urls(app, message)).toEqual([before.url, after.url]);
  });

  it('with endpointCacheMs, reads the endpoint as it was when last read within that time: its old URL, still enabled (layered_fetch)', async () => {
    // The cache's age is measured by the emulator's clock, moved here by hand: no wait, no race with timers.
    let now = Date.now();
    await start({ retryScheduleMs: [], endpointCacheMs: 30_000, clock: () => now });
    const before = await receiver(() => 500);
    const after = await receiver();
    const app = await newApp();
    const endpoint = await newEndpoint(app, before.url);
    const patch = (body: unknown) => call('PATCH', `/api/v1/app/${app}/endpoint/${endpoint}`, body);
    const resend = async () => {
      emulator.resend(app, message, endpoint);
      await emulator.idle();
    };
    // The first attempt reads the app's endpoints: kept 30 s from now.
    const message = await send(app);
    await emulator.idle();
    expect((await patch({ url: after.url })).status).toBe(200);
    await resend();
    now += 29_999;
    await resend();
    expect(urls(app, message)).toEqual([before.url, before.url, before.url]);
    // 30 s on, the next attempt reads them afresh (and keeps them 30 s from then).
    now += 1;
    await resend();
    expect(urls(app, message)).toEqual([before.url, before.url, before.url, after.url]);
    // Disabled: an attempt within the time still reads it enabled; after it, none is made.
    expect((await patch({ disabled: true })).status).toBe(200);
    await resend();
    now += 30_000;
    await resend();
    expect(urls(app, message)).toEqual([before.url, before.url, before.url, after.url, after.url]);
    expect(before.received).toHaveLength(3);
    expect(after.received).toHaveLength(2);
  });

  it('with manualAttemptEndsRetries, a failed manual attempt ends the scheduled retries; without it they go on', async () => {
    // One attempt at a time, in the order queued: the manual attempt is made before the scheduled retry is due.
    const run = async (manualAttemptEndsRetries: boolean) => {
      await start({ retryScheduleMs: [5, 5], concurrency: 1, manualAttemptEndsRetries });
      const down = await receiver(() => 500);
      const app = await newApp();
      const endpoint = await newEndpoint(app, down.url);
      const release = emulator.holdDeliveries();
      const message = await send(app);
      emulator.resend(app, message, endpoint);
      release();
      await emulator.idle();
      const made = emulator.attempts(app, message).map((attempt) => `${attempt.triggerType} ${attempt.status}`);
      await emulator.stop();
      return made;
    };
    expect(await run(true)).toEqual(['scheduled fail', 'manual fail']);
    expect(await run(false)).toEqual(['scheduled fail', 'manual fail', 'scheduled fail', 'scheduled fail']);
  });
});

describe('what the contract suite asks Svix Cloud, as the open-source server answers it', () => {
  it("answers a browser's CORS preflight without a key: any origin, any method (lib.rs, CorsLayer)", async () => {
    await start();
    const preflight = await fetch(`${emulator.url}/api/v1/app`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://zapier.com',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization');
  });

  it('recovers: resends what failed since a time and never succeeded, and no further back than 14 days (endpoint/recovery.rs)', async () => {
    await start({ retryScheduleMs: [] });
    let down = true;
    const target = await receiver(() => (down ? 503 : 204));
    const app = await newApp();
    const endpoint = await newEndpoint(app, target.url);
    const failed = await send(app);
    await emulator.idle();
    down = false;
    await send(app);
    await emulator.idle();
    const since = new Date(Date.now() - 60_000).toISOString();
    const recovered = await call('POST', `/api/v1/app/${app}/endpoint/${endpoint}/recover`, { since });
    expect(recovered).toEqual({ status: 202, body: expect.objectContaining({ task: 'endpoint.recover' }) });
    await emulator.idle();
    expect(target.received.map((delivery) => delivery.headers['svix-id'])).toEqual([
      failed,
      expect.stringMatching(/^msg_/),
      failed,
    ]);
    const tooFar = new Date(Date.now() - 15 * 24 * 60 * 60 * 1000).toISOString();
    expect((await call('POST', `/api/v1/app/${app}/endpoint/${endpoint}/recover`, { since: tooFar })).status).toBe(422);
  });

  it("replays what an endpoint was never sent, made since a time, as Svix Cloud's API contract says; the open-source server has no such route (404)", async () => {
    await start();
    await registerEventType();
    const app = await newApp();
    const target = await receiver();
    // A message made before `since` is never replayed.
    const pause = () => new Promise((resolve) => setTimeout(resolve, 10));
    const early = await send(app);
    await pause();
    const since = new Date().toISOString();
    await pause();
    const before = await send(app);
    const afterwards = await newEndpoint(app, target.url);
    const after = await send(app);
    await emulator.idle();
    const path = `/api/v1/app/${app}/endpoint/${afterwards}/replay-missing`;
    expect(await call('POST', path, { since })).toEqual({
      status: 202,
      body: expect.objectContaining({ task: 'endpoint.replay' }),
    });
    await emulator.idle();
    // The message made before the endpoint (but since) is sent; the one it was sent already is not sent again.
    const received = target.received.map((delivery) => delivery.headers['svix-id']);
    expect(received).toEqual([after, before]);
    expect(received).not.toContain(early);
    await emulator.stop();
    await start({ withoutReplayMissing: true });
    const other = await newApp();
    const endpoint = await newEndpoint(other, target.url);
    const path404 = `/api/v1/app/${other}/endpoint/${endpoint}/replay-missing`;
    expect((await call('POST', path404, { since })).status).toBe(404);
  });
});
