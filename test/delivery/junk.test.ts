import { errors } from 'zapier-platform-core';
import { LIMITS, Runtime } from '../../src/delivery/runtime';
import { clockOf } from '../../src/zapier/clock';
import type { Io } from '../../src/zapier/io';
import { SimCache } from '../../src/tools/sim/cache';
import { T0 } from '../../src/tools/sim/vocabulary';
import { Random } from '../../src/tools/sim/random';
import { EventLoop, Scheduler } from '../../src/tools/sim/scheduler';
import { SimSvix, type SvixCall } from '../../src/tools/sim/svix';
import { operationsFor } from '../../src/triggers/auctionStatusChanged';
import { RULES } from '../../src/delivery/machine';

/**
 * What junk costs: deliveries no secret of the endpoint signed, arriving together at one process, through the real
 * driver and machine on the simulation's virtual clock, Svix answering every call (20–180 ms) and z.cache every
 * round trip (1–12 ms), without faults.
 */

/** `count` junk deliveries to one endpoint, one every `everyMs`, each naming a message of its own; their Svix calls. */
const junkCalls = async (count: number, everyMs: number) => {
  const scheduler = new Scheduler(T0);
  const svix = new SimSvix(new Random(1), scheduler, 0, { random: new Random(2), share: 0 });
  const cache = new SimCache(scheduler, new Random(3), {
    reading: 'zapier',
    share: 0,
    historyFaults: false,
    slowMs: 0,
    throttledSet: null,
  });
  const loop = new EventLoop(scheduler);
  const runtime = new Runtime(clockOf({ now: () => scheduler.now, ...loop }), LIMITS, RULES, 'P');
  const { deliver } = operationsFor(runtime);
  const endpoint = svix.endpoint(0);
  const subscribeData = { id: endpoint.id, secret: endpoint.current.key, checkedAt: T0, cacheHonoursNx: true };
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
  ])('40 junk deliveries %s cost at most 6 Svix calls, and each halts', async (_, everyMs) => {
    const { calls, endings } = await junkCalls(40, everyMs);
    expect(endings).toEqual(Array.from({ length: 40 }, () => 'HaltedError'));
    expect(calls).toBeLessThanOrEqual(6);
  });
});
