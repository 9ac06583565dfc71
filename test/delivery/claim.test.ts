import { CLAIM_TTL_SECONDS, claimOnce } from '../../src/delivery/claim';
import { clockOf } from '../../src/zapier/clock';
import type { Io } from '../../src/zapier/io';
import { EventLoop, Scheduler } from '../../src/tools/sim/scheduler';

/**
 * A delivery's claim of its message (src/delivery/claim.ts) against a scripted z.cache, on a virtual clock: what each
 * answer means, and that it ends by its deadline whatever z.cache does.
 */

const T0 = 1_000_000;
type Answer = unknown | Error | 'hang';

const cacheWorld = (sets: Answer[], gets: Answer[]) => {
  const scheduler = new Scheduler(T0);
  const loop = new EventLoop(scheduler);
  const clock = clockOf({ now: () => scheduler.now, setTimeout: loop.setTimeout, clearTimeout: loop.clearTimeout });
  const calls: string[] = [];
  const answer = async (queue: Answer[], fallback: Answer): Promise<unknown> => {
    const next = queue.length > 0 ? queue.shift() : fallback;
    if (next === 'hang') return new Promise<never>(() => undefined);
    await scheduler.sleep(5);
    if (next instanceof Error) throw next;
    return next;
  };
  const stored: { token?: unknown } = {};
  const cache: Io['cache'] = {
    set: (key, value, ttl, nx) => {
      calls.push(`set ${key} ${ttl} ${String(nx)}`);
      stored.token = value;
      return answer(sets, true);
    },
    get: (key) => {
      calls.push(`get ${key}`);
      return answer(gets, undefined);
    },
  };
  const claim = async (deadline = T0 + 25_000) => {
    const claimed = claimOnce(clock, { cache }, 'seen:zap:msg', 'token-1', deadline);
    await scheduler.run(100_000, () => undefined);
    return { claimed: await claimed, calls, endedAt: scheduler.now };
  };
  return { claim };
};

describe("a delivery's claim", () => {
  it('one set with nx that answers true: it runs (one round trip)', async () => {
    const { claimed, calls } = await cacheWorld([true], []).claim();
    expect(claimed).toBe(true);
    expect(calls).toEqual([`set seen:zap:msg ${CLAIM_TTL_SECONDS} true`]);
  });

  it.each([false, null])('a set answering %p is read back: its own token runs, another’s does not', async (answer) => {
    await expect(cacheWorld([answer], ['token-1']).claim()).resolves.toEqual(
      expect.objectContaining({ claimed: true }),
    );
    await expect(cacheWorld([answer], ['token-2']).claim()).resolves.toEqual(
      expect.objectContaining({ claimed: false }),
    );
  });

  it('what settles nothing (a throttled read, an error) is tried again until it settles', async () => {
    const { claimed, calls } = await cacheWorld([null, new Error('rpc'), false], [null, 'token-2']).claim();
    expect(claimed).toBe(false);
    expect(calls.filter((call) => call.startsWith('set'))).toHaveLength(3);
  });

  it('z.cache hanging: it runs at its deadline (a possible duplicate, not a lost event)', async () => {
    const { claimed, endedAt } = await cacheWorld(['hang', 'hang', 'hang'], []).claim(T0 + 1_500);
    expect(claimed).toBe(true);
    expect(endedAt).toBeLessThanOrEqual(T0 + 1_500);
  });

  it('z.cache failing every call: it runs by its deadline, having tried again and again', async () => {
    const failing = Array.from({ length: 1_000 }, () => new Error('rpc'));
    const { claimed, calls, endedAt } = await cacheWorld(failing, []).claim(T0 + 1_500);
    expect(claimed).toBe(true);
    expect(calls.length).toBeGreaterThan(3);
    expect(endedAt).toBeLessThanOrEqual(T0 + 1_500);
  });
});
