import { randomBytes, randomUUID } from 'node:crypto';
import { isRight } from 'fp-ts/Either';
import { MessageOut } from '../../src/provider/codecs';
import { EVENT_TYPE_NAME } from '../../src/provider/eventType';
import { endpointUid } from '../../src/provider/ids';
import { ProviderEmulator, type Fault, type FaultContext } from '../../src/sandbox/emulator';
import { newId, newSecret } from '../../src/sandbox/emulator/store';
import { ProviderClient } from '../../src/setup/client';
import { runSetup } from '../../src/setup/setup';
import { SubscribeData } from '../../src/triggers/delivery';
import type { CacheCall, RpcFault } from '../../src/sandbox/platform';
import { refusalMessage } from '../../src/triggers/delivery';
import { requestSettings } from '../../src/provider/request';
import { secretHistoryKey, secretSettings } from '../../src/triggers/endpointSecret';
import { RECORD_REFUSALS } from '../../src/triggers/record';
import { classify, currentOf, SecretHistory } from '../../src/triggers/secretHistory';
import { failure, signedRequest } from '../helpers/fixtures';
import { anotherProcess, IDENTITY, usePlatform, type ZapierProcess } from '../helpers/platform';

/**
 * Which deliveries run, as Zapier runs them (core's handler, z.cache on the
 * platform stand-in) against the provider emulator: on the current secret,
 * on the provider's record for a secret the endpoint had or one never seen
 * here, and what each costs. Two Zapier processes are two module registries,
 * each with its own core and memory, sharing only the stand-in's cache.
 */

/** A hook each test may set, called for every cache call the platform stand-in answers. */
let zapierFault: ((call: CacheCall) => RpcFault | undefined | void) | undefined;
const zapier = usePlatform({
  delayMs: 1,
  fault: (call) => zapierFault?.(call) ?? undefined,
});
// Some tests wait for the allowance of calls on purpose (seconds each).
jest.setTimeout(60_000);
const KEY = `testsk_${randomBytes(8).toString('hex')}`;
const realNow = Date.now.bind(Date);

let emulator: ProviderEmulator;
let client: ProviderClient;
let authData: { apiKey: string; appId: string; serverUrl: string };
let zap: SubscribeData;
/** Moves the emulator's clock for payload retention. */
let emulatorClockShift = 0;
/** Provider calls the emulator answered: reads of the endpoint's secret, and reads of a message's record. */
const calls = { secret: 0, record: 0 };
/** Faults to answer the next such calls with. */
const faults: { secret: Fault[]; record: Fault[] } = { secret: [], record: [] };

const isSecretRead = ({ method, path }: FaultContext) => method === 'GET' && path.endsWith('/secret');
const isRecordRead = ({ method, path }: FaultContext) => method === 'GET' && /\/msg\/[^/]+$/.test(path);

const turnOn = async (targetUrl: string): Promise<SubscribeData> => {
  const subscribed = SubscribeData.decode(await zapier().subscribe({ authData, targetUrl, inputData: {} }));
  if (!isRight(subscribed)) throw new Error('subscribe returned no endpoint');
  return subscribed.right;
};

beforeEach(async () => {
  calls.secret = 0;
  calls.record = 0;
  faults.secret = [];
  faults.record = [];
  emulatorClockShift = 0;
  emulator = new ProviderEmulator({
    apiKey: KEY,
    clock: () => Date.now() + emulatorClockShift,
    fault: (context) => {
      if (isSecretRead(context)) {
        calls.secret += 1;
        return faults.secret.shift();
      }
      if (isRecordRead(context)) {
        calls.record += 1;
        return faults.record.shift();
      }
      return undefined;
    },
    // A read takes a moment, so reads that could overlap would.
    delayMs: (context) => (isSecretRead(context) || isRecordRead(context) ? 20 : undefined),
  });
  const serverUrl = await emulator.start();
  client = new ProviderClient({ baseUrl: serverUrl, apiKey: KEY });
  const { appId } = await runSetup({ client });
  authData = { apiKey: KEY, appId, serverUrl };
  zap = await turnOn('http://127.0.0.1:9/hooks/standard/1/');
});

const defaults = { ...secretSettings };
const requestDefaults = { ...requestSettings };

afterEach(async () => {
  zapierFault = undefined;
  Object.assign(secretSettings, defaults);
  Object.assign(requestSettings, requestDefaults);
  jest.restoreAllMocks();
  await emulator.stop();
});

/** From now on this side's clock (Date.now, in every process of the test) reads `ms` later. */
const later = (ms: number): void => {
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
};

interface AuctionEvent {
  id: string;
  payload: { auctioneerUuid: string; auctionUuid: string; status: string };
  /** The body the provider delivers. */
  body: string;
}

/** A real auction event in the Consumer App, as the auction service sends it. */
const send = async (extra: Record<string, unknown> = {}): Promise<AuctionEvent> => {
  const payload = { auctioneerUuid: randomUUID(), auctionUuid: randomUUID(), status: 'OPEN_FOR_BIDDING' };
  const answer = await client.call({
    method: 'POST',
    path: `/api/v1/app/${authData.appId}/msg`,
    body: { eventType: EVENT_TYPE_NAME, payload, ...extra },
    action: 'sending an auction event',
  });
  const { id } = client.decode(MessageOut, answer.body, 'sending an auction event');
  return { id, payload, body: JSON.stringify(payload) };
};

/** What nobody sent: a made-up message id and a body of a made-up auction. */
const junk = (): AuctionEvent => {
  const payload = { auctioneerUuid: 'forged-auctioneer', auctionUuid: 'forged-auction', status: 'LOTS_SOLD' };
  return { id: newId('msg'), payload, body: JSON.stringify(payload) };
};

/** The bundle of a delivery of the event to the Zap, signed now with these secrets (as Zapier queues it). */
const delivery = (event: AuctionEvent, secrets: string[], subscribeData: SubscribeData = zap) => ({
  authData,
  subscribeData,
  rawRequest: signedRequest(event.body, { msgId: event.id, secrets }),
  inputData: {},
});

const main: ZapierProcess = { perform: (bundle) => zapier().perform(bundle) };

/** A rotation of the endpoint's secret to a key given here, so the test knows it without reading it. */
const rotate = async (gracePeriodSeconds: number, endpointId = zap.id): Promise<string> => {
  const key = newSecret();
  await client.call({
    method: 'POST',
    path: `/api/v1/app/${authData.appId}/endpoint/${endpointId}/secret/rotate`,
    body: { key, gracePeriodSeconds },
    action: 'rotating the secret',
  });
  return key;
};

/** The items a Zap run received for the event: the event's own fields. */
const ranWith = (event: AuctionEvent) => [
  expect.objectContaining({
    id: event.id,
    auctionUuid: event.payload.auctionUuid,
    auctioneerUuid: event.payload.auctioneerUuid,
    status: event.payload.status,
  }),
];

/** An immediate rotation, and a genuine delivery signed with the new secret that teaches it to this process. */
const rotateAndTeach = async (process: ZapierProcess = main): Promise<string> => {
  const rotated = await rotate(0);
  const taught = await send();
  await expect(process.perform(delivery(taught, [rotated]))).resolves.toEqual(ranWith(taught));
  return rotated;
};

/** Runs the bundles `at` a time, as Zapier's workers take them from its queue; each outcome in order. */
const inBatches = async (bundles: object[], at: number, process: ZapierProcess = main) => {
  const outcomes: Array<{ items?: unknown; error?: string }> = [];
  for (let index = 0; index < bundles.length; index += at) {
    const batch = bundles.slice(index, index + at).map((bundle) =>
      process.perform(bundle).then(
        (items) => ({ items }),
        async (error: unknown) => ({ error: (await failure(Promise.reject(error))).name }),
      ),
    );
    outcomes.push(...(await Promise.all(batch)));
  }
  return outcomes;
};

describe("deliveries that waited in Zapier's queue across a rotation", () => {
  it('30 queued across an immediate rotation, 8 at a time: each runs once, with the provider’s copy of its event', async () => {
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 30; index += 1) events.push(await send());
    // Signed and sent before the rotation; Zapier answered the provider and queued them.
    const queued = events.map((event) => delivery(event, [zap.secret]));
    await rotateAndTeach();
    expect(calls.secret).toBe(1);
    const outcomes = await inBatches(queued, 8);
    expect(outcomes).toEqual(events.map((event) => ({ items: ranWith(event) })));
    expect(calls.record).toBe(30);
    // Sent again (a retry, a resend): none runs a second time.
    const again = await inBatches(queued, 8);
    expect(again).toEqual(events.map(() => ({ items: [] })));
    expect(calls.secret).toBe(1);
  });

  it('a delivery signed before a rotation with a grace period still runs when it is checked after the grace ended', async () => {
    const waiting = await send();
    const queued = delivery(waiting, [zap.secret]);
    const rotated = await rotate(1);
    // During the grace period deliveries carry both signatures, and run without any call.
    const during = await send();
    await expect(main.perform(delivery(during, [rotated, zap.secret]))).resolves.toEqual(ranWith(during));
    expect(calls.secret + calls.record).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    // After it, a delivery signed with the new secret alone teaches it; then the queued one arrives.
    const after = await send();
    await expect(main.perform(delivery(after, [rotated]))).resolves.toEqual(ranWith(after));
    await expect(main.perform(queued)).resolves.toEqual(ranWith(waiting));
    expect(calls).toEqual({ secret: 1, record: 1 });
  });

  it('a new process whose z.cache already holds the new secret still runs a delivery signed with the old one', async () => {
    const waiting = await send();
    const queued = delivery(waiting, [zap.secret]);
    await rotateAndTeach(await anotherProcess(zapier().platform));
    const cold = await anotherProcess(zapier().platform);
    await expect(cold.perform(queued)).resolves.toEqual(ranWith(waiting));
    expect(calls).toEqual({ secret: 1, record: 1 });
  });

  it('a delivery signed with a secret this side never saw (two rotations while it waited) runs once the record confirms it', async () => {
    const waiting = await send();
    const first = await rotate(0);
    const queued = delivery(waiting, [first]);
    // Junk signed at the same moment is refused: the record does not know it.
    const forged = delivery(junk(), [newSecret()]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await rotateAndTeach();
    await expect(main.perform(queued)).resolves.toEqual(ranWith(waiting));
    expect((await failure(main.perform(forged))).message).toBe(RECORD_REFUSALS.notConfirmed);
    expect(calls.record).toBe(2);
  });
});

describe("a secret the endpoint had: the provider's record decides", () => {
  it('runs the provider’s copy, never the delivered body: a real id with another body, signed with a revoked secret', async () => {
    const genuine = await send();
    await rotateAndTeach();
    const tampered = { ...genuine, body: JSON.stringify({ ...genuine.payload, status: 'LOTS_SOLD', extra: 'forged' }) };
    const items = await main.perform(delivery(tampered, [zap.secret]));
    expect(items).toEqual(ranWith(genuine));
    expect(items).toEqual([expect.not.objectContaining({ extra: expect.anything() })]);
    // The genuine delivery arrives after: the event has run already.
    await expect(main.perform(delivery(genuine, [zap.secret]))).resolves.toEqual([]);
  });

  it('refuses a made-up id (404) with a halt', async () => {
    await rotateAndTeach();
    const refused = await failure(main.perform(delivery(junk(), [zap.secret])));
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.notConfirmed });
    expect(calls.record).toBe(1);
  });

  it('refuses an id the record answers with another message (an eventId), and a message of another type', async () => {
    const lookalike = newId('msg');
    await send({ eventId: lookalike });
    const other = await send({ eventType: 'SOMETHING_ELSE' });
    await rotateAndTeach();
    const byEventId = { ...junk(), id: lookalike };
    expect(await failure(main.perform(delivery(byEventId, [zap.secret])))).toMatchObject({
      name: 'HaltedError',
      message: RECORD_REFUSALS.notConfirmed,
    });
    expect(await failure(main.perform(delivery(other, [zap.secret])))).toMatchObject({
      name: 'HaltedError',
      message: RECORD_REFUSALS.notConfirmed,
    });
  });

  it('does not run a genuine message older than this Zap’s endpoint', async () => {
    const old = await send();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const newer = await turnOn('http://127.0.0.1:9/hooks/standard/2/');
    const rotated = await rotate(0, newer.id);
    const taught = await send();
    await expect(main.perform(delivery(taught, [rotated], newer))).resolves.toEqual(ranWith(taught));
    const refused = await failure(main.perform(delivery(old, [newer.secret], newer)));
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.beforeEndpoint(old.id) });
    // Known from both ids: no call was needed to tell.
    expect(calls.record).toBe(0);
  });

  it('halts, naming the message, when the record no longer keeps the content (its retention ended, or it was deleted)', async () => {
    const shortLived = await send({ payloadRetentionHours: 1 });
    const deleted = await send();
    await client.call({
      method: 'DELETE',
      path: `/api/v1/app/${authData.appId}/msg/${deleted.id}/content`,
      action: 'deleting the content',
    });
    await rotateAndTeach();
    emulatorClockShift = 2 * 60 * 60 * 1000;
    for (const event of [shortLived, deleted]) {
      const refused = await failure(main.perform(delivery(event, [zap.secret])));
      expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.expired(event.id) });
      expect(refused.message).toContain(event.id);
    }
  });

  it('a provider that cannot be reached is an error (not a halt) naming the event and how to send it again', async () => {
    const waiting = await send();
    await rotateAndTeach();
    for (const fault of [{ kind: 'reply', status: 503, body: '' }, { kind: 'drop' }] satisfies Fault[]) {
      faults.record = [fault, fault];
      const failed = await failure(main.perform(delivery(waiting, [zap.secret])));
      expect(failed.name).not.toBe('HaltedError');
      expect(failed.code).toBe('EventNotConfirmed');
      expect(failed.message).toContain(waiting.id);
      expect(failed.message).toMatch(/Svix's dashboard.*resend it/);
    }
    // Once it answers, the event runs (it was never claimed).
    await expect(main.perform(delivery(waiting, [zap.secret]))).resolves.toEqual(ranWith(waiting));
  });

  it('a moment’s failure of the record is tried again, and the event runs', async () => {
    const waiting = await send();
    await rotateAndTeach();
    faults.record = [{ kind: 'reply', status: 502, body: '<html>Bad gateway</html>' }];
    await expect(main.perform(delivery(waiting, [zap.secret]))).resolves.toEqual(ranWith(waiting));
    expect(calls.record).toBe(2);
  });
});

describe('a revoked secret', () => {
  it('stops verifying in every process within a minute once any process has seen the new one', async () => {
    const first = await send();
    await expect(main.perform(delivery(first, [zap.secret]))).resolves.toEqual(ranWith(first));
    // The secret leaked: rotated with no grace period. Another process learns the new one.
    await rotateAndTeach(await anotherProcess(zapier().platform));
    expect(calls.secret).toBe(1);
    later(61_000);
    const refused = await failure(main.perform(delivery(junk(), [zap.secret])));
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.notConfirmed });
    // This process learnt it from z.cache, not from the provider; only the record was asked.
    expect(calls).toEqual({ secret: 1, record: 1 });
  });

  it('stops verifying within ten minutes even when no process has seen the new one', async () => {
    const first = await send();
    await expect(main.perform(delivery(first, [zap.secret]))).resolves.toEqual(ranWith(first));
    await rotate(0);
    later(10 * 60_000 + 1_000);
    const refused = await failure(main.perform(delivery(junk(), [zap.secret])));
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.notConfirmed });
    expect(calls).toEqual({ secret: 1, record: 1 });
  });

  it('costs a warm process one cache read per minute, not a round trip per delivery', async () => {
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 6; index += 1) events.push(await send());
    const [firstEvent, ...rest] = events;
    if (!firstEvent) throw new Error('no events');
    await main.perform(delivery(firstEvent, [zap.secret]));
    zapier().platform.resetCalls();
    for (const event of rest) await expect(main.perform(delivery(event, [zap.secret]))).resolves.toHaveLength(1);
    const historyReads = () =>
      zapier()
        .calls()
        .filter((call) => call.key === secretHistoryKey(zap.id));
    // One round trip each: the claim.
    expect(zapier().calls()).toHaveLength(rest.length);
    expect(historyReads()).toEqual([]);
    later(61_000);
    const next = await send();
    await expect(main.perform(delivery(next, [zap.secret]))).resolves.toHaveLength(1);
    expect(historyReads()).toEqual([expect.objectContaining({ method: 'zcache_get', scope: ['auth'] })]);
    expect(zapier().calls()).toHaveLength(rest.length + 2);
  });

  it('a secret read more than ten minutes ago that still matches runs, and is fresh again after one read', async () => {
    const first = await send();
    await expect(main.perform(delivery(first, [zap.secret]))).resolves.toHaveLength(1);
    later(11 * 60_000);
    const second = await send();
    const third = await send();
    await expect(main.perform(delivery(second, [zap.secret]))).resolves.toHaveLength(1);
    await expect(main.perform(delivery(third, [zap.secret]))).resolves.toHaveLength(1);
    expect(calls).toEqual({ secret: 1, record: 0 });
  });
});

describe('deliveries signed with no secret known here', () => {
  it('a genuine delivery after an immediate rotation runs after one read; 12 at once share it', async () => {
    const rotated = await rotate(0);
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 12; index += 1) events.push(await send());
    const outcomes = await Promise.all(events.map((event) => main.perform(delivery(event, [rotated]))));
    expect(outcomes).toEqual(events.map(ranWith));
    expect(calls).toEqual({ secret: 1, record: 0 });
  });

  it('40 junk deliveries, 8 at a time, cost at most 6 provider calls, and a genuine one with a new secret runs right after', async () => {
    const outcomes = await inBatches(
      Array.from({ length: 40 }, () => delivery(junk(), [newSecret()])),
      8,
    );
    // Halts, every one: errors would count towards Zapier turning the Zap off.
    expect(outcomes).toEqual(Array.from({ length: 40 }, () => ({ error: 'HaltedError' })));
    expect(calls.secret + calls.record).toBeLessThanOrEqual(6);
    const rotated = await rotate(0);
    const genuine = await send();
    await expect(main.perform(delivery(genuine, [rotated]))).resolves.toEqual(ranWith(genuine));
  });

  it('junk one after another: three reads of the secret, then none until the allowance refills', async () => {
    secretSettings.refillMs = 60_000;
    const refusals: string[] = [];
    for (let index = 0; index < 6; index += 1) {
      const refused = await failure(main.perform(delivery(junk(), [newSecret()])));
      expect(refused.name).toBe('HaltedError');
      refusals.push(refused.message);
    }
    expect(calls).toEqual({ secret: 3, record: 0 });
    // Past the allowance, no read can be made in time: refused as unchecked, without waiting.
    expect(refusals.slice(3)).toEqual(Array.from({ length: 3 }, () => refusalMessage('unchecked-signature')));
  });

  it('a read that finds a new secret costs nothing: genuine rotations never use the allowance up', async () => {
    secretSettings.refillMs = 60_000;
    for (let index = 0; index < 5; index += 1) await rotateAndTeach();
    expect(calls.secret).toBe(5);
    // The whole burst is still there for whatever comes next: three calls, then none.
    for (let index = 0; index < 4; index += 1) await failure(main.perform(delivery(junk(), [newSecret()])));
    expect(calls.secret + calls.record).toBe(5 + 3);
  });

  it('a read of the secret that fails for a moment is tried again, and the delivery runs', async () => {
    const rotated = await rotate(0);
    faults.secret = [{ kind: 'reply', status: 503, body: '' }];
    const event = await send();
    await expect(main.perform(delivery(event, [rotated]))).resolves.toEqual(ranWith(event));
    expect(calls.secret).toBe(2);
  });

  it('a read that fails twice leaves the decision to the record, which needs no secret', async () => {
    const rotated = await rotate(0);
    const unavailable: Fault = { kind: 'reply', status: 503, body: '' };
    faults.secret = [unavailable, unavailable];
    const event = await send();
    await expect(main.perform(delivery(event, [rotated]))).resolves.toEqual(ranWith(event));
    expect(calls).toEqual({ secret: 2, record: 1 });
    // Junk is still refused that way: the record does not know it.
    faults.secret = [unavailable, unavailable];
    expect((await failure(main.perform(delivery(junk(), [newSecret()])))).message).toBe(RECORD_REFUSALS.notConfirmed);
  });

  it('when neither the secret nor the record can be read, the error names the event and how to send it again', async () => {
    const rotated = await rotate(0);
    const unavailable: Fault = { kind: 'reply', status: 503, body: '' };
    faults.secret = [unavailable, unavailable];
    faults.record = [unavailable, unavailable];
    const event = await send();
    const failed = await failure(main.perform(delivery(event, [rotated])));
    expect(failed.name).not.toBe('HaltedError');
    expect(failed.code).toBe('EventNotConfirmed');
    expect(failed.message).toContain(event.id);
    expect(failed.message).toMatch(/Svix's dashboard.*resend it/);
  });

  it('keeps what it learnt in z.cache, scoped to the connection, for as long as runs are remembered', async () => {
    await rotateAndTeach();
    const shared = zapier()
      .calls()
      .filter((call) => call.method === 'zcache_set' && call.key === secretHistoryKey(zap.id));
    expect(shared).toEqual([expect.objectContaining({ scope: ['auth'], ttl: 7 * 24 * 60 * 60 + 10 * 60, nx: false })]);
  });

  it('writes again when another process overwrote what it shared, so no process loses the new secret', async () => {
    const stale = { secrets: [{ secret: zap.secret, from: Date.now() - 60_000, seen: Date.now() - 60_000 }] };
    let overwritten = false;
    zapierFault = (call) => {
      // Between this process's write and its read-back, another process writes what it knew: only the old secret.
      if (call.method === 'zcache_get' && call.key === secretHistoryKey(zap.id) && !overwritten && written()) {
        overwritten = true;
        zapier().platform.poke(IDENTITY, secretHistoryKey(zap.id), stale);
      }
    };
    const written = () =>
      zapier()
        .calls()
        .some((call) => call.method === 'zcache_set' && call.key === secretHistoryKey(zap.id));
    const rotated = await rotateAndTeach();
    expect(overwritten).toBe(true);
    const kept = SecretHistory.decode(zapier().platform.peek(IDENTITY, secretHistoryKey(zap.id)));
    if (!isRight(kept)) throw new Error('no history in z.cache');
    expect(currentOf(kept.right)?.secret).toBe(rotated);
    expect(classify(kept.right, (secret) => secret === zap.secret).kind).toBe('replaced');
  });

  it('a Zap turned on by an older version (no word on the cache) learns it honours nx on its first read', async () => {
    const { cacheHonoursNx, ...older } = zap;
    expect(cacheHonoursNx).toBe(true);
    zap = older;
    await rotateAndTeach();
    zapier().platform.resetCalls();
    const next = await send();
    const rotated = currentOf(
      (() => {
        const kept = SecretHistory.decode(zapier().platform.peek(IDENTITY, secretHistoryKey(zap.id)));
        if (!isRight(kept)) throw new Error('no history in z.cache');
        return kept.right;
      })(),
    )?.secret;
    await expect(main.perform(delivery(next, [rotated ?? '']))).resolves.toEqual(ranWith(next));
    // One round trip: the claim alone, with nx (no read first).
    expect(
      zapier()
        .calls()
        .map((call) => call.method),
    ).toEqual(['zcache_set']);
  });

  it('an endpoint whose id carries no time and whose subscribe did not say when refuses what the record would check', async () => {
    const waiting = await send();
    await rotateAndTeach();
    // The same endpoint, named by the uid its subscribe gave it, which carries no time.
    const { checkedAt, ...undated } = { ...zap, id: endpointUid('zapier', 'http://127.0.0.1:9/hooks/standard/1/') };
    expect(checkedAt).toBeDefined();
    zapier().coldStart();
    const refused = await failure(main.perform(delivery(waiting, [zap.secret], undated)));
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.notConfirmed });
    expect(calls.record).toBe(0);
  });
});

describe('secrets used again', () => {
  it('a secret rotated back to (a key used again) is current again once a second read confirms it', async () => {
    await rotateAndTeach();
    // Back to the first key: a read that shows a replaced secret is made twice before it is believed.
    await client.call({
      method: 'POST',
      path: `/api/v1/app/${authData.appId}/endpoint/${zap.id}/secret/rotate`,
      body: { key: zap.secret, gracePeriodSeconds: 0 },
      action: 'rotating back',
    });
    const before = calls.secret;
    await failure(main.perform(delivery(junk(), [newSecret()])));
    expect(calls.secret - before).toBe(2);
    // Signed with the first key, which is current again: it runs on its signature, without the record.
    const records = calls.record;
    const event = await send();
    await expect(main.perform(delivery(event, [zap.secret]))).resolves.toEqual(ranWith(event));
    expect(calls.record).toBe(records);
  });
});

describe('when z.cache has trouble', () => {
  it('a failed look at what other processes learnt is tried again after a few seconds, not a minute', async () => {
    let failNextHistoryRead = false;
    zapierFault = (call) => {
      if (failNextHistoryRead && call.method === 'zcache_get' && call.key === secretHistoryKey(zap.id)) {
        failNextHistoryRead = false;
        return { kind: 'error' };
      }
      return undefined;
    };
    const historyReads = () =>
      zapier()
        .calls()
        .filter((call) => call.method === 'zcache_get' && call.key === secretHistoryKey(zap.id)).length;
    await main.perform(delivery(await send(), [zap.secret]));
    const start = historyReads();
    later(61_000);
    failNextHistoryRead = true;
    await expect(main.perform(delivery(await send(), [zap.secret]))).resolves.toHaveLength(1);
    expect(historyReads()).toBe(start + 1);
    later(61_000 + secretSettings.syncRetryAfterMs + 1_000);
    await expect(main.perform(delivery(await send(), [zap.secret]))).resolves.toHaveLength(1);
    expect(historyReads()).toBe(start + 2);
  });
});

describe('when Svix has trouble', () => {
  it('a stale secret whose re-read fails is trusted, and read again no sooner than 30 seconds later', async () => {
    const first = await send();
    await expect(main.perform(delivery(first, [zap.secret]))).resolves.toHaveLength(1);
    const unavailable: Fault = { kind: 'reply', status: 503, body: '' };
    faults.secret = [unavailable, unavailable];
    later(11 * 60_000);
    for (let index = 0; index < 3; index += 1) {
      const event = await send();
      await expect(main.perform(delivery(event, [zap.secret]))).resolves.toHaveLength(1);
    }
    // Two attempts of one read; the next deliveries trusted it without a read.
    expect(calls.secret).toBe(2);
    later(11 * 60_000 + secretSettings.staleRetryAfterMs + 1_000);
    const after = await send();
    await expect(main.perform(delivery(after, [zap.secret]))).resolves.toHaveLength(1);
    expect(calls.secret).toBe(3);
  });

  it('junk arriving while the secret cannot be read costs the allowance in record calls, and a read every few seconds', async () => {
    secretSettings.refillMs = 60_000;
    secretSettings.readRetryAfterMs = 1_000;
    // A shorter budget keeps the test short: junk gives up after a few seconds of Svix's trouble.
    requestSettings.operationBudgetMs = 8_000;
    const unavailable: Fault = { kind: 'reply', status: 503, body: '' };
    faults.secret = Array.from({ length: 100 }, () => unavailable);
    const started = Date.now();
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, () => failure(main.perform(delivery(junk(), [newSecret()])))),
    );
    const elapsed = Date.now() - started;
    // However much arrives: the record within the allowance, and one read (two attempts) a second.
    expect(calls.record).toBeLessThanOrEqual(secretSettings.burst);
    expect(calls.secret).toBeLessThanOrEqual(2 * (1 + Math.floor(elapsed / secretSettings.readRetryAfterMs)));
    expect(outcomes.filter((outcome) => outcome.name === 'HaltedError')).toHaveLength(calls.record);
    const unchecked = outcomes.filter((outcome) => outcome.code === 'SignatureNotChecked');
    expect(unchecked).toHaveLength(12 - calls.record);
    expect(unchecked.every((outcome) => /resend it/.test(outcome.message))).toBe(true);
  });

  it('once Svix answers again, the secret is read at once, even when junk used the allowance up meanwhile', async () => {
    secretSettings.refillMs = 60_000;
    secretSettings.readRetryAfterMs = 1_000;
    const rotated = await rotate(0);
    const unavailable: Fault = { kind: 'reply', status: 503, body: '' };
    faults.secret = [unavailable, unavailable];
    // Junk that arrives while Svix fails the read asks the record, and uses the allowance up.
    const refused = await Promise.all(
      Array.from({ length: secretSettings.burst }, () => failure(main.perform(delivery(junk(), [newSecret()])))),
    );
    expect(refused.map((outcome) => outcome.message)).toEqual(
      Array.from({ length: secretSettings.burst }, () => RECORD_REFUSALS.notConfirmed),
    );
    expect(calls).toEqual({ secret: 2, record: secretSettings.burst });
    // The read Svix failed is owed: made a second later without the allowance, and it settles the delivery.
    const event = await send();
    await expect(main.perform(delivery(event, [rotated]))).resolves.toEqual(ranWith(event));
    expect(calls).toEqual({ secret: 3, record: secretSettings.burst });
  });

  it('deliveries arriving a moment after Svix failed a read wait for the read owed, and one read settles them all', async () => {
    secretSettings.readRetryAfterMs = 1_000;
    const rotated = await rotate(0);
    const unavailable: Fault = { kind: 'reply', status: 503, body: '' };
    faults.secret = [unavailable, unavailable];
    const first = await send();
    // The first delivery's read fails twice: the record decides for it.
    await expect(main.perform(delivery(first, [rotated]))).resolves.toEqual(ranWith(first));
    expect(calls).toEqual({ secret: 2, record: 1 });
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 6; index += 1) events.push(await send());
    const outcomes = await Promise.all(events.map((event) => main.perform(delivery(event, [rotated]))));
    expect(outcomes).toEqual(events.map(ranWith));
    expect(calls).toEqual({ secret: 3, record: 1 });
  });

  it('a call the record gave back is not taken away again by the allowance z.cache held before', async () => {
    secretSettings.refillMs = 600_000;
    secretSettings.readRetryAfterMs = 60_000;
    const unavailable: Fault = { kind: 'reply', status: 503, body: '' };
    const rotated = await rotate(0);
    faults.secret = [unavailable, unavailable];
    // Junk while the read fails: one record call, charged and shared (two calls left).
    expect((await failure(main.perform(delivery(junk(), [newSecret()])))).message).toBe(RECORD_REFUSALS.notConfirmed);
    // A genuine one, too soon to wait for the read owed, asks the record, which confirms it and
    // gives the call back: three again, in this process.
    const event = await send();
    await expect(main.perform(delivery(event, [rotated]))).resolves.toEqual(ranWith(event));
    expect(calls).toEqual({ secret: 2, record: 2 });
    // A minute later this process looks at z.cache again, which still holds the spending of before.
    later(61_000);
    faults.secret = [unavailable, unavailable];
    expect((await failure(main.perform(delivery(junk(), [newSecret()])))).message).toBe(RECORD_REFUSALS.notConfirmed);
    const kept = SecretHistory.decode(zapier().platform.peek(IDENTITY, secretHistoryKey(zap.id)));
    if (!isRight(kept)) throw new Error('no history in z.cache');
    // Three, less the one just spent (the refill over a minute is a tenth of a call).
    expect(kept.right.allowance?.tokens).toBeCloseTo(2, 5);
  });
});
