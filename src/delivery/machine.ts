import type { Failure } from '../zapier/io';
import { PROMISES, SVIX_CLOCK_ALLOWANCE_MS } from '../limits';
import { SKEW_MS, unsureOf, type History, type Sighting } from './history';

/**
 * Which delivery runs, as one pure state machine per endpoint (after python-hyper's h11): handed a delivery, or
 * what a call answered, with the time, it answers the next command. No clock, no I/O, no throw, no module state:
 * the driver (driver.ts) keeps an Endpoint per Zap in its process's runtime and carries the commands out.
 *
 * Svix signs every attempt with the secrets valid when it is sent, and Zapier may run it minutes later, so a
 * delivery can carry a secret that has changed since. The rules, in order (next):
 * 1. Sync: a delivery looks at the history of secrets the processes share in z.cache when the last look is over
 *    35 s old, and what this process learnt is shared first, only ever written over what a look found; deliveries
 *    wait 1.5 s for it at most. The delivery that read a new current secret does not end before it is shared, or
 *    its time is up.
 * 2. The current secret seen too close to another to order them (clocks differ): a read after both settles which is
 *    current.
 * 3. Signed with the current secret, seen in the last 10 minutes and sure (a look or a read in the last 35 s):
 *    it runs on the delivered body. Otherwise the secret is read again first (free). Out of time for that, or for
 *    any wait (for z.cache, say), it runs only if seen in the last 10 minutes (a replaced secret never runs
 *    longer, Svix failing or not), else an error says how to send it again. Once Svix's record confirmed a delivery
 *    no known secret signed, the current secret may have been replaced: it signs nothing alone until a read begun
 *    after that delivery arrived (the delivery makes that read before it ends, from the allowance: a forgery
 *    carrying a real id is confirmed too), and meanwhile the record decides.
 * 4. A signature no known secret made, not settled by a read begun at most 1 s before it arrived: the secret is read
 *    (from the allowance, unless an old secret also signed it); then decide again. Where the record cannot be
 *    listed in its time, a read begun after it arrived is tried instead, settled or not.
 * 5. Otherwise Svix's record decides: a listing of the 2-second window of its message's time confirms it (the
 *    Zap gets Svix's copy); only a complete listing begun after it arrived refutes it (a halt): Svix commits a
 *    message before it sends it, however long that takes, and times are never compared across clocks. A window is
 *    listed again at most once a second, so deliveries arriving together share its listings. Free when an
 *    old secret signed it, as a delivery queued across a rotation is; from the allowance when no known secret did,
 *    as junk does. No call in its time: an error naming the message to resend (the event may be genuine; a halt
 *    is final, and a genuine event halted is lost in silence).
 * Junk costs at most the allowance: per endpoint and process, reads and listings each a burst, then one per 2 s.
 * One read at a time, one listing per window: made by the delivery that scheduled it, the others waiting for it.
 * A failed listing's retry is free at its time only: made later, it is a call of its own.
 *
 * Where things are, for a reader: `decide` (below) is the only entry for a delivery; `next` holds rules 1 to 5 in
 * order; `timeUp` is the verdict once no call fits. What a call answered is learnt by `apply` (answers.ts), the
 * other half of the machine. The states: each call (the read, each window's listing) is scheduled (`at`, its owner),
 * under way (`calling`), then answered, failed (tried again after the back-off) or refused; sharing with z.cache is
 * idle, or next a `look`, a `reread` (a write answered `false`), a `create` or an `update`; a delivery is deciding,
 * then holds its verdict while it shares what it read (rule 1) or reads a secret in doubt (rule 3).
 */

export const RULES = {
  /** A delivery sure of the current secret by a look or a read this recent ends within 60 s of it, its 25 s included:
   * a replaced secret runs no body 60 s after a process read and shared the new one. */
  lookEveryMs: 35_000,
  /** What a read taught is shared for this long before the deliveries waiting on it (but its own) go on. */
  shareForMs: 1_500,
  /** A look at or a write of the shared history is given up after this long: z.cache may be slow, and a read of
   * Svix makes a delivery as sure. */
  cacheCallMs: 1_500,
  /** A secret seen current this recently may sign alone out of time for a read: within the promise on replaced secrets. */
  freshForMs: PROMISES.replacedRunsAtMostMs,
  skewMs: SKEW_MS,
  reads: { burst: 3, everyMs: 2_000 },
  listings: { burst: 5, everyMs: 2_000 },
  windowMs: 2_000,
  /** A listing reaches one 4 ms id slot past its window on each side: Svix bounds listings by id (src/tools/svix/rules.ts). */
  marginMs: 4,
  maxPages: 40,
  /** Deliveries arriving this close together share a read, and a window's listing (listed again at most this often). */
  togetherMs: 1_000,
  /** Svix's clock may step back this far: a message's time up to this long before the endpoint's is not refused. */
  clockStepMs: SVIX_CLOCK_ALLOWANCE_MS,
  /** A guard against a spin: a delivery's time runs out long before this many decisions, however busy the Zap. */
  maxSteps: 10_000,
};
export type Rules = typeof RULES;
/** How long a read or a listing may take, its timeout: none starts with less of its delivery's time left. */
export const CALL_MS = 3_000;

/** The one back-off, for every retry the driver makes: after n failures in a row, wait this long. */
export const backoffMs = (failures: number): number => (failures <= 0 ? 0 : Math.min(2_000, 50 * 2 ** (failures - 1)));

/** A delivery: its message id and time (none: not an id Svix makes), signing time (Svix's clock), its time; then
 * what the machine keeps of it: whether it looked at z.cache, how many decisions it took, and its verdict once
 * reached (it stands while the delivery shares what it read). */
export interface Delivery {
  id: string;
  createdAt: number | undefined;
  signedAt: number;
  signatures: number;
  signedWith: (secret: string) => boolean;
  arrivedAt: number;
  deadline: number;
  looked: boolean;
  steps: number;
  verdict?: Command;
}
/** A listed message: its payload, or that it is not this event type, or that Svix no longer keeps it. */
export type Listed = { payload: unknown } | 'other-type' | 'expired';
/** A call scheduled at `at`, made by its owner, the delivery that scheduled it (none: free to take on). */
interface Call {
  at: number;
  owner?: Delivery;
  calling: boolean;
  /** Paid from the allowance. */
  paid: boolean;
}
/** A refusal of a call by Svix (the key's rights, say): every delivery that arrived before it meets it. */
type Refused = { at: number; failure: Failure };
/** One window of Svix's record: its listing under way, a page at a time (after a failed page, the rest free), what
 * every listing of it found, the pages they read (kept in the process's budget), and when the last complete listing
 * began (a delivery that arrived by then, and is not in it, is refuted). */
export interface Window extends Call {
  startedAt?: number;
  listedAt: number;
  pages: number;
  listing: number;
  iterator?: string;
  complete: boolean;
  failed: boolean;
  refused?: Refused;
  messages: Map<string, Listed>;
}
/** A look; a look again after a write found another's history (so nothing is a throttle); a write, new or over. */
export type Next = 'look' | 'reread' | 'create' | 'update';
const none = <T>(): T | undefined => undefined;
/** A listing of a window to make (of one listed before, it keeps what that found). */
const listing = { listing: 0, complete: false, failed: false, refused: undefined, startedAt: undefined };

export const newEndpoint = (madeAt: number, current: Sighting, rules: Rules = RULES) => ({
  rules,
  madeAt,
  history: { current, old: new Array<Sighting>() },
  /** When the last read of the secret, and the last look at the shared history, began. */
  readAt: -Infinity,
  lookedAt: -Infinity,
  /** Until when the deliveries waiting for what a read taught to be shared wait for it. */
  shareUntil: -Infinity,
  /** The read of the secret scheduled or under way, and Svix's refusal of the last one. */
  read: none<Call>(),
  refused: none<Refused>(),
  /** When a delivery arrived that Svix's record confirmed and no secret known here signed (rule 3): the current
   * secret signs nothing alone until a read begun since. */
  doubtAt: -Infinity,
  /** When the look or write under way began; what sharing what this process knows takes next: a look, a write where
   * none is shared, or one over it; and the delivery that read the current secret, while it is not shared: it
   * shares it before it ends. */
  cache: { busy: none<number>(), failures: 0, failedAt: -Infinity, next: none<Next>(), sharer: none<Delivery>() },
  svix: { failures: 0, failedAt: -Infinity, retryAfter: 0 },
  /** Theoretical arrival times of the allowances (GCRA): a call may start at tat - (burst - 1) * everyMs. */
  tat: { reads: -Infinity, listings: -Infinity },
  windows: new Map<number, Window>(),
  /** A decision gave up a call others may wait for: the driver wakes them. */
  released: false,
  /** Deliveries under way past their first decision. */
  staying: 0,
});
export type Endpoint = ReturnType<typeof newEndpoint>;

/** `gone`: Svix no longer has the endpoint (an edit, or turning the Zap off, removed it): not an error. */
export type Halt = 'not-a-svix-id' | 'not-confirmed' | 'before-endpoint' | 'expired' | 'gone';
export type Command =
  | { kind: 'run' | 'error' }
  | { kind: 'look' | 'read' }
  | { kind: 'confirmed'; event: unknown }
  | { kind: 'halt'; why: Halt }
  | { kind: 'refused'; call: 'read' | 'list'; failure: Failure }
  | { kind: 'wait'; until: number }
  | { kind: 'share'; history: History; onlyIfAbsent: boolean }
  | { kind: 'list'; window: number; after: number; before: number; iterator?: string };
const halt = (why: Halt): Command => ({ kind: 'halt', why });
const wait = (until: number): Command => ({ kind: 'wait', until });
const READ: Command = { kind: 'read' };
type Kind = keyof Endpoint['tat'];

/** When a call may start: now, after the back-off that follows Svix's failures, and for `kind`, at its allowance. */
const callAt = ({ svix, tat, rules }: Endpoint, now: number, kind?: Kind): number => {
  const paused = svix.failedAt + Math.max(backoffMs(svix.failures), svix.retryAfter);
  return Math.max(now, paused, kind ? tat[kind] - (rules[kind].burst - 1) * rules[kind].everyMs : now);
};
const take = (e: Endpoint, kind: Kind, at: number) =>
  void (e.tat[kind] = Math.max(at, e.tat[kind]) + e.rules[kind].everyMs);

/** Joined, unless unowned, not under way, and unpaid or paid for a time over a second gone: then a delivery that pays
 * takes it on, at its allowance's time. A call made long after the time it was paid for is a call of its own, as a
 * failed call's retry is: else a flood would keep paid calls its deliveries left, and make them all at once. */
const shouldJoin = (e: Endpoint, call: Call, pays: boolean, now: number): boolean =>
  call.calling || call.owner !== undefined || !pays || (call.paid && now <= call.at + e.rules.togetherMs);
/** Joins a call scheduled or under way: its owner makes it at its time; the others wait for what it answers. */
const join = (call: Call, d: Delivery, now: number, command: Command): Command => {
  if (call.calling || (call.owner && call.owner !== d)) return wait(d.deadline);
  call.owner = d;
  if (now < call.at) return wait(call.at);
  call.calling = true;
  return command;
};

/** A delivery goes on past its first decision: calls it schedules may be left to others when it is done. */
export const stay = (e: Endpoint): void => void (e.staying += 1);

/** A delivery is done: the calls it scheduled and did not make are left to those still under way (taken on without
 * paying again); the last to leave drops every call nobody made, and every window that holds no page. */
export const leave = (e: Endpoint, d: Delivery): void => {
  e.staying -= 1;
  const idle = (call: Call | undefined) => call && !call.calling && !call.owner;
  if (e.read?.owner === d) e.read = undefined;
  if (e.cache.sharer === d) e.cache.sharer = undefined;
  for (const w of e.windows.values()) if (w.owner === d) Object.assign(w, { owner: undefined, calling: false });
  if (e.staying > 0) return;
  if (idle(e.read)) e.read = undefined;
  for (const [start, w] of e.windows) if (w.pages === 0 && idle(w)) e.windows.delete(start);
};

/** The process's memory budget dropped a window's pages (runtime.ts): the window goes, unless listed anew since. */
export const forget = (e: Endpoint, start: number, w: Window): void => {
  if (e.windows.get(start) === w) e.windows.delete(start);
};

/** Rule 1. A write over another's history unseen could hide a newer secret: only ever over what a look found. */
const sync = (e: Endpoint, d: Delivery, now: number, obliged = false): Command | undefined => {
  const { cache } = e;
  // A look or a write under way: others wait for it a moment (z.cache may be slow), the one that must share as long.
  if (cache.busy !== undefined && obliged) return wait(d.deadline);
  if (cache.busy !== undefined)
    return now < cache.busy + e.rules.shareForMs ? wait(cache.busy + e.rules.shareForMs) : undefined;
  const at = cache.failedAt + backoffMs(cache.failures);
  const sharing = cache.next && (obliged || now < e.shareUntil) ? cache.next : undefined;
  if (sharing && now < at) return wait(obliged ? at : Math.min(at, e.shareUntil));
  if (!sharing && (d.looked || now < at || (!cache.next && now - e.lookedAt <= e.rules.lookEveryMs))) return;
  d.looked ||= !sharing;
  cache.busy = now;
  if (!sharing || sharing === 'look' || sharing === 'reread') return { kind: 'look' };
  return { kind: 'share', history: e.history, onlyIfAbsent: sharing === 'create' };
};

/** A read of the secret: the one scheduled or under way if it starts in time, else one of its own. */
const reading = (e: Endpoint, d: Delivery, now: number, kind?: Kind, after = -Infinity): Command | undefined => {
  const { read } = e;
  const refused = e.refused && e.refused.at >= d.arrivedAt ? e.refused.failure : undefined;
  if (refused?.kind === 'error' && refused.status === 404) return halt('gone');
  if (refused) return { kind: 'refused', call: 'read', failure: refused };
  if (read && shouldJoin(e, read, kind !== undefined, now))
    return read.at + CALL_MS > d.deadline ? undefined : join(read, d, now, READ);
  const at = Math.max(callAt(e, now, kind), after, read?.at ?? -Infinity);
  if (at + CALL_MS > d.deadline) return undefined;
  if (kind) take(e, kind, at);
  e.read = { at, calling: false, owner: d, paid: kind !== undefined };
  return join(e.read, d, now, READ);
};

/** Rule 5: Svix's record, listed a window at a time, each listing shared by every delivery of its window. */
const record = (e: Endpoint, d: Delivery, createdAt: number, now: number, kind?: Kind): Command | undefined => {
  const { rules } = e;
  if (createdAt < e.madeAt - rules.clockStepMs) return halt('before-endpoint');
  const start = Math.floor(createdAt / rules.windowMs) * rules.windowMs;
  const w = e.windows.get(start);
  // Only a listing begun after the delivery arrived refutes it: Svix commits a message before it sends it.
  if (w && (w.messages.has(d.id) || d.arrivedAt <= w.listedAt)) {
    const listed = w.messages.get(d.id);
    if (listed === 'expired') return halt('expired');
    return listed && listed !== 'other-type' ? { kind: 'confirmed', event: listed.payload } : halt('not-confirmed');
  }
  if (w?.refused && w.refused.at >= d.arrivedAt) return { kind: 'refused', call: 'list', failure: w.refused.failure };
  // A failed listing's retry is free at its time (the allowance counts a retry with the call Svix failed); one made
  // later is a call of its own.
  const retry = w?.failed === true && now <= w.at + rules.togetherMs;
  const pays = kind && !retry ? kind : undefined;
  // Listed again at most once a second: deliveries arriving together share a listing.
  const own = Math.max(callAt(e, now, pays), (w?.listedAt ?? -Infinity) + rules.togetherMs);
  const pending = w && !w.complete && !w.refused ? w : undefined;
  // A listing past its first page is joined too: its later pages are free.
  const joined = pending && (shouldJoin(e, pending, pays !== undefined, now) || pending.listing > 0);
  if (pending && (pending.calling || (joined && pending.at <= own && pending.at + CALL_MS <= d.deadline))) {
    const range = { after: start - rules.marginMs, before: start + rules.windowMs + rules.marginMs };
    return join(pending, d, now, { kind: 'list', window: start, ...range, iterator: pending.iterator });
  }
  if (own + CALL_MS > d.deadline) return undefined;
  if (pays) take(e, pays, own);
  // Taken on at its own time, the call is its own: paid if it pays (junk pays for a free call it takes on), free if not.
  // Paid for, it is no failed call's retry: else its time, later, would make the retry free again.
  if (pending) Object.assign(pending, { at: own, owner: d, paid: pays !== undefined, failed: pending.failed && !pays });
  else if (w)
    Object.assign(w, {
      at: own,
      owner: d,
      calling: false,
      paid: pays !== undefined,
      ...listing,
      iterator: undefined,
    });
  else {
    const made = { pages: 0, listedAt: -Infinity, messages: new Map<string, Listed>(), ...listing };
    e.windows.set(start, { at: own, owner: d, calling: false, paid: pays !== undefined, ...made });
  }
  return wait(own);
};

/** The calls a delivery scheduled and has not begun: it gives them up at each decision, and takes them again if needed. */
const scheduledBy = (e: Endpoint, d: Delivery): Call[] =>
  [e.read, ...e.windows.values()].filter((call): call is Call => call?.owner === d && !call.calling);

/** The next command for a delivery (its time up: a verdict, not a wait or a call); a call it no longer needs is left to others,
 * and `released` says so. */
export const decide = (e: Endpoint, d: Delivery, now: number): Command => {
  const scheduled = scheduledBy(e, d);
  for (const call of scheduled) call.owner = undefined;
  d.steps += 1;
  const command = d.verdict ?? (d.steps > e.rules.maxSteps ? UNCHECKED : next(e, d, now));
  e.released ||= scheduled.some((call) => call.owner !== d);
  if (!VERDICTS.has(command.kind)) return now >= d.deadline ? timeUp(e, d, now) : command;
  // A verdict stands. Confirmed but signed by no secret known here: the current one may be replaced, and this
  // delivery reads it before it ends (rule 3). The delivery that read a new current secret shares it first, while
  // it has time (rule 1).
  if (!d.verdict && command.kind === 'confirmed' && !knownSigner(e, d)) e.doubtAt = Math.max(e.doubtAt, d.arrivedAt);
  d.verdict = command;
  if (e.readAt < e.doubtAt && now < d.deadline) {
    // From the allowance: a forgery carrying a real id is confirmed too, and must not buy reads.
    const read = reading(e, d, now, 'reads');
    if (read?.kind === 'read' || read?.kind === 'wait') return read;
  }
  const obliged = e.cache.sharer === d && e.cache.next !== undefined && now < d.deadline;
  return (obliged && sync(e, d, now, true)) || command;
};
/** Whether a secret the endpoint is known to have had signed the delivery. */
const knownSigner = ({ history }: Endpoint, d: Delivery): boolean =>
  d.signedWith(history.current.secret) || history.old.some((seen) => d.signedWith(seen.secret));
/** A delivery that may be genuine and that Svix could not help check in its time: an error naming it to resend. */
const UNCHECKED: Command = { kind: 'error' };
const VERDICTS = new Set<Command['kind']>(['run', 'error', 'confirmed', 'halt', 'refused']);

const next = (e: Endpoint, d: Delivery, now: number): Command => {
  const { createdAt } = d;
  if (createdAt === undefined) return halt('not-a-svix-id');
  const synced = sync(e, d, now);
  if (synced) return synced;
  const { history, rules } = e;
  const { current, old } = history;
  const signed = d.signedWith(current.secret);
  const unsure = unsureOf(history, rules.skewMs);
  if (unsure && (signed || unsure.secrets.some((secret) => d.signedWith(secret))))
    return reading(e, d, now, undefined, unsure.until) ?? record(e, d, createdAt, now) ?? timeUp(e, d, now);
  if (signed && trusted(e)) {
    const sure = now - Math.max(e.lookedAt, e.readAt) <= rules.lookEveryMs;
    if (sure && fresh(e, now)) return { kind: 'run' };
    return reading(e, d, now, undefined) ?? timeUp(e, d, now);
  }
  // Signed with a current secret in doubt: a read settles it (from the allowance, as the doubt may be a forger's),
  // else Svix's record.
  if (signed) return reading(e, d, now, 'reads') ?? record(e, d, createdAt, now) ?? timeUp(e, d, now);
  // Signed with a secret the endpoint had: it may have waited in Zapier's queue across a rotation. Free.
  const oldSigned = old.filter((seen) => d.signedWith(seen.secret)).length;
  const charged = oldSigned === 0;
  const settled = e.readAt >= d.arrivedAt - rules.togetherMs;
  const kind = charged ? 'reads' : undefined;
  const read = d.signatures > oldSigned && !settled ? reading(e, d, now, kind) : undefined;
  // The record out of reach in its time: a read begun since it arrived may still show the secret that signed it.
  const readInstead = () => (d.signatures > oldSigned && e.readAt < d.arrivedAt ? reading(e, d, now, kind) : undefined);
  return read ?? record(e, d, createdAt, now, charged ? 'listings' : undefined) ?? readInstead() ?? timeUp(e, d, now);
};
/** Whether the current secret may sign alone: no confirmed delivery since the last read showed it may be replaced. */
const trusted = (e: Endpoint): boolean => e.readAt >= e.doubtAt;

/** Rule 3: the current secret was seen in the last 10 minutes. */
const fresh = ({ history, rules }: Endpoint, now: number): boolean => now - history.current.start <= rules.freshForMs;
/** No call or wait in the delivery's time: rule 3's verdict if signed with the current secret (and sure it is the
 * current one, and not in doubt), else rule 5's: an error naming the message, since the event may be genuine. */
const timeUp = (e: Endpoint, d: Delivery, now: number): Command => {
  const current = d.signedWith(e.history.current.secret) && trusted(e);
  if (current && unsureOf(e.history, e.rules.skewMs) === undefined) return { kind: fresh(e, now) ? 'run' : 'error' };
  return UNCHECKED;
};
