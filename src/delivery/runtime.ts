import { randomBytes } from 'node:crypto';
import { nodeClock, type Clock } from '../zapier/clock';
import type { Sighting } from './history';
import type { Page } from './answers';
import { forget, newEndpoint, RULES, type Endpoint, type Window } from './machine';

/**
 * What one process keeps for the deliveries it runs, in one object instead of module state: its clock, the
 * state machine of each endpoint it served lately, what it learnt of z.cache, and Svix's record within one
 * memory budget for the whole process, however many endpoints it serves. Zapier runs one per process
 * (src/index.ts); the simulation runs several, each on a virtual clock.
 */

/** One endpoint's machine, and the deliveries waiting for it to change. */
export interface Slot {
  state: Endpoint;
  waiters: Set<() => void>;
}
type Kept = { slot: Slot; start: number; window: Window; bytes: number };
export const LIMITS = { endpoints: 1_000, recordBytes: 32 * 1024 * 1024 };

export class Runtime {
  private readonly slots = new Map<string, Slot>();
  /** The allowances of machines let go, until whole again (a call may start at once), oldest first. */
  private readonly spent = new Map<string, Endpoint['tat']>();
  /** Svix's record as listed, a page at a time, oldest first, with its size: kept within limits.recordBytes. */
  private readonly pages = new Map<Page, Kept>();
  private recordBytes = 0;
  /** What the claims learnt of z.cache: whether it honours `nx`, and a token no other invocation writes. */
  readonly claims: { honoursNx?: boolean; token: string; count: number } = {
    token: randomBytes(12).toString('base64url'),
    count: 0,
  };

  constructor(
    readonly clock: Clock = nodeClock,
    readonly limits = LIMITS,
    readonly rules = RULES,
    /** Which process saw a secret current (its reads never overlap; another's clock may differ). */
    readonly id = randomBytes(6).toString('base64url'),
  ) {}

  /**
   * The machine of an endpoint (by connection and id, as z.cache is scoped), made of what `made` says when there is
   * none (when the endpoint was made, and the secret its subscribe saw); the thousand served last are kept. An
   * endpoint's allowance outlives its machine until it is whole again, so that junk never finds it whole sooner.
   */
  endpoint(key: string, made: () => { madeAt: number; current: Sighting }): Slot {
    const slot = this.slots.get(key) ?? this.made(key, made());
    this.slots.delete(key);
    this.slots.set(key, slot);
    for (const [oldest, old] of this.slots) {
      if (this.slots.size <= this.limits.endpoints) break;
      this.slots.delete(oldest);
      for (const [page, kept] of this.pages) if (kept.slot === old) this.forget(page, kept);
      if (Math.max(old.state.tat.reads, old.state.tat.listings) > this.clock.now())
        this.spent.set(oldest, old.state.tat);
    }
    return slot;
  }

  private made(key: string, { madeAt, current }: { madeAt: number; current: Sighting }): Slot {
    const state = newEndpoint(madeAt, current, this.rules);
    const tat = this.spent.get(key);
    this.spent.delete(key);
    for (const [old, { reads, listings }] of this.spent) {
      if (Math.max(reads, listings) > this.clock.now()) break;
      this.spent.delete(old);
    }
    if (tat) state.tat = tat;
    return { state, waiters: new Set() };
  }

  /** Counts a page of a window's listing; past the budget, the windows of the oldest pages are dropped. */
  remember(slot: Slot, start: number, page: Page): void {
    const window = slot.state.windows.get(start);
    if (!window) return;
    const bytes = page.messages.reduce((sum, [, listed]) => sum + 64 + JSON.stringify(listed).length, 512);
    this.pages.set(page, { slot, start, window, bytes });
    this.recordBytes += bytes;
    for (const [old, kept] of this.pages) {
      if (this.recordBytes <= this.limits.recordBytes) break;
      if (!kept.window.calling && kept.window !== window) this.forget(old, kept);
    }
  }

  private forget(page: Page, { slot, start, window, bytes }: Kept): void {
    this.pages.delete(page);
    this.recordBytes -= bytes;
    forget(slot.state, start, window);
  }

  /** What the process holds: endpoints, allowances kept past their machines, the record's size as counted against
   * the budget, and the windows that hold no page (a delivery's, while it runs; none once every one has ended). */
  held(): { endpoints: number; spent: number; recordBytes: number; emptyWindows: number } {
    let emptyWindows = 0;
    for (const { state } of this.slots.values()) for (const w of state.windows.values()) emptyWindows += +!w.pages;
    return { endpoints: this.slots.size, spent: this.spent.size, recordBytes: this.recordBytes, emptyWindows };
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
