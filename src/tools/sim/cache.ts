import type { Random } from './random';
import type { Scheduler } from './scheduler';

/**
 * z.cache as a run's processes share it: one store, each call handled halfway through its round trip, so calls from
 * several processes interleave as on Zapier. `set` answers as Zapier documents it (`true` stored, `false` not stored:
 * with nx, the key exists; `null` throttled), or, in Redis's reading, `null` for a key that exists. A call may meet a
 * fault, as likely as the run's share: a throttle (a get `null`; a set `null` or, as core's own test mocks it,
 * `false`; nothing done), an error (thrown, nothing done), or, for a
 * set, the work done and its answer lost (core's client sends it again, which then meets the stored entry). A round
 * trip takes 1–12 ms; with `slowMs`, one in two is slow, heavy-tailed up to `slowMs` (past a delivery's deadline).
 */

type Fault = 'throttle' | 'error' | 'answer-lost';
const FAULTS = { get: ['throttle', 'error'], set: ['throttle', 'error', 'answer-lost'] } as const;
type Method = keyof typeof FAULTS;
export type CacheCall = { method: Method; key: string; start: number; end: number; fault?: Fault; answer?: unknown };

export class SimCache {
  private readonly entries = new Map<string, { json: string; expiresAt: number }>();
  constructor(
    private readonly scheduler: Scheduler,
    private readonly random: Random,
    readonly options: {
      reading: 'zapier' | 'redis';
      share: number;
      slowMs: number;
      /** What a throttled set answers. */
      throttledSet: false | null;
    },
  ) {}
  get(key: string, log: CacheCall[]): Promise<unknown> {
    return this.roundTrip('get', key, log, (fault) => {
      const entry = fault === 'throttle' ? undefined : this.live(key);
      return entry ? JSON.parse(entry.json) : null;
    });
  }
  set(key: string, value: unknown, ttlSeconds: number, onlyIfAbsent: boolean, log: CacheCall[]): Promise<unknown> {
    const json = JSON.stringify(value);
    return this.roundTrip('set', key, log, (fault) => {
      if (fault === 'throttle') return this.options.throttledSet;
      const stored = this.store(key, json, ttlSeconds, onlyIfAbsent);
      // Core's client sends the call again after the lost answer: the second meets what the first stored.
      return fault === 'answer-lost' ? this.store(key, json, ttlSeconds, onlyIfAbsent) : stored;
    });
  }
  private store(key: string, json: string, ttlSeconds: number, onlyIfAbsent: boolean): boolean | null {
    if (onlyIfAbsent && this.live(key)) return this.options.reading === 'zapier' ? false : null;
    this.entries.set(key, { json, expiresAt: this.scheduler.now + ttlSeconds * 1000 });
    return true;
  }
  /** What the store holds for a key now, read by the judge (no round trip, no fault). */
  peek(key: string): unknown {
    const entry = this.live(key);
    return entry ? JSON.parse(entry.json) : undefined;
  }
  private live(key: string) {
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > this.scheduler.now ? entry : undefined;
  }
  private async roundTrip(method: Method, key: string, log: CacheCall[], handle: (fault?: Fault) => unknown) {
    const { scheduler, random, options } = this;
    const slow = options.slowMs > 0 && random.chance(0.5);
    const latency = slow ? 12 + (options.slowMs - 12) * random.between() ** 2 : random.between(1, 12);
    const fault = random.chance(options.share) ? random.pick(FAULTS[method]) : undefined;
    const call: CacheCall = { method, key, start: scheduler.now, end: scheduler.now, fault };
    log.push(call);
    await scheduler.sleep(latency / 2);
    const result = fault === 'error' ? undefined : handle(fault);
    await scheduler.sleep(latency / 2);
    call.end = scheduler.now;
    if (fault === 'error') throw new Error('The cache did not answer (simulated RPC error).');
    call.answer = result;
    return result;
  }
}
