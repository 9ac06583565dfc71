import * as t from 'io-ts';
import type { Failure } from '../provider/failures';

/**
 * Which delivery runs, as one pure state machine per endpoint (after python-hyper's h11): handed a delivery, or
 * what a call answered, with the time, it answers the next command. No clock, no I/O, no throw, no module state:
 * the driver (driver.ts) keeps an Endpoint per Zap in its process's runtime and carries the commands out.
 *
 * Svix signs every attempt with the secrets valid when it is sent, and Zapier may run it minutes later, so a
 * delivery can carry a secret that has changed since. The rules, in order (decide):
 * 1. Sync: each delivery looks at what other processes share in z.cache when the last look is over 50 s old (or
 *    this process learnt what is not shared yet), and a secret a read taught is shared before it is relied on.
 * 2. Signed with the current secret, read in the last 10 minutes and sure (a look or a read in the last 50 s):
 *    it runs on the delivered body. Otherwise the secret is read again first (free, one read at a time).
 * 3. A signature no known secret made, not settled by a read begun since it arrived or since it was signed:
 *    the secret is read (from the allowance, unless an old secret also signed it); then decide again.
 * 4. Otherwise Svix's record decides: a listing of the 2-second window of its message's time confirms it (the
 *    Zap gets Svix's copy) or refutes it (a halt). Free when an old secret signed it, as a delivery queued across
 *    a rotation is; from the allowance when no known secret did, as junk does. No call in its time: a halt, or
 *    an error while Svix fails (the event may be genuine: its error says how to send it again).
 * Junk costs at most the allowance: per endpoint and process, reads and listings each a burst, then one per 2 s.
 */

export const RULES = {
  lookEveryMs: 50_000,
  /** What a read taught is shared for this long before the deliveries waiting on it go on regardless. */
  shareForMs: 1_500,
  freshForMs: 600_000,
  /** Svix failing this long after its last failure: a signed delivery runs without reading the secret again. */
  failingMs: 5_000,
  /** Two processes' clocks may differ this much: sightings of two secrets closer than this cannot be ordered. */
  skewMs: 2_000,
  reads: { burst: 3, everyMs: 2_000 },
  listings: { burst: 5, everyMs: 2_000 },
  /** No call starts with less of a delivery's time left than this. */
  callMs: 3_000,
  windowMs: 2_000,
  marginMs: 1_000,
  maxPages: 40,
  maxOld: 20,
};

/** The one back-off, for every retry the driver makes: after n failures in a row, wait this long. */
export const backoffMs = (failures: number): number => (failures <= 0 ? 0 : Math.min(2_000, 50 * 2 ** (failures - 1)));

/** A read that began at `start` (on process `by`'s clock) and answered at `end` showed `secret` current. */
export const Sighting = t.type({ secret: t.string, start: t.number, end: t.number, by: t.string }, 'Sighting');
export type Sighting = t.TypeOf<typeof Sighting>;
/** An endpoint's secrets: the one last seen current, and the others it had, each as last seen, newest first. */
export const History = t.type({ current: Sighting, old: t.array(Sighting) }, 'History');
export type History = t.TypeOf<typeof History>;

/** Ordered by when their reads began; a tie goes by the secret, so every process orders them alike. */
const later = (a: Sighting, b: Sighting): boolean => (a.start !== b.start ? a.start > b.start : a.secret > b.secret);

/** Every secret either history knew, each as last seen; the latest seen is current. Commutative and idempotent. */
export const merge = (a: History, b: History): History => {
  const last = new Map<string, Sighting>();
  for (const seen of [a.current, b.current, ...a.old, ...b.old]) {
    const known = last.get(seen.secret);
    if (!known || later(seen, known)) last.set(seen.secret, seen);
  }
  const [current = a.current, ...old] = [...last.values()].sort((x, y) => (later(x, y) ? -1 : 1));
  return { current, old: old.slice(0, RULES.maxOld) };
};

/** Whether `shared` lacks something `mine` knows. */
export const lacks = (shared: History, mine: History): boolean =>
  JSON.stringify(merge(shared, mine)) !== JSON.stringify(merge(shared, shared));

/**
 * When the two latest sightings cannot be ordered (reads of one process never overlap; other processes' clocks
 * may differ by skewMs), the time after which a read settles which is current; else undefined.
 */
export const unsureUntil = ({ current, old: [previous] }: History): number | undefined => {
  const margin = previous?.by === current.by ? 0 : RULES.skewMs;
  return previous && previous.end + margin > current.start ? Math.max(previous.end, current.end) + margin : undefined;
};

/** A delivery: its message id and the time it carries, its signing time (Svix's clock), when perform began. */
export interface Delivery {
  id: string;
  createdAt: number | undefined;
  signedAt: number;
  signatures: number;
  signedWith: (secret: string) => boolean;
  arrivedAt: number;
  deadline: number;
  looked: boolean;
}

/** A listed message: its payload, or that it is not this event type, or that Svix no longer keeps it. */
export type Listed = { payload: unknown } | 'other-type' | 'expired';
/** A call scheduled at `at`, made by its owner, the delivery that scheduled it (none: free to take on). */
interface Call {
  at: number;
  owner?: Delivery;
  calling: boolean;
}
/** One window of Svix's record: its listing (a page at a time), and what it found. */
export interface Window extends Call {
  startedAt?: number;
  pages: number;
  iterator?: string;
  complete: boolean;
  /** Svix failed its last page: the rest is listed free, it has taken its call. */
  failed: boolean;
  refused?: { at: number; failure: Failure };
  messages: Map<string, Listed>;
}

const endpoint = (madeAt: number, history: History) => ({
  madeAt,
  history,
  ...{ readAt: -Infinity, lookedAt: -Infinity, shareUntil: -Infinity },
  /** What sharing what this process knows takes next: a look first, a write where none is shared, or over it. */
  cache: { busy: false, failures: 0, failedAt: -Infinity, next: undefined satisfies Next | undefined },
  svix: { failures: 0, failedAt: -Infinity, retryAfter: 0, ahead: -300_000 },
  read: undefined satisfies Call | undefined,
  /** Theoretical arrival times of the allowances (GCRA): a call may start at tat - (burst - 1) * everyMs. */
  tat: { reads: -Infinity, listings: -Infinity },
  windows: new Map<number, Window>(),
});
type Next = 'look' | 'create' | 'update';
type Made = ReturnType<typeof endpoint>;
export type Endpoint = Omit<Made, 'read' | 'cache'> & {
  read?: Call;
  cache: Omit<Made['cache'], 'next'> & { next?: Next };
};
export const newEndpoint = (madeAt: number, current: Sighting): Endpoint => endpoint(madeAt, { current, old: [] });

export type Halt = 'not-a-svix-id' | 'unchecked-signature' | 'not-confirmed' | 'before-endpoint' | 'expired';
export type Command =
  | { kind: 'run' | 'error' }
  | { kind: 'look' | 'read' }
  | { kind: 'confirmed'; event: unknown }
  | { kind: 'halt'; why: Halt }
  | { kind: 'refused'; failure: Failure }
  | { kind: 'wait'; until: number }
  | { kind: 'share'; history: History; onlyIfAbsent: boolean }
  | { kind: 'list'; window: number; after: number; before: number; iterator?: string };

const halt = (why: Halt): Command => ({ kind: 'halt', why });
const wait = (until: number): Command => ({ kind: 'wait', until });
type Kind = keyof Endpoint['tat'];

/** When a call may start: now, after the back-off that follows Svix's failures, and for `kind`, at its allowance. */
const callAt = ({ svix, tat }: Endpoint, now: number, kind?: Kind): number => {
  const paused = svix.failedAt + Math.max(backoffMs(svix.failures), svix.retryAfter);
  return Math.max(now, paused, kind ? tat[kind] - (RULES[kind].burst - 1) * RULES[kind].everyMs : now);
};
const take = (e: Endpoint, kind: Kind, at: number) =>
  void (e.tat[kind] = Math.max(at, e.tat[kind]) + RULES[kind].everyMs);

/** Joins the call scheduled or under way: its owner makes it at its time; the others wait for what it answers. */
const join = (call: Call, d: Delivery, now: number, command: Command): Command => {
  if (call.calling || (call.owner && call.owner !== d)) return wait(d.deadline);
  call.owner = d;
  if (now < call.at) return wait(call.at);
  call.calling = true;
  return command;
};

/** A delivery is done: the calls it scheduled and did not make are dropped (a listing's later pages left free). */
export const leave = (e: Endpoint, d: Delivery): void => {
  if (e.read?.owner === d) e.read = undefined;
  for (const [start, w] of e.windows) {
    if (w.owner !== d || w.complete) continue;
    if (w.pages === 0 && !w.refused) e.windows.delete(start);
    else Object.assign(w, { owner: undefined, calling: false });
  }
};

/**
 * Rule 1: a look at z.cache when due, and the sharing of what it lacks, only ever over what a look found (a write
 * over another's unseen history could hide a newer secret); a failing cache is tried after the back-off.
 */
const sync = (e: Endpoint, d: Delivery, now: number): Command | undefined => {
  const { cache } = e;
  if (cache.busy) return wait(d.deadline);
  const at = cache.failedAt + backoffMs(cache.failures);
  const sharing = cache.next && now < e.shareUntil ? cache.next : undefined;
  if (sharing && now < at) return wait(Math.min(at, e.shareUntil));
  if (!sharing && (d.looked || now < at || (!cache.next && now - e.lookedAt <= RULES.lookEveryMs))) return undefined;
  d.looked ||= !sharing;
  cache.busy = true;
  if (!sharing || sharing === 'look') return { kind: 'look' };
  return { kind: 'share', history: e.history, onlyIfAbsent: sharing === 'create' };
};

/** A read of the secret: the one scheduled or under way if it starts in time (one at a time), else one of its own. */
const reading = (e: Endpoint, d: Delivery, now: number, kind: Kind | undefined, after = -Infinity) => {
  // The read scheduled or under way is joined first, even one too early to settle the delivery.
  if (e.read) return e.read.at + RULES.callMs > d.deadline ? undefined : join(e.read, d, now, READ);
  const at = Math.max(callAt(e, now, kind), after);
  if (at + RULES.callMs > d.deadline) return undefined;
  if (kind) take(e, kind, at);
  e.read = { at, calling: false, owner: d };
  return join(e.read, d, now, READ);
};
const READ: Command = { kind: 'read' };

/** Whether a complete listing answers for the delivery: it began after the delivery arrived or its message was made. */
const answers = (e: Endpoint, w: Window, d: Delivery, createdAt: number): boolean =>
  w.messages.has(d.id) ||
  (w.complete &&
    w.startedAt !== undefined &&
    Math.min(d.arrivedAt, createdAt + RULES.marginMs - e.svix.ahead) <= w.startedAt);

/** Rule 4: Svix's record, listed a window at a time, each listing shared by every delivery of its window. */
const record = (
  e: Endpoint,
  d: Delivery,
  now: number,
  kind: Kind | undefined,
  createdAt: number,
): Command | undefined => {
  if (createdAt < e.madeAt) return halt('before-endpoint');
  const start = Math.floor(createdAt / RULES.windowMs) * RULES.windowMs;
  const w = e.windows.get(start);
  if (w && answers(e, w, d, createdAt)) {
    const listed = w.messages.get(d.id);
    if (listed === 'expired') return halt('expired');
    return listed && listed !== 'other-type' ? { kind: 'confirmed', event: listed.payload } : halt('not-confirmed');
  }
  if (w?.refused && w.refused.at >= d.arrivedAt) return { kind: 'refused', failure: w.refused.failure };
  const own = callAt(e, now, w?.failed ? undefined : kind);
  const pending = w && !w.complete && !w.refused ? w : undefined;
  if (pending && (pending.calling || (pending.at <= own && pending.at + RULES.callMs <= d.deadline))) {
    const range = { after: start - RULES.marginMs, before: start + RULES.windowMs + RULES.marginMs };
    const page = pending.iterator === undefined ? {} : { iterator: pending.iterator };
    return join(pending, d, now, { kind: 'list', window: start, ...range, ...page });
  }
  if (own + RULES.callMs > d.deadline) return undefined;
  if (kind && !w?.failed) take(e, kind, own);
  if (pending) Object.assign(pending, { at: own, owner: d });
  else {
    const fresh = { at: own, owner: d, calling: false, pages: 0, complete: false, failed: false };
    e.windows.set(start, { ...fresh, messages: new Map() });
  }
  return wait(own);
};

/** The next command for a delivery; once its time is up, instead of a wait, its verdict. */
export const decide = (e: Endpoint, d: Delivery, now: number): Command => {
  const command = next(e, d, now);
  return command.kind === 'wait' && now >= d.deadline ? unchecked(e) : command;
};

const next = (e: Endpoint, d: Delivery, now: number): Command => {
  if (d.createdAt === undefined) return halt('not-a-svix-id');
  const synced = sync(e, d, now);
  if (synced) return synced;
  const { current, old } = e.history;
  const unsure = unsureUntil(e.history);
  const signed = d.signedWith(current.secret);
  const oldSigned = old.filter((seen) => d.signedWith(seen.secret)).length;
  // Signed with a secret the endpoint had: it may have waited in Zapier's queue across a rotation. Free.
  const charged = oldSigned === 0;
  // Two latest secrets that cannot be ordered: a read settles which is current.
  if (unsure !== undefined && (signed || (old[0] && d.signedWith(old[0].secret))))
    return reading(e, d, now, undefined, unsure) ?? record(e, d, now, undefined, d.createdAt) ?? unchecked(e);
  if (signed) {
    const sure = now - Math.max(e.lookedAt, e.readAt) <= RULES.lookEveryMs;
    const failing = e.svix.failures >= 2 && now - e.svix.failedAt < RULES.failingMs;
    if (sure && (now - current.start <= RULES.freshForMs || failing)) return { kind: 'run' };
    return reading(e, d, now, undefined) ?? { kind: 'run' };
  }
  const settled = e.readAt >= Math.min(d.arrivedAt, d.signedAt + RULES.marginMs - e.svix.ahead);
  const read = d.signatures > oldSigned && !settled ? reading(e, d, now, charged ? 'reads' : undefined) : undefined;
  return read ?? record(e, d, now, charged ? 'listings' : undefined, d.createdAt) ?? unchecked(e);
};

/** No call in the delivery's time: a halt, or an error while Svix fails (the event may be genuine). */
export const unchecked = (e: Endpoint): Command =>
  e.svix.failures > 0 ? { kind: 'error' } : halt('unchecked-signature');

/** What a call answered: a transient failure of Svix (`retryAfter` ms, when it said), or a refusal to raise. */
export type Failed = { failed: 'transient'; retryAfter: number } | { failed: 'refused'; failure: Failure };
export type Page = { messages: Array<[string, Listed]>; next?: string };
export type Result =
  /** What z.cache held (none: absent, or the read throttled), or the call failed; what a write answered. */
  | { kind: 'looked'; start: number; value?: History; ok: boolean }
  | { kind: 'shared'; start: number; stored: boolean | null | 'failed' }
  | { kind: 'read'; sighting: Sighting }
  | { kind: 'listed'; window: number; start: number; page: Page }
  | ({ kind: 'read' | 'listed'; window?: number } & Failed)
  | { kind: 'ran'; delivery: Pick<Delivery, 'signedAt' | 'arrivedAt'> };

/** Learns what a command's call answered. */
export const apply = (e: Endpoint, r: Result, now: number): void => {
  const { cache } = e;
  const failed = () => Object.assign(cache, { failures: cache.failures + 1, failedAt: now });
  if (r.kind === 'looked' || r.kind === 'shared') cache.busy = false;
  if (r.kind === 'looked') {
    // Nothing, where a write found another's history: the read was throttled.
    if (!r.value && (!r.ok || cache.next === 'look')) return void failed();
    if (r.value) e.history = merge(e.history, r.value);
    const sharing = cache.next && now < e.shareUntil;
    cache.failures = 0;
    cache.next = !r.value ? 'create' : lacks(r.value, e.history) ? 'update' : undefined;
    if (!cache.next) e.lookedAt = r.start;
    else if (!sharing) e.shareUntil = now + RULES.shareForMs;
  } else if (r.kind === 'shared') {
    // `false` where none was found: another's history is there now, and is looked at before a write over it.
    // Anything else but `true` (a throttle, or a conflict where the cache answers it `null`) is tried again.
    if (r.stored === true) Object.assign(cache, { failures: 0, next: undefined });
    if (r.stored === true) e.lookedAt = r.start;
    else if (r.stored === false && cache.next === 'create') cache.next = 'look';
    else failed();
  } else if (r.kind === 'ran') {
    e.svix.ahead = Math.max(e.svix.ahead, r.delivery.signedAt - r.delivery.arrivedAt);
  } else if ('failed' in r) {
    const w = r.window === undefined ? undefined : e.windows.get(r.window);
    if (r.kind === 'read') e.read = undefined;
    if (w) w.calling = false;
    if (r.failed === 'refused') return void (w && (w.refused = { at: now, failure: r.failure }));
    Object.assign(e.svix, { failures: e.svix.failures + 1, failedAt: now, retryAfter: r.retryAfter });
    if (w) Object.assign(w, { failed: true, at: now + Math.max(backoffMs(e.svix.failures), r.retryAfter) });
  } else if (r.kind === 'read') {
    Object.assign(e.svix, { failures: 0, retryAfter: 0 });
    const before = e.history;
    Object.assign(e, {
      read: undefined,
      readAt: r.sighting.start,
      history: merge(before, { current: r.sighting, old: [] }),
    });
    // What a read taught is shared before the deliveries that wait for it go on.
    if (lacks(before, e.history)) Object.assign(cache, { next: cache.next ?? 'look' });
    if (lacks(before, e.history)) e.shareUntil = now + RULES.shareForMs;
  } else {
    Object.assign(e.svix, { failures: 0, retryAfter: 0 });
    const w = e.windows.get(r.window);
    if (!w) return;
    Object.assign(w, { startedAt: w.startedAt ?? r.start, calling: false, failed: false, pages: w.pages + 1 });
    for (const [id, listed] of r.page.messages) w.messages.set(id, listed);
    w.iterator = r.page.next;
    w.complete = r.page.next === undefined || w.pages >= RULES.maxPages;
    if (!w.complete) w.at = now;
  }
};
