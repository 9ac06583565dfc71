import type { Random } from './random';
import type { Scheduler } from './scheduler';

/**
 * z.cache as the processes of a simulated run share it: a round trip over
 * core's RPC client to one store, each call handled halfway through its
 * round trip, so calls from several processes interleave as on Zapier.
 *
 * `set` answers as Zapier documents it (`true` stored, `false` not stored:
 * with nx, the key exists; `null` throttled), or, in Redis's reading, `null`
 * for a key that exists. Any call may meet a fault, each as likely as the
 * run's share of adversity: a throttle (`null`, nothing done), an error
 * (thrown, nothing done), or, for a set, the work done and its answer lost
 * (core's client sends it again, which then meets the stored entry).
 */

export type CacheReading = 'zapier' | 'redis';
export type CacheFault = 'throttle' | 'error' | 'answer-lost';

/** One call as a trace shows it. */
export interface CacheCall {
  method: 'get' | 'set';
  key: string;
  start: number;
  end: number;
  fault?: CacheFault;
  answer?: unknown;
}

interface Entry {
  json: string;
  expiresAt: number;
}

export class SimCache {
  private readonly entries = new Map<string, Entry>();
  /** Calls on the shared history of secrets so far: with history faults, every other one is throttled. */
  private historyCalls = 0;
  calls = 0;
  faults = 0;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly random: Random,
    private readonly options: { reading: CacheReading; share: number; historyFaults: boolean },
  ) {}

  /** The stored value, as the platform keeps it, for the oracle. */
  peek(key: string): unknown {
    const entry = this.live(key);
    return entry ? JSON.parse(entry.json) : undefined;
  }

  get(key: string, log?: CacheCall[]): Promise<unknown> {
    return this.roundTrip('get', key, log, (fault) => {
      if (fault === 'throttle') return null;
      const entry = this.live(key);
      return entry ? JSON.parse(entry.json) : null;
    });
  }

  set(key: string, value: unknown, ttlSeconds: number, onlyIfAbsent: boolean, log?: CacheCall[]): Promise<unknown> {
    const json = JSON.stringify(value);
    return this.roundTrip('set', key, log, (fault) => {
      if (fault === 'throttle') return null;
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

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > this.scheduler.now ? entry : undefined;
  }

  private faultFor(method: 'get' | 'set', key: string): CacheFault | undefined {
    if (this.options.historyFaults && key.startsWith('history:') && (this.historyCalls += 1) % 2 === 0)
      return 'throttle';
    if (!this.random.chance(this.options.share)) return undefined;
    return this.random.pick<CacheFault>(
      method === 'set' ? ['throttle', 'error', 'answer-lost'] : ['throttle', 'error'],
    );
  }

  private async roundTrip(
    method: 'get' | 'set',
    key: string,
    log: CacheCall[] | undefined,
    handle: (fault?: CacheFault) => unknown,
  ) {
    this.calls += 1;
    const latency = this.random.between(1, 12);
    const fault = this.faultFor(method, key);
    if (fault) this.faults += 1;
    const call: CacheCall = {
      method,
      key,
      start: this.scheduler.now,
      end: this.scheduler.now,
      ...(fault ? { fault } : {}),
    };
    log?.push(call);
    await this.scheduler.sleep(latency / 2);
    const result = fault === 'error' ? undefined : handle(fault);
    await this.scheduler.sleep(latency / 2);
    call.end = this.scheduler.now;
    if (fault === 'error') throw new Error('The cache did not answer (simulated RPC error).');
    call.answer = result;
    return result;
  }
}
