import { newId, newSecret } from '../../src/sandbox/emulator/store';
import type { Fault } from '../../src/sandbox/emulator';
import { timeOfProviderId } from '../../src/provider/ksuid';
import { RECORD_REFUSALS, WINDOW_MS } from '../../src/triggers/record';
import { failure } from '../helpers/fixtures';
import { anotherProcess } from '../helpers/platform';
import { UNAVAILABLE, useSecretWorld, type AuctionEvent } from '../helpers/secretWorld';

/**
 * Which deliveries run on their signature, as Zapier runs them (core's
 * handler, z.cache on the platform stand-in) against the provider emulator:
 * on the current secret, on the provider's record for a secret the endpoint
 * had, and a revoked secret in every process. Two Zapier processes are two
 * module registries, each with its own core and memory, sharing only the
 * stand-in's cache. What deliveries signed with no known secret cost is in
 * unknownSecret.test.ts.
 */

const world = useSecretWorld();
const {
  calls,
  faults,
  main,
  zapier,
  later,
  send,
  junk,
  delivery,
  rotate,
  ranWith,
  rotateAndTeach,
  inBatches,
  turnOn,
  historyCalls,
} = world;

describe("deliveries that waited in Zapier's queue across a rotation", () => {
  it('30 queued across an immediate rotation, 8 at a time: each runs once, with the provider’s copy of its event', async () => {
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 30; index += 1) events.push(await send());
    // Signed and sent before the rotation; Zapier answered the provider and queued them.
    const queued = events.map((event) => delivery(event, [world.zap.secret]));
    await rotateAndTeach();
    expect(calls.secret).toBe(1);
    const outcomes = await inBatches(queued, 8);
    expect(outcomes).toEqual(events.map((event) => ({ items: ranWith(event) })));
    // Svix's record, listed a 2-second window of message times at a time: one listing answers them all.
    const windows = new Set(events.map((event) => Math.floor((timeOfProviderId(event.id) ?? 0) / WINDOW_MS)));
    expect(calls.record).toBe(windows.size);
    // Sent again (a retry, a resend): none runs a second time.
    const again = await inBatches(queued, 8);
    expect(again).toEqual(events.map(() => ({ items: [] })));
    expect(calls.secret).toBe(1);
  });

  it('a delivery signed before a rotation with a grace period still runs when it is checked after the grace ended', async () => {
    const waiting = await send();
    const queued = delivery(waiting, [world.zap.secret]);
    const rotated = await rotate(1);
    // During the grace period deliveries carry both signatures, and run without any call.
    const during = await send();
    await expect(main.perform(delivery(during, [rotated, world.zap.secret]))).resolves.toEqual(ranWith(during));
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
    const queued = delivery(waiting, [world.zap.secret]);
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
    const items = await main.perform(delivery(tampered, [world.zap.secret]));
    expect(items).toEqual(ranWith(genuine));
    expect(items).toEqual([expect.not.objectContaining({ extra: expect.anything() })]);
    // The genuine delivery arrives after: the event has run already.
    await expect(main.perform(delivery(genuine, [world.zap.secret]))).resolves.toEqual([]);
  });

  it('refuses a made-up id (404) with a halt', async () => {
    await rotateAndTeach();
    const refused = await failure(main.perform(delivery(junk(), [world.zap.secret])));
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.notConfirmed });
    expect(calls.record).toBe(1);
  });

  it('refuses an id the record answers with another message (an eventId), and a message of another type', async () => {
    const lookalike = newId('msg');
    await send({ eventId: lookalike });
    const other = await send({ eventType: 'SOMETHING_ELSE' });
    await rotateAndTeach();
    const byEventId = { ...junk(), id: lookalike };
    expect(await failure(main.perform(delivery(byEventId, [world.zap.secret])))).toMatchObject({
      name: 'HaltedError',
      message: RECORD_REFUSALS.notConfirmed,
    });
    expect(await failure(main.perform(delivery(other, [world.zap.secret])))).toMatchObject({
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
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.beforeEndpoint });
    // Known from both ids: no call was needed to tell.
    expect(calls.record).toBe(0);
  });

  it('halts, naming the message, when the record no longer keeps the content (its retention ended, or it was deleted)', async () => {
    const shortLived = await send({ payloadRetentionHours: 1 });
    const deleted = await send();
    await world.client.call({
      method: 'DELETE',
      path: `/api/v1/app/${world.authData.appId}/msg/${deleted.id}/content`,
      action: 'deleting the content',
    });
    await rotateAndTeach();
    world.emulatorClockShift = 2 * 60 * 60 * 1000;
    for (const event of [shortLived, deleted]) {
      const refused = await failure(main.perform(delivery(event, [world.zap.secret])));
      expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.expired(event.id) });
      expect(refused.message).toContain(event.id);
    }
  });

  it('a provider that cannot be reached is an error (not a halt) naming the event and how to send it again', async () => {
    const waiting = await send();
    await rotateAndTeach();
    // Svix fails every try for the delivery's whole time (its pauses pass at once on the test's clock).
    world.virtualWaits();
    for (const fault of [UNAVAILABLE, { kind: 'drop' }] satisfies Fault[]) {
      faults.record = Array.from({ length: 100 }, () => fault);
      const failed = await failure(main.perform(delivery(waiting, [world.zap.secret])));
      expect(failed.name).not.toBe('HaltedError');
      expect(failed.code).toBe('SignatureNotChecked');
      expect(failed.message).toContain(waiting.id);
      expect(failed.message).toMatch(/^Resend message msg_\w+ to this Zap from your Consumer App in Svix's dashboard/);
    }
    // Once it answers, the event runs (it was never claimed).
    faults.record = [];
    await expect(main.perform(delivery(waiting, [world.zap.secret]))).resolves.toEqual(ranWith(waiting));
  });

  it('a moment’s failure of the record is tried again, and the event runs', async () => {
    const waiting = await send();
    await rotateAndTeach();
    faults.record = [{ kind: 'reply', status: 502, body: '<html>Bad gateway</html>' }];
    await expect(main.perform(delivery(waiting, [world.zap.secret]))).resolves.toEqual(ranWith(waiting));
    expect(calls.record).toBe(2);
  });
});

describe('a revoked secret', () => {
  it('stops verifying in every process within a minute once any process has seen the new one', async () => {
    const first = await send();
    await expect(main.perform(delivery(first, [world.zap.secret]))).resolves.toEqual(ranWith(first));
    // The secret leaked: rotated with no grace period. Another process learns the new one.
    await rotateAndTeach(await anotherProcess(zapier().platform));
    expect(calls.secret).toBe(1);
    later(61_000);
    const refused = await failure(main.perform(delivery(junk(), [world.zap.secret])));
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.notConfirmed });
    // This process learnt it from z.cache, not from the provider; only the record was asked.
    expect(calls).toEqual({ secret: 1, record: 1 });
  });

  it('stops verifying within ten minutes even when no process has seen the new one', async () => {
    const first = await send();
    await expect(main.perform(delivery(first, [world.zap.secret]))).resolves.toEqual(ranWith(first));
    await rotate(0);
    later(10 * 60_000 + 1_000);
    const refused = await failure(main.perform(delivery(junk(), [world.zap.secret])));
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.notConfirmed });
    expect(calls).toEqual({ secret: 1, record: 1 });
  });

  it('costs a warm process one cache read per minute, not a round trip per delivery', async () => {
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 6; index += 1) events.push(await send());
    const [firstEvent, ...rest] = events;
    if (!firstEvent) throw new Error('no events');
    zapier().platform.resetCalls();
    await main.perform(delivery(firstEvent, [world.zap.secret]));
    // The first look found nothing shared: this process writes what it knows, once, only if still absent.
    expect(historyCalls()).toEqual([
      expect.objectContaining({ method: 'zcache_get', scope: ['auth'] }),
      expect.objectContaining({ method: 'zcache_set', scope: ['auth'], nx: true }),
      expect.objectContaining({ method: 'zcache_get', scope: ['auth'] }),
    ]);
    zapier().platform.resetCalls();
    for (const event of rest) await expect(main.perform(delivery(event, [world.zap.secret]))).resolves.toHaveLength(1);
    // One round trip each: the claim.
    expect(zapier().calls()).toHaveLength(rest.length);
    expect(historyCalls()).toEqual([]);
    // From then on, a minute costs one read.
    later(61_000);
    await expect(main.perform(delivery(await send(), [world.zap.secret]))).resolves.toHaveLength(1);
    expect(historyCalls()).toEqual([expect.objectContaining({ method: 'zcache_get', scope: ['auth'] })]);
    zapier().platform.resetCalls();
    later(122_000);
    const next = await send();
    await expect(main.perform(delivery(next, [world.zap.secret]))).resolves.toHaveLength(1);
    expect(historyCalls()).toEqual([expect.objectContaining({ method: 'zcache_get', scope: ['auth'] })]);
    expect(zapier().calls()).toHaveLength(2);
  });

  it('a secret read more than ten minutes ago that still matches runs, and is fresh again after one read', async () => {
    const first = await send();
    await expect(main.perform(delivery(first, [world.zap.secret]))).resolves.toHaveLength(1);
    later(11 * 60_000);
    const second = await send();
    const third = await send();
    await expect(main.perform(delivery(second, [world.zap.secret]))).resolves.toHaveLength(1);
    await expect(main.perform(delivery(third, [world.zap.secret]))).resolves.toHaveLength(1);
    expect(calls).toEqual({ secret: 1, record: 0 });
  });
});
