import { MESSAGE_ID_PATTERN } from '../provider/ids';
import { currentOf, unseenSpans, type SecretHistory } from './secrets';

/**
 * The table "Which delivery runs" of docs/guarantees.md as one pure function:
 * handed what this process knows, the delivery and the time, it returns the
 * next step, which verify.ts performs before asking again. No I/O, no clock.
 */

export const RULES = {
  /** Row 11: z.cache is looked at this often; a look, a write or a read that failed, again after retryAfterMs. */
  lookEveryMs: 60_000,
  retryAfterMs: 5_000,
  /** Row 3: a current secret read longer ago than this is read again before it is trusted. */
  freshForMs: 10 * 60_000,
  /** How far Svix's signing clock may be from this side's: what the signature allows. */
  clockAllowanceMs: 5 * 60_000,
  /** Rows 5, 6: a span found, or a delivery confirmed by the record, this recently makes a span live. */
  liveForMs: 60_000,
  /** Rows 6, 8, 10: calls for deliveries that match no known secret: a burst, then one more every refillMs. */
  burst: 3,
  refillMs: 5_000,
  /** No call is started with less time than this left; a charged read waits this long for others to share it. */
  callMs: 4_000,
  gatherMs: 50,
};

/**
 * What this process knows of one endpoint: the secrets' history; when it
 * last looked at z.cache, or failed to, and whether z.cache may lack what it
 * knows; when Svix last answered a read it made (its start), or failed one;
 * when the record last confirmed a delivery; its read and record calls under
 * way; and the allowance, `calls` left as of `at`.
 */
export interface Known {
  history: SecretHistory;
  madeAt: number;
  lookedAt: number;
  lookFailedAt: number;
  unshared: boolean;
  readAt: number;
  troubleAt: number;
  confirmedAt: number;
  reading?: object;
  records: { size: number };
  allowance: { calls: number; at: number };
}

/** A delivery, its signing time (Svix's clock, whole seconds), and what its invocation has seen. */
export interface Delivery {
  id: string;
  signedAt: number;
  signedWith: (secret: string) => boolean;
  arrivedAt: number;
  deadline: number;
  looked: boolean;
  readFailed: boolean;
}

export type Halt = 'not-a-svix-id' | 'no-valid-signature' | 'unchecked-signature';
export type Step =
  | { kind: 'run' | 'look' | 'wait' }
  | { kind: 'record'; charged: boolean }
  /** Read the secret from `at`, or wait for the read under way. */
  | { kind: 'read'; charged: boolean; at: number }
  | { kind: 'halt'; why: Halt }
  | { kind: 'error'; why: 'unchecked-signature' };
const halt = (why: Halt): Step => ({ kind: 'halt', why });

/** Calls of the allowance left at `now` (fractional while it refills). */
export const callsLeft = ({ calls, at }: Known['allowance'], now: number): number =>
  Math.min(RULES.burst, calls + (now - at) / RULES.refillMs);

export const spend = (allowance: Known['allowance'], now: number): Known['allowance'] => ({
  calls: callsLeft(allowance, now) - 1,
  at: now,
});

/**
 * Rows 5 to 7: a span in which a secret never seen here may have signed it: it
 * ends with the second of the first signing time seen with the next secret
 * (Svix's clock), or when that secret was found, allowing for the clocks.
 */
const spanOf = (known: Known, { signedAt }: Delivery) =>
  unseenSpans(known.history, known.madeAt).find(
    ({ from, next }) =>
      signedAt + 1_000 + RULES.clockAllowanceMs > from &&
      signedAt <= Math.min(next.firstSigned ?? Infinity, next.from + RULES.clockAllowanceMs),
  );

/** Rows 5, 6, 10: the record, free while live; else a call (`credit` past the allowance); else wait, or `instead`. */
const recordOr = (known: Known, delivery: Delivery, now: number, live: number, credit: number, instead: Step): Step => {
  if (now - Math.max(live, known.confirmedAt) < RULES.liveForMs) return { kind: 'record', charged: false };
  if (callsLeft(known.allowance, now) >= 1 - credit && now + RULES.callMs <= delivery.deadline) {
    return { kind: 'record', charged: true };
  }
  return known.records.size > 0 ? { kind: 'wait' } : instead;
};

export const decide = (known: Known, delivery: Delivery, now: number): Step => {
  if (!MESSAGE_ID_PATTERN.test(delivery.id)) return halt('not-a-svix-id');
  const lookDue = known.unshared || now - known.lookedAt > RULES.lookEveryMs;
  if (lookDue && !delivery.looked && now - known.lookFailedAt >= RULES.retryAfterMs) return { kind: 'look' };
  const current = currentOf(known.history);
  const troubled = now - known.troubleAt < RULES.retryAfterMs;
  if (current && delivery.signedWith(current.secret)) {
    const trusted = now - current.seen <= RULES.freshForMs || troubled;
    return trusted ? { kind: 'run' } : { kind: 'read', charged: false, at: now };
  }
  if (known.history.secrets.some(({ secret, until }) => until !== undefined && delivery.signedWith(secret))) {
    return { kind: 'record', charged: false };
  }
  const settled =
    known.readAt >= delivery.arrivedAt || known.readAt > delivery.signedAt + 1_000 + RULES.clockAllowanceMs;
  const span = spanOf(known, delivery);
  // Row 7: signed in the very second the next secret first signed, maybe by a newer one: read for first.
  if (span && (settled || delivery.signedAt !== span.next.firstSigned)) {
    return recordOr(known, delivery, now, span.next.from, 0, halt('unchecked-signature'));
  }
  if (troubled || delivery.readFailed) {
    return recordOr(known, delivery, now, -Infinity, 1, { kind: 'error', why: 'unchecked-signature' });
  }
  if (settled) return halt('no-valid-signature');
  if (known.reading) return { kind: 'read', charged: false, at: now };
  const at = now + Math.max(0, (1 - callsLeft(known.allowance, now)) * RULES.refillMs);
  return at + RULES.callMs <= delivery.deadline ? { kind: 'read', charged: true, at } : halt('unchecked-signature');
};
