import { isRight } from 'fp-ts/Either';
import { DELIVERY_CALL_MS, SVIX_CLOCK_ALLOWANCE_MS } from '../limits';
import { ExpiredPayload } from '../svix/codecs';
import { tryReadMessage, tryReadSecret } from '../svix/api';
import { mayPass, type Caller, type Tried } from '../svix/client';
import { EVENT_TYPE_NAME } from '../svix/eventType';
import type { Clock } from '../zapier/clock';
import type { Failure } from '../zapier/io';
import { doubt, giveBack, knownSigner, learnt, takeToken, trustOf, type Known } from './known';

/**
 * Whether a delivery runs, and on what: its own body, Svix's copy of its message, or nothing (a halt, or an error
 * naming the message to resend). In order:
 *
 * 1. Signed with the secret this process trusts (known.ts): its body runs. No call: the usual delivery.
 * 2. Signed with it, but the secret is stale or in doubt: it is read from Svix again, then 1 again.
 * 3. Signed otherwise (a rotation, a delivery queued across one, junk, a forgery): Svix is asked for the message by
 *    its id. Svix writes a message before it sends it, so a read begun after the delivery arrived that finds none
 *    refutes it (a halt); one of this event type confirms it, and Svix's copy runs. Confirmed, but signed by no
 *    secret known here: the secret may have been replaced, and it is read before it signs anything alone again.
 *
 * A call Svix fails for a moment is made again while the delivery has time. Calls that junk can cause (3, and a read
 * in doubt) take a token of the endpoint's allowance first (limits.ts: JUNK_ALLOWANCE); a confirmation's token pays
 * for the read it leads to as well. A delivery a replaced secret signed is confirmed free: junk cannot sign so. A delivery Svix could not
 * help check in its time ends in an error naming its message, never a halt: it may be genuine.
 */

/** A delivery as its perform reads it: its message id, that id's time (none: not an id Svix makes), whether a
 * secret signed it, when it arrived, and when its checks must be done. */
export interface Delivery {
  id: string;
  createdAt: number | undefined;
  signedWith: (secret: string) => boolean;
  arrivedAt: number;
  deadline: number;
}
/** `gone`: Svix no longer has the endpoint (an edit, or turning the Zap off, removed it). */
export type Halt = 'not-a-svix-id' | 'not-confirmed' | 'before-endpoint' | 'expired' | 'gone';
/** How a delivery ended: its body runs (signed), Svix's copy runs (confirmed), or it stops: a halt (it cannot have come
 * from the Consumer App as sent), unchecked (Svix could not help check it in its time: it may be genuine), or Svix
 * refused a call it needed. The trigger words each (src/messages.ts). */
export type Verdict =
  | { kind: 'signed' }
  | { kind: 'confirmed'; event: unknown }
  | { kind: 'halt'; why: Halt }
  | { kind: 'unchecked' }
  | { kind: 'refused'; call: 'read' | 'confirm'; failure: Failure };

/** What one delivery's checks work with: the process's clock, Svix, the Zap's endpoint and what is known of it. */
export interface Check {
  clock: Clock;
  caller: () => Caller;
  endpointId: string;
  known: Known;
  delivery: Delivery;
}

const SIGNED: Verdict = { kind: 'signed' };
const UNCHECKED: Verdict = { kind: 'unchecked' };
const halt = (why: Halt): Verdict => ({ kind: 'halt', why });

export const verify = async (check: Check): Promise<Verdict> => {
  const { clock, known, delivery } = check;
  if (delivery.createdAt === undefined) return halt('not-a-svix-id');
  const trusted = () => trustOf(known, clock.now()) === 'trusted';
  const signedNow = () => delivery.signedWith(known.secret);

  if (signedNow() && trusted()) return SIGNED;
  if (signedNow()) {
    // A read in doubt is paid for: junk carrying a real message id can cause a doubt.
    const failed = await readSecret(check, known.doubted);
    if (failed) return failed;
    if (signedNow() && trusted()) return SIGNED;
  }
  // An edit's endpoint is sent messages from as far back as the Zap was on; none older.
  if (delivery.createdAt < known.madeAt - SVIX_CLOCK_ALLOWANCE_MS) return halt('before-endpoint');
  // Free where a secret this process saw replaced signed it: a delivery queued across a rotation, never junk.
  const queued = known.replaced.some((secret) => delivery.signedWith(secret));
  const confirmed = await confirm(check, !queued, () => !(signedNow() && trusted()));
  if (confirmed.kind === 'confirmed' && !knownSigner(known, delivery.signedWith)) {
    // Paid for by the confirmation's token: a read after each confirmation at most. Paid again, it could wait behind
    // the deliveries it would spare a confirmation each (performs at once in one process, as in the sandbox).
    doubt(known);
    await readSecret(check, false);
  }
  return confirmed;
};

/** Reads the endpoint's secret into what is known of it; a verdict only where that ends the delivery. */
const readSecret = async (check: Check, paid: boolean): Promise<Verdict | undefined> => {
  const { clock, caller, endpointId, known } = check;
  const startedAt = clock.now();
  const tried = await callSvix(check, paid, (timeoutMs) => tryReadSecret(caller(), endpointId, timeoutMs));
  if (tried === 'no-time' || tried === 'not-needed') return UNCHECKED;
  if (!tried.ok) return failedWith('read', tried.failure);
  if (tried.answer === 'gone') return halt('gone');
  learnt(known, tried.answer, startedAt);
  return undefined;
};

/**
 * Asks Svix for the delivery's message: Svix's copy runs, or the delivery halts, or an error names it to resend. Where
 * it waited for a token and meanwhile another delivery taught this process the secret that signed it
 * (`stillNeeded` false: performs at once in one process), its body runs instead.
 */
const confirm = async (check: Check, paid: boolean, stillNeeded: () => boolean): Promise<Verdict> => {
  const { caller, delivery } = check;
  const make = (timeoutMs: number) => tryReadMessage(caller(), delivery.id, timeoutMs);
  const tried = await callSvix(check, paid, make, stillNeeded);
  if (tried === 'not-needed') return SIGNED;
  if (tried === 'no-time') return UNCHECKED;
  if (!tried.ok) return failedWith('confirm', tried.failure);
  const message = tried.answer;
  if (message === 'none' || message.eventType !== EVENT_TYPE_NAME) return halt('not-confirmed');
  if (isExpired(message.payload)) return halt('expired');
  return { kind: 'confirmed', event: message.payload };
};

/** Svix's stand-in for a payload it no longer keeps: `{"expired": true}` and nothing else. */
const isExpired = (payload: unknown): boolean =>
  isRight(ExpiredPayload.decode(payload)) && Object.keys(Object(payload)).length === 1;

/** A failure that outlasted the delivery's time is unchecked; any other (the key's rights, say) is Svix's refusal. */
const failedWith = (call: 'read' | 'confirm', failure: Failure): Verdict =>
  retryInMs(failure, 1) === undefined ? { kind: 'refused', call, failure } : UNCHECKED;

/**
 * Makes one Svix call of the delivery, taking a token of the allowance first if it is `paid`, and makes it again
 * after a failure that may pass while the delivery has time for it: its last answer or failure, or 'no-time' where
 * it could not be made (no token, or no time left for a call). Waiting for its token, it looks every half second
 * whether the call is `stillNeeded`; if not, it gives the token back and says so.
 */
const callSvix = async <T>(
  { clock, known, delivery }: Check,
  paid: boolean,
  make: (timeoutMs: number) => Promise<Tried<T>>,
  stillNeeded = () => true,
): Promise<Tried<T> | 'no-time' | 'not-needed'> => {
  const latest = delivery.deadline - DELIVERY_CALL_MS;
  if (paid) {
    // A token at once, or no later than leaves time for this call and the read a confirmation may lead to.
    const waitMs = takeToken(known, clock.now(), Math.max(clock.now(), latest - DELIVERY_CALL_MS));
    if (waitMs === undefined) return 'no-time';
    for (const until = clock.now() + waitMs; clock.now() < until;) {
      await clock.sleep(Math.min(500, until - clock.now())).done;
      if (!stillNeeded()) {
        giveBack(known);
        return 'not-needed';
      }
    }
  }
  for (let failures = 1; ; failures += 1) {
    if (clock.now() > latest) return 'no-time';
    const tried = await make(DELIVERY_CALL_MS);
    const againInMs = tried.ok ? undefined : retryInMs(tried.failure, failures);
    if (againInMs === undefined || clock.now() + againInMs > latest) return tried;
    await clock.sleep(againInMs).done;
  }
};

/** When to try a failed call again: after a back-off (and a 429's Retry-After), or never (a refusal). */
const retryInMs = (failure: Failure, failures: number): number | undefined => {
  const backoffMs = Math.min(2_000, 100 * 2 ** (failures - 1));
  if (failure.kind === 'throttled') return Math.max(backoffMs, (failure.delaySeconds ?? 0) * 1_000);
  return mayPass(failure) ? backoffMs : undefined;
};
