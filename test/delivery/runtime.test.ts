import { errors } from 'zapier-platform-core';
import { apply } from '../../src/delivery/answers';
import { withinDeadline } from '../../src/zapier/cache';
import { decide, leave, RULES, type Delivery } from '../../src/delivery/machine';
import { Runtime } from '../../src/delivery/runtime';
import { clockOf } from '../../src/zapier/clock';
import type { Io } from '../../src/zapier/io';
import { operationsFor } from '../../src/triggers/auctionStatusChanged';
import { virtualClock } from '../helpers/clock';
import { authData, MSG_ID, payload, signedRequest, subscription } from '../helpers/fixtures';

/** A process's runtime: what outlives an endpoint's machine, and the deadline every z.cache call of a delivery keeps. */

/** A clock the test moves by hand; its timers are never due (nothing here waits on one). */
const handClock = () => {
  let now = 1_000_000;
  const clock = clockOf<number>({ now: () => now, setTimeout: () => 0, clearTimeout: () => undefined });
  return { clock, at: (ms: number) => void (now = ms) };
};
const sighting = { secret: 's1', start: 0, end: 0, by: 'subscribe' };
const made = () => ({ madeAt: 0, current: sighting });
const junk = (n: number, at: number): Delivery => ({
  ...{ id: `msg_${n}`, createdAt: at, signedAt: at, signatures: 1, signedWith: () => false, arrivedAt: at },
  ...{ deadline: at + 25_000, looked: true, steps: 0 },
});

describe('an endpoint let go after a thousand others', () => {
  /** Ten junk deliveries to endpoint A within a second, `others` endpoints served between each two; the Svix calls
   * they command, each answered at once (the secret is s1; the record holds nothing). */
  const junkCalls = (others: number) => {
    const { clock, at } = handClock();
    const runtime = new Runtime(clock);
    const calls = { read: 0, list: 0 };
    for (let n = 0; n < 10; n += 1) {
      const now = 1_000_000 + n * 100;
      at(now);
      for (let k = 0; k < others; k += 1) runtime.endpoint(`other-${n}-${k}`, made);
      const { state } = runtime.endpoint('A', made);
      // The machine's look at z.cache found the history the subscribe saw.
      apply(state, { kind: 'looked', start: now, ok: true, value: { current: sighting, old: [] } }, now);
      const d = junk(n, now);
      for (let command = decide(state, d, now); command.kind !== 'wait'; command = decide(state, d, now)) {
        if (command.kind === 'read') apply(state, { kind: 'read', sighting: { ...sighting, start: now } }, now, d);
        else if (command.kind === 'list') {
          const page = { messages: [] };
          apply(state, { kind: 'listed', window: command.window, start: now, page }, now, d);
        } else break;
        calls[command.kind] += 1;
      }
      leave(state, d);
    }
    return { calls, held: runtime.held() };
  };

  it('5. keeps its allowance until whole again: junk costs no more than if it had stayed', () => {
    const alone = junkCalls(0);
    const evicted = junkCalls(1_000);
    expect(alone.calls.read).toBeLessThanOrEqual(RULES.reads.burst);
    expect(evicted.calls.read).toBeLessThanOrEqual(RULES.reads.burst);
    expect(evicted.calls.list).toBeLessThanOrEqual(RULES.listings.burst);
    // 8c1b55a: 10 reads and 10 listings, a whole allowance each time the machine came back.
    expect(evicted.held).toMatchObject({ endpoints: 1_000, spent: 0 });
  });

  it('forgets an allowance once it is whole again', () => {
    const { clock, at } = handClock();
    const runtime = new Runtime(clock, { endpoints: 1, recordBytes: 1_000 });
    runtime.endpoint('A', made).state.tat.listings = 1_000_000 + 4_000;
    runtime.endpoint('B', made);
    expect(runtime.held().spent).toBe(1);
    expect(runtime.endpoint('A', made).state.tat.listings).toBe(1_004_000);
    runtime.endpoint('B', made);
    at(1_004_001);
    runtime.endpoint('C', made);
    expect(runtime.held().spent).toBe(0);
  });
});

describe('4. z.cache calls of a delivery end at its deadline', () => {
  /** z.cache that never answers: Zapier's RPC call hung. */
  const hung = (): Io => ({
    send: () => Promise.reject(new Error('no Svix call was expected')),
    cache: { get: () => new Promise<never>(() => undefined), set: () => new Promise<never>(() => undefined) },
    errors,
    log: () => undefined,
  });

  it('a call not answered by the deadline fails then, and its timer is cleared once answered in time', async () => {
    const clock = virtualClock(50);
    const start = clock.now();
    const late = withinDeadline(clock, hung(), start + 25_000).cache.get('k');
    await expect(late).rejects.toThrow('did not answer');
    expect(clock.now() - start).toBeGreaterThanOrEqual(25_000);
    const answered = withinDeadline(
      clock,
      { ...hung(), cache: { get: async () => 'v', set: async () => true } },
      clock.now() + 25_000,
    );
    const before = clock.now();
    await expect(answered.cache.get('k')).resolves.toBe('v');
    expect(clock.now() - before).toBeLessThan(1_000);
  });

  it('a call asked for once the deadline has passed fails at once, and is not made', async () => {
    const clock = virtualClock(50);
    let made = 0;
    const counted: Io = { ...hung(), cache: { get: async () => (made += 1), set: async () => true } };
    await expect(withinDeadline(clock, counted, clock.now()).cache.get('k')).rejects.toThrow('did not answer');
    expect(made).toBe(0);
  });

  it('a cold delivery whose look and claim hang answers at its deadline, and runs (a possible duplicate, not a loss)', async () => {
    const clock = virtualClock(50);
    const { deliver } = operationsFor(new Runtime(clock));
    const bundle = { authData, subscribeData: { ...subscription, checkedAt: clock.now() }, inputData: {} };
    const start = clock.now();
    const items = await deliver(hung(), {
      ...bundle,
      rawRequest: signedRequest(JSON.stringify(payload), { msgId: MSG_ID }),
    });
    expect(items).toHaveLength(1);
    const took = clock.now() - start;
    expect(took).toBeGreaterThanOrEqual(25_000);
    expect(took).toBeLessThan(30_000);
  });
});
