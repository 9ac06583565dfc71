import { SvixEmulator, type EmulatorOptions, type FaultContext } from '../../src/tools/sandbox/emulator';

/**
 * The emulator's instruments for other tests: `delayMs` (a slow Svix) and
 * `stats().maxInFlight` (how many requests for one route were handled at once).
 */

const KEY = 'testsk_emulatorInstruments.eu';

let emulator: SvixEmulator | undefined;

const start = async (options: Partial<EmulatorOptions> = {}): Promise<SvixEmulator> => {
  emulator = new SvixEmulator({ apiKey: KEY, retryScheduleMs: [], ...options });
  await emulator.start();
  return emulator;
};

afterEach(async () => {
  await emulator?.stop();
  emulator = undefined;
});

const request = async (
  started: SvixEmulator,
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<{ status: number; body: unknown }> => {
  const response = await fetch(`${started.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(signal ? { signal } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
};

const idOf = (body: unknown): string => {
  if (typeof body === 'object' && body !== null && 'id' in body && typeof body.id === 'string') return body.id;
  throw new Error('the answer has no id');
};

const timed = async <T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> => {
  const began = performance.now();
  const value = await work();
  return { ms: performance.now() - began, value };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits, a few milliseconds at a time, until `done` holds: as long as a busy machine needs, no longer. */
const until = async (done: () => boolean | Promise<boolean>, what: string): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`waited 10 s for ${what}`);
    await sleep(5);
  }
};

/** An app with two endpoints, made through HTTP. */
const appWithEndpoints = async (started: SvixEmulator) => {
  const app = idOf((await request(started, 'POST', '/api/v1/app', { name: 'Instruments' })).body);
  const first = idOf(
    (await request(started, 'POST', `/api/v1/app/${app}/endpoint`, { url: 'http://127.0.0.1:9/a' })).body,
  );
  const second = idOf(
    (await request(started, 'POST', `/api/v1/app/${app}/endpoint`, { url: 'http://127.0.0.1:9/b' })).body,
  );
  return { app, first, second };
};

describe('delayMs', () => {
  it('holds the answers it is asked to, with the method, path and count of the request', async () => {
    const contexts: FaultContext[] = [];
    const started = await start({
      delayMs: (context) => {
        contexts.push(context);
        // A second: an answer not held is far quicker than that however busy the machine is.
        return context.path.endsWith('/secret') && context.seen === 0 ? 1_000 : undefined;
      },
    });
    const { app, first } = await appWithEndpoints(started);
    const secretPath = `/api/v1/app/${app}/endpoint/${first}/secret`;
    const slow = await timed(() => request(started, 'GET', secretPath));
    expect(slow.value.status).toBe(200);
    expect(slow.ms).toBeGreaterThanOrEqual(990);
    // Only the first read was held.
    const fast = await timed(() => request(started, 'GET', secretPath));
    expect(fast.value).toEqual(slow.value);
    expect(fast.ms).toBeLessThan(slow.ms);
    expect(contexts.filter((context) => context.path === secretPath)).toEqual([
      { method: 'GET', path: secretPath, seen: 0 },
      { method: 'GET', path: secretPath, seen: 1 },
    ]);
  });

  it('does the work at once and holds only the answer', async () => {
    // Held for a minute: the answer cannot arrive while the test looks, however busy the machine is.
    const started = await start({
      delayMs: ({ method, path }) => (method === 'POST' && path.endsWith('/msg') ? 60_000 : undefined),
    });
    const app = idOf((await request(started, 'POST', '/api/v1/app', { name: 'Held' })).body);
    let answered = false;
    const sending = request(started, 'POST', `/api/v1/app/${app}/msg`, {
      eventType: 'AUCTION_STATUS_CHANGE',
      payload: { status: 'DRAFT' },
    }).then((answer) => {
      answered = true;
      return answer;
    });
    // The message is there before its answer is sent.
    await until(async () => {
      const listed = await request(started, 'GET', `/api/v1/app/${app}/msg`);
      return Array.isArray(Object(listed.body).data) && Object(listed.body).data.length > 0;
    }, 'the message to be listed');
    const listed = await request(started, 'GET', `/api/v1/app/${app}/msg`);
    expect(answered).toBe(false);
    expect(listed.body).toMatchObject({ data: [{ eventType: 'AUCTION_STATUS_CHANGE' }] });
    // The answer is still held: stop() drops it.
    await started.stop();
    await expect(sending).rejects.toThrow();
    expect(answered).toBe(false);
  });

  it('holds refusals and injected replies too', async () => {
    const started = await start({
      delayMs: () => 200,
      fault: ({ path }) =>
        path === '/api/v1/broken' ? { kind: 'reply', status: 502, body: 'Bad gateway' } : undefined,
    });
    const refused = await timed(() =>
      fetch(`${started.url}/api/v1/app`, { headers: { Authorization: 'Bearer wrong' } }).then((r) => r.status),
    );
    expect(refused.value).toBe(401);
    expect(refused.ms).toBeGreaterThanOrEqual(190);
    const injected = await timed(() => fetch(`${started.url}/api/v1/broken`).then((r) => r.status));
    expect(injected.value).toBe(502);
    expect(injected.ms).toBeGreaterThanOrEqual(190);
  });

  it('lets stop() end at once, dropping the answers it still holds', async () => {
    const started = await start({ delayMs: () => 60_000 });
    const pending = fetch(`${started.url}/api/v1/app`, { headers: { Authorization: `Bearer ${KEY}` } });
    await sleep(50);
    const stopping = await timed(() => started.stop());
    // Far less than the minute the answer is held, with room for a busy machine.
    expect(stopping.ms).toBeLessThan(10_000);
    await expect(pending).rejects.toThrow();
  });
});

describe('stats().maxInFlight', () => {
  it('counts the most requests handled at once for each method and path', async () => {
    // Held a second: the requests sent together overlap however busy the machine is.
    const started = await start({ delayMs: ({ path }) => (path.endsWith('/secret') ? 1_000 : undefined) });
    const { app, first, second } = await appWithEndpoints(started);
    const firstSecret = `/api/v1/app/${app}/endpoint/${first}/secret`;
    const secondSecret = `/api/v1/app/${app}/endpoint/${second}/secret`;
    await Promise.all([
      request(started, 'GET', firstSecret),
      request(started, 'GET', firstSecret),
      request(started, 'GET', `${firstSecret}/`),
      request(started, 'GET', secondSecret),
    ]);
    // One after another: never more than one at a time.
    for (let index = 0; index < 3; index += 1) await request(started, 'GET', `/api/v1/app/${app}`);
    expect(started.stats().maxInFlight).toMatchObject({
      [`GET ${firstSecret}`]: 3,
      [`GET ${secondSecret}`]: 1,
      [`GET /api/v1/app/${app}`]: 1,
      'POST /api/v1/app': 1,
    });
  });

  it('shows that a client read each secret one at a time', async () => {
    const started = await start({ delayMs: ({ path }) => (path.endsWith('/secret') ? 50 : undefined) });
    const { app, first, second } = await appWithEndpoints(started);
    // Each endpoint's reads in turn, the two endpoints side by side.
    const readInTurn = async (endpoint: string) => {
      for (let index = 0; index < 3; index += 1)
        await request(started, 'GET', `/api/v1/app/${app}/endpoint/${endpoint}/secret`);
    };
    await Promise.all([readInTurn(first), readInTurn(second)]);
    const stats = started.stats().maxInFlight;
    expect(stats[`GET /api/v1/app/${app}/endpoint/${first}/secret`]).toBe(1);
    expect(stats[`GET /api/v1/app/${app}/endpoint/${second}/secret`]).toBe(1);
  });

  it('stops counting a request when its connection goes, answered or not', async () => {
    const started = await start({
      fault: ({ path, seen }) => (path === '/api/v1/app' && seen === 0 ? { kind: 'hang' } : undefined),
    });
    await expect(request(started, 'GET', '/api/v1/app', undefined, AbortSignal.timeout(100))).rejects.toThrow();
    // Until the emulator has seen the connection go (its count of requests in flight, read from outside).
    await until(() => {
      const inFlight: unknown = Reflect.get(started, 'inFlight');
      if (!(inFlight instanceof Map)) throw new Error('the emulator no longer counts requests in flight');
      return !inFlight.has('GET /api/v1/app');
    }, 'the close');
    expect((await request(started, 'GET', '/api/v1/app')).status).toBe(200);
    expect(started.stats().maxInFlight['GET /api/v1/app']).toBe(1);
  });
});
