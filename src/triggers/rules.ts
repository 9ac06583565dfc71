import { MESSAGE_ID_PATTERN } from '../provider/ids';
import { currentOf, type SecretHistory } from './secrets';

/**
 * Which delivery runs, as one pure function: handed what this process knows,
 * the delivery and the time, it returns the next step, which verify.ts
 * performs before asking again. No I/O, no clock. The rows, in order:
 *
 * 1. An svix-id that is not `msg_` and 27 letters or digits halts.
 * 2. A process that has not looked at z.cache for 50 s (or whose knowledge it
 *    lacks) looks first: it merges what other processes learnt and writes what
 *    they lack, so a secret one process reads reaches the others within a minute.
 * 3. Signed with the current secret, read in the last 10 minutes, and sure (a
 *    look or a read in the last 50 s): it runs on the delivered body.
 * 4. Signed with the current secret otherwise: read it (one read at a time,
 *    shared), then row 3; runs anyway while Svix fails and this process is sure.
 * 5. A signature no known secret made, not settled by a read begun since it
 *    arrived: read the secret (a call of the allowance, unless a replaced
 *    secret also signed it), then decide again.
 * 6. Signed with a replaced secret (it waited in Zapier's queue across a
 *    rotation), or its window's record has answered: Svix's record decides,
 *    without the allowance; the Zap then gets Svix's copy of the event.
 * 7. No known secret signed it otherwise: as row 6, from the allowance; with
 *    no call left in its time, a halt (or an error when Svix has been failing).
 *
 * Junk cannot tell itself apart from a genuine delivery signed with a secret
 * never seen here, so rows 5 and 7 spend a bounded allowance per process;
 * deliveries signed with a replaced secret cannot be told from genuine ones
 * queued across a rotation, which must not be lost, so row 6 does not.
 */

export const RULES = {
  /** Row 2: z.cache is looked at this often, so what one process learns reaches the others within a minute. */
  lookEveryMs: 50_000,
  /** A look or a write of z.cache that failed is made again after this. */
  retryAfterMs: 5_000,
  /** Row 4: the current secret is trusted for this long after a read showed it. */
  freshForMs: 10 * 60_000,
  /** How far Svix's signing clock may be from this side's: what the signature allows. */
  clockAllowanceMs: 5 * 60_000,
  /** Svix calls for deliveries no known secret signed: a burst, then one per refillMs; reads and listings apart. */
  reads: { burst: 3, refillMs: 2_000 },
  listings: { burst: 5, refillMs: 2_000 },
  /** No call is started with less of the delivery's time left than this. */
  callMs: 3_000,
  /** After a call Svix failed, the next waits this long, doubled for each failure in a row, at most maxPauseMs. */
  pauseMs: 250,
  maxPauseMs: 2_000,
};

/**
 * What this process knows of one endpoint: the secrets' history; its last look at z.cache (and failed one),
 * and whether z.cache lacks what it knows; the last answered read of the secret, and when the one under way
 * starts; Svix's failures in a row; how far Svix's clock is ahead at least (as deliveries the current secret
 * signed show); the allowances; and for a delivery, whether Svix's record has answered, or failed the last
 * listing of its window, or when the one under way starts.
 */
export interface Known {
  history: SecretHistory;
  lookedAt: number;
  lookFailedAt: number;
  unshared: boolean;
  readAt: number;
  reading: number | undefined;
  failures: number;
  failedAt: number;
  svixAhead: number;
  allowance: { reads: Allowance; listings: Allowance };
  records: (delivery: Delivery) => 'answered' | 'failed' | number | undefined;
}

/** A delivery: its signing time (Svix's clock, whole seconds), its signatures, and whether it has looked. */
export interface Delivery {
  id: string;
  signedAt: number;
  signatures: number;
  signedWith: (secret: string) => boolean;
  arrivedAt: number;
  deadline: number;
  looked: boolean;
}

export type Allowance = { calls: number; at: number };
export type Kind = keyof Known['allowance'];

export type Step =
  | { kind: 'run' | 'look' }
  /** Read the secret, or list the record's window, from `at`, or wait for the one under way; `charged`: of the allowance. */
  | { kind: 'read' | 'record'; charged: boolean; at: number }
  | { kind: 'halt'; why: 'not-a-svix-id' | 'unchecked-signature' }
  | { kind: 'error'; why: 'unchecked-signature' };

/** How far Svix's clock is ahead at least: as runs showed, else as far behind as a signature allows. */
export const svixAhead = ({ svixAhead: ahead }: Known) => Math.max(ahead, -RULES.clockAllowanceMs);

/** Calls of an allowance left at `now` (fractional while it refills). */
export const callsLeft = (kind: Kind, { calls, at }: Allowance, now: number): number =>
  Math.min(RULES[kind].burst, calls + (now - at) / RULES[kind].refillMs);

export const spend = (kind: Kind, was: Allowance, now: number) => ({ calls: callsLeft(kind, was, now) - 1, at: now });

/** When the next call to Svix may start: at once, or after the pause that follows a failure. */
const pausedUntil = (known: Known): number =>
  known.failures === 0
    ? -Infinity
    : known.failedAt + Math.min(RULES.maxPauseMs, RULES.pauseMs * 2 ** (known.failures - 1));

/** A call from when it may start: now, after the pause, or (charged) at the allowance's next call; none if too late. */
const call = (known: Known, delivery: Delivery, now: number, kind: 'read' | 'record', charged: boolean) => {
  const allowance: Kind = kind === 'read' ? 'reads' : 'listings';
  const left = callsLeft(allowance, known.allowance[allowance], now);
  const allowed = charged ? now + Math.max(0, (1 - left) * RULES[allowance].refillMs) : now;
  const at = Math.max(now, allowed, pausedUntil(known));
  return at + RULES.callMs > delivery.deadline ? undefined : ({ kind, charged, at } satisfies Step);
};

/**
 * The call under way (or waiting for its time), if it starts in the delivery's time and no later than one of its
 * own could; else one of its own: a listing replaces the one under way, a read is made one at a time.
 */
const join = (known: Known, delivery: Delivery, now: number, kind: 'read' | 'record', charged: boolean) => {
  const at = kind === 'read' ? known.reading : known.records(delivery);
  if (at === 'answered') return { kind, charged: false, at: now } satisfies Step;
  // A listing Svix failed is made again after the pause, outside the allowance (it took its call).
  const own = call(known, delivery, now, kind, charged && at !== 'failed');
  if (at === 'failed') return own;
  if (at === undefined) return own;
  if (at + RULES.callMs <= delivery.deadline && (kind === 'read' || !own || at <= own.at))
    return { kind, charged: false, at } satisfies Step;
  return kind === 'record' ? own : undefined;
};

export const decide = (known: Known, delivery: Delivery, now: number): Step => {
  if (!MESSAGE_ID_PATTERN.test(delivery.id)) return { kind: 'halt', why: 'not-a-svix-id' };
  const lookDue = known.unshared || now - known.lookedAt > RULES.lookEveryMs;
  if (lookDue && !delivery.looked && now - known.lookFailedAt >= RULES.retryAfterMs) return { kind: 'look' };
  const current = currentOf(known.history);
  // Rows 3, 4: trusted while fresh, and while this process knows what the others learnt (a look, or a read).
  if (current && delivery.signedWith(current.secret)) {
    const sure = now - Math.max(known.lookedAt, known.readAt) <= RULES.lookEveryMs;
    const failing = known.failures >= 2 && now - known.failedAt < RULES.retryAfterMs;
    if (sure && (now - current.seen <= RULES.freshForMs || failing)) return { kind: 'run' };
    return join(known, delivery, now, 'read', false) ?? { kind: 'run' };
  }
  const replaced = known.history.secrets.filter((old) => old.until !== undefined && delivery.signedWith(old.secret));
  const free = replaced.length > 0;
  // Settled by a read that began after it arrived, or after it was signed (Svix's clock as far ahead as it may be).
  const settled = known.readAt >= delivery.arrivedAt || known.readAt > delivery.signedAt + 1_000 - svixAhead(known);
  const unchecked: Step =
    known.failures > 0 ? { kind: 'error', why: 'unchecked-signature' } : { kind: 'halt', why: 'unchecked-signature' };
  // Row 5: a signature no known secret made, maybe a newer secret's: a read first, shared by all that wait for it.
  const read =
    delivery.signatures > replaced.length && !settled ? join(known, delivery, now, 'read', !free) : undefined;
  // Rows 6, 7: Svix's record decides; free when a secret the endpoint had signed it, or it has answered already.
  return read ?? join(known, delivery, now, 'record', !free) ?? unchecked;
};
