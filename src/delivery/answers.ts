import type { Failure } from '../zapier/io';
import { mayPass } from '../svix/client';
import { lacks, merge, type History, type Sighting } from './history';
import { backoffMs, type Endpoint, type Delivery, type Listed, type Next } from './machine';

/** What a call the machine commanded answered, and what the machine (machine.ts) learns of it: pure, as it is. */

export type Page = { messages: Array<[string, Listed]>; next?: string };
export type Result =
  /** What z.cache held (none: absent, or the read throttled), or that the call failed; what a write answered. */
  | { kind: 'looked'; start: number; value?: History; ok: boolean }
  | { kind: 'shared'; start: number; history: History; stored: boolean | null | 'failed' }
  | { kind: 'read'; sighting: Sighting }
  | { kind: 'listed'; window: number; start: number; page: Page }
  /** A call Svix failed: the machine tells a failure of a moment (tried again) from a refusal. */
  | { kind: 'read' | 'listed'; window?: number; failure: Failure };

/** Svix failed a call for a moment (a 5xx, a time-out, a 429: `retryAfter` ms), or refused it. */
const transient = (failure: Failure): number | undefined =>
  failure.kind === 'throttled' ? (failure.delaySeconds ?? 0) * 1_000 : mayPass(failure) ? 0 : undefined;

/** Learns what a command's call, made by delivery `by`, answered. */
export const apply = (e: Endpoint, r: Result, now: number, by?: Delivery): void => {
  const { cache, svix } = e;
  const failed = () => Object.assign(cache, { failures: cache.failures + 1, failedAt: now });
  /** Something to share: the deliveries waiting for it wait a moment. */
  const toShare = (next: Next) => {
    if (!cache.next || now >= e.shareUntil) e.shareUntil = now + e.rules.shareForMs;
    cache.next ??= next;
  };
  /** The shared history holds this process's current secret: nobody need wait to share it. */
  const sharedCurrent = (shared: History) => {
    if (shared.current.secret === e.history.current.secret) cache.sharer = undefined;
  };
  if (r.kind === 'looked' || r.kind === 'shared') cache.busy = undefined;
  if (r.kind === 'looked') {
    if (!r.value && !r.ok) return void failed();
    // Nothing, where a write answered `false`: the read was throttled, or the write was (Zapier may answer a throttled
    // set `false`) and nothing is there. Looked at again and written again as new, in turn (a history there answers
    // the write `false` once more), so that neither reading of the answers can hold the sharing back for long.
    if (!r.value && cache.next === 'reread')
      return void (failed(), (cache.next = cache.failures % 2 === 1 ? 'create' : 'reread'));
    if (r.value) e.history = merge(e.history, r.value);
    cache.failures = 0;
    const next = !r.value ? 'create' : lacks(r.value, e.history) ? 'update' : undefined;
    if (next) toShare(next);
    cache.next = next;
    if (r.value) sharedCurrent(r.value);
    if (!next) e.lookedAt = r.start;
  } else if (r.kind === 'shared') {
    // `false` where none was found: another's history is there now, and is looked at before a write over it.
    // Anything else but `true` (a throttle, or a conflict where the cache answers it `null`) is tried again. What
    // was learnt while the write was under way is looked for and shared in turn.
    if (r.stored === true) {
      Object.assign(cache, { failures: 0, next: lacks(r.history, e.history) ? 'look' : undefined });
      sharedCurrent(r.history);
      e.lookedAt = r.start;
    } else if (r.stored === false && cache.next === 'create') cache.next = 'reread';
    else failed();
  } else if ('failure' in r) {
    const w = r.window === undefined ? undefined : e.windows.get(r.window);
    if (r.kind === 'read') e.read = undefined;
    if (w) w.calling = false;
    const retryAfter = transient(r.failure);
    if (retryAfter === undefined) {
      const refused = { at: now, failure: r.failure };
      return void (r.kind === 'read' ? (e.refused = refused) : w && (w.refused = refused));
    }
    Object.assign(svix, { failures: svix.failures + 1, failedAt: now, retryAfter });
    // The failed call spent what paid for it: its retry is free at its time (the machine), paid for if made later.
    if (w) Object.assign(w, { failed: true, paid: false, at: now + Math.max(backoffMs(svix.failures), retryAfter) });
  } else if (r.kind === 'read') {
    const before = e.history;
    Object.assign(svix, { failures: 0, retryAfter: 0 });
    Object.assign(e, { read: undefined, readAt: r.sighting.start, refused: undefined });
    e.history = merge(before, { current: r.sighting, old: [] });
    // What a read taught is shared before the deliveries that wait for it go on; a new current secret, before the
    // delivery that read it ends (revocation rests on it).
    if (lacks(before, e.history)) toShare('look');
    if (e.history.current.secret !== before.current.secret) cache.sharer = by;
  } else {
    const w = e.windows.get(r.window);
    Object.assign(svix, { failures: 0, retryAfter: 0 });
    if (!w) return;
    const startedAt = w.startedAt ?? r.start;
    Object.assign(w, { startedAt, calling: false, failed: false, pages: w.pages + 1, listing: w.listing + 1 });
    for (const [id, listed] of r.page.messages) w.messages.set(id, listed);
    w.iterator = r.page.next;
    w.complete = r.page.next === undefined || w.listing >= e.rules.maxPages;
    if (w.complete) w.listedAt = startedAt;
    else w.at = now;
  }
};
