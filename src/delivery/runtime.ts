import { randomBytes } from 'node:crypto';
import { newEndpoint, type Endpoint, type Page, type Sighting, type Window } from './machine';

/**
 * What one process keeps for the deliveries it runs, in one object instead of module state: its clock, the
 * state machine of each endpoint it has served (the most recent thousand), what it learnt of z.cache, and Svix's
 * record within one memory budget for the whole process, however many endpoints it serves. Zapier runs one per
 * process (src/index.ts); the simulation runs several, each on a virtual clock.
 */

/** Time, and waits that hold the process open until they end or are cancelled (see Runtime.wait). */
export interface Clock {
  now: () => number;
  /** Ends after `ms`; `cancel` clears its timer and ends it at once. */
  sleep: (ms: number) => { done: Promise<void>; cancel: () => void };
}

/** What a clock needs of its host: Node's timers by default; the simulation hands in its virtual ones. */
export interface Timers<T> {
  now: () => number;
  setTimeout: (run: () => void, ms: number) => T;
  clearTimeout: (timer: T) => void;
}

const nodeTimers: Timers<NodeJS.Timeout> = {
  now: () => Date.now(),
  setTimeout: (run, ms) => setTimeout(run, ms),
  clearTimeout: (timer) => clearTimeout(timer),
};

/**
 * Every wait holds the process open: Zapier runs each operation in AWS Lambda, which ends an invocation as soon
 * as the event loop has nothing to wait for, answered or not. A wait no longer needed is cancelled instead.
 */
export const clockOf = <T>(timers: Timers<T>): Clock => ({
  now: () => timers.now(),
  sleep: (ms) => {
    let end: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (end = resolve));
    const timer = timers.setTimeout(end, Math.max(0, ms));
    return { done, cancel: () => (timers.clearTimeout(timer), end()) };
  },
});

/** One endpoint's machine, and the deliveries waiting for it to change. */
export interface Slot {
  state: Endpoint;
  waiters: Set<() => void>;
}

export class Runtime {
  /** Which process saw a secret current (its reads never overlap; another's clock may differ). */
  readonly id = randomBytes(6).toString('base64url');
  private readonly slots = new Map<string, Slot>();
  /** Svix's record as listed, oldest first: what the process keeps of it, within maxRecordBytes. */
  private readonly listed: Array<{ slot: Slot; start: number; window: Window; bytes: number }> = [];
  private recordBytes = 0;
  /** What the claims learnt of z.cache: whether it honours `nx`, and a token no other invocation writes. */
  readonly claims: { honoursNx?: boolean; token: string; count: number } = {
    token: randomBytes(12).toString('base64url'),
    count: 0,
  };

  constructor(
    readonly clock: Clock = clockOf(nodeTimers),
    readonly limits = { endpoints: 1_000, recordBytes: 32 * 1024 * 1024 },
  ) {}

  /** The machine of an endpoint (by connection and id, as z.cache is scoped), made from its subscription first. */
  endpoint(key: string, madeAt: number, current: Sighting): Slot {
    const known = this.slots.get(key);
    if (known) {
      this.slots.delete(key);
      this.slots.set(key, known);
      return known;
    }
    const slot = { state: newEndpoint(madeAt, current), waiters: new Set<() => void>() };
    this.slots.set(key, slot);
    for (const [oldest] of this.slots) {
      if (this.slots.size <= this.limits.endpoints) break;
      this.forget(oldest);
    }
    return slot;
  }

  private forget(key: string): void {
    const slot = this.slots.get(key);
    this.slots.delete(key);
    for (const entry of this.listed) if (entry.slot === slot) this.recordBytes -= entry.bytes;
    if (slot) this.listed.splice(0, this.listed.length, ...this.listed.filter((entry) => entry.slot !== slot));
  }

  /**
   * Counts a page of a window's listing (its messages as JSON, and a share of the window's own keeping); past the
   * budget, the oldest listings not under way are dropped, so the record stays within it however many endpoints.
   */
  remember(slot: Slot, start: number, page: Page): void {
    const window = slot.state.windows.get(start);
    if (!window) return;
    const bytes = page.messages.reduce((sum, [, listed]) => sum + 64 + JSON.stringify(listed).length, 512);
    this.listed.push({ slot, start, window, bytes });
    this.recordBytes += bytes;
    for (let index = 0; index < this.listed.length && this.recordBytes > this.limits.recordBytes;) {
      const entry = this.listed[index];
      if (!entry || entry.window.calling || entry.window === window) {
        index += 1;
        continue;
      }
      this.listed.splice(index, 1);
      this.recordBytes -= entry.bytes;
      if (entry.slot.state.windows.get(entry.start) === entry.window) entry.slot.state.windows.delete(entry.start);
    }
  }

  /** Wakes the deliveries waiting for this endpoint to change. */
  changed(slot: Slot): void {
    for (const wake of [...slot.waiters]) wake();
  }

  /** Waits until `until`, or until the endpoint changes: the timer of a wait that lost is cleared. */
  wait(slot: Slot, until: number): Promise<void> {
    const sleep = this.clock.sleep(until - this.clock.now());
    const done = () => {
      slot.waiters.delete(done);
      sleep.cancel();
    };
    slot.waiters.add(done);
    return sleep.done.then(done);
  }
}
