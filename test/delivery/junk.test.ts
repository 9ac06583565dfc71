import { errors } from 'zapier-platform-core';
import { Runtime } from '../../src/delivery/runtime';
import { JUNK_ALLOWANCE } from '../../src/limits';
import { clockOf } from '../../src/zapier/clock';
import type { Io } from '../../src/zapier/io';
import { SimCache } from '../../src/tools/sim/cache';
import { T0 } from '../../src/tools/sim/vocabulary';
import { Random } from '../../src/tools/sim/random';
import { EventLoop, Scheduler } from '../../src/tools/sim/scheduler';
import { SimSvix, type SvixCall } from '../../src/tools/sim/svix';
import { operationsFor } from '../../src/triggers/auctionStatusChanged';

/**
 * What junk costs: deliveries no secret of the endpoint signed, arriving together at one process (the sandbox's
 * case: Zapier runs one at a time), through the real trigger on the simulation's virtual clock, Svix answering every
 * call (20–180 ms) and z.cache every round trip (1–12 ms), without faults.
 */

/** `count` junk deliveries to one endpoint, one every `everyMs`, each naming a message of its own; their Svix calls. */
const junkCalls = async (count: number, everyMs: number) => {
  const scheduler = new Scheduler(T0);
  const svix = new SimSvix(new Random(1), scheduler, 0, { random: new Random(2), share: 0 });
  const cache = new SimCache(scheduler, new Random(3), {
    reading: 'zapier',
    share: 0,
    slowMs: 0,
    throttledSet: null,
  });
  const loop = new EventLoop(scheduler);
  const runtime = new Runtime(clockOf({ now: () => scheduler.now, ...loop }));
  const { deliver } = operationsFor(runtime);
  const endpoint = svix.endpoint(0);
  const subscribeData = { id: endpoint.id, secret: endpoint.current.key, checkedAt: T0, zap: 'zap', on: T0, gen: 1 };
  const authData = { apiKey: 'testsk_simulated', appId: svix.appId, serverUrl: 'http://127.0.0.1:9' };
  const calls: SvixCall[] = [];
  const endings: string[] = [];
  const io: Io = {
    send: (options) => loop.call(() => svix.request(options, calls)),
    cache: {
      get: (key) => loop.call(() => cache.get(key, [])).then((value) => value ?? undefined),
      set: (key, value, ttl, nx) => loop.call(() => cache.set(key, value, ttl, nx, [])),
    },
    ...{ errors, log: () => undefined },
  };
  const stranger = svix.newSecret();
  for (let n = 0; n < count; n += 1) {
    scheduler.after(5_000 + n * everyMs, () => {
      const id = svix.newId('msg');
      const seconds = Math.floor(svix.now() / 1_000);
      const body = JSON.stringify({ auctioneerUuid: 'a', auctionUuid: `b${n}`, status: 'CLOSED' });
      const headers = {
        ...{ 'Http-Svix-Id': id, 'Http-Svix-Timestamp': String(seconds) },
        'Http-Svix-Signature': svix.sign(id, seconds, body, [stranger]),
      };
      const rawRequest = { content: body, headers };
      Promise.resolve(deliver(io, { authData, subscribeData, inputData: {}, rawRequest })).then(
        () => endings.push('ran'),
        (error: unknown) => endings.push(error instanceof Error ? error.name : 'thrown'),
      );
    });
  }
  await scheduler.run(1_000_000, () => undefined);
  return { calls: calls.length, endings };
};

describe('junk arriving together', () => {
  it.each([
    ['at once', 0],
    ['over a second', 25],
  ])(
    '40 junk deliveries %s cost the allowance, one Svix call each; each halts, or errs past it',
    async (_, everyMs) => {
      const { calls, endings } = await junkCalls(40, everyMs);
      const { burst, everyMs: refillMs } = JUNK_ALLOWANCE;
      // The allowance over the 25 s a delivery may wait for it, less the 3 s its call may take.
      const most = burst + Math.floor((25_000 - 3_000 + 40 * everyMs) / refillMs);
      expect(calls).toBeLessThanOrEqual(most);
      expect(endings.filter((ending) => ending === 'HaltedError')).toHaveLength(calls);
      expect(endings.filter((ending) => ending !== 'HaltedError').every((ending) => ending === 'AppError')).toBe(true);
    },
  );
});
