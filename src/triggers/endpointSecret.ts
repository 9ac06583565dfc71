import { isRight } from 'fp-ts/Either';
import type { ZObject } from 'zapier-platform-core';
import { getEndpointSecret } from '../provider/api';
import { timeOfProviderId } from '../provider/ksuid';
import type { Failure } from '../provider/failures';
import { mayPass, raise, type Caller } from '../provider/request';
import { CLOCK_ALLOWANCE_SECONDS, signedWith } from '../provider/signature';
import { cacheGet, cacheSet } from './cache';
import { CLAIM_TTL_SECONDS, pause, probeNx, REMEMBER_RUNS_SECONDS } from './claim';
import { resendHint } from './delivery';
import type * as ProviderRecord from './record';
import {
  classify,
  currentOf,
  forgetBefore,
  inUnseenSpan,
  mergeHistories,
  observeRead,
  refundToken,
  settles,
  spendToken,
  startingWith,
  tokensLeft,
  waitForToken,
  SecretHistory,
} from './secretHistory';

/**
 * Which deliveries run on their signature. A delivery signed with the
 * endpoint's current secret is the event. One signed with a secret the
 * endpoint had before (it waited in Zapier's queue while the secret was
 * rotated) runs only when the provider's record confirms it (record.ts), and
 * so does one signed at a moment when a secret never seen here may have been
 * current. Anything else is junk.
 *
 * The history of the endpoint's secrets (secretHistory.ts) is kept in memory
 * for a warm process and in z.cache across processes. A process looks at
 * what the others learnt at least once a minute, so once any process has seen
 * a new secret, a revoked one stops verifying everywhere within a minute; and
 * a current secret read more than ten minutes ago is read again before it is
 * trusted, so it stops within ten minutes even when no process has seen the
 * new one.
 *
 * A delivery that matches no known secret may be signed with a newer one: the
 * secret is read again, once per process for every delivery that arrived
 * before the read started, and within an allowance per endpoint in each
 * process (a burst, then one call every few seconds) that a call finding
 * something real gives back. Junk signed with no secret the endpoint had
 * therefore costs a handful of provider calls in each process, then one every
 * few seconds, however much of it arrives; a genuine delivery signed with a
 * new secret waits a few seconds for the allowance (a read holds no place
 * while it runs, so the allowance can be a call overdrawn: ten seconds at
 * most). A delivery signed with a secret the endpoint had
 * is checked against the record without the allowance, however many arrive:
 * only whoever holds such a secret can send them.
 *
 * When Svix fails a read (twice) for trouble that may pass, the deliveries
 * that waited for it ask the record instead, within the allowance, and wait
 * for no other read (Svix may keep failing them), though they make the owed
 * one when it is due and they have time for it and the record after it. The
 * read is owed: a few seconds later it is made again, neither taking a place
 * in the allowance nor charged to it, and deliveries arriving meanwhile wait
 * for it when they have the time, so one call settles them all and junk
 * cannot keep the secret from being read.
 */

/** Limits and waits, in an object so tests can read them. */
export const secretSettings = {
  /** Each process merges what the others learnt (z.cache) at least this often. */
  syncAfterMs: 60_000,
  /** A cache that could not answer is asked again after this long. */
  syncRetryAfterMs: 5_000,
  /** A current secret last read longer ago than this is read again before it is trusted. */
  staleAfterMs: 10 * 60_000,
  /** After a read of a stale secret failed, the secret is trusted this long before another read is tried. */
  staleRetryAfterMs: 30_000,
  /** Provider calls for deliveries that match no known secret: a burst of this many… */
  burst: 3,
  /** …then one more every this many ms. */
  refillMs: 5_000,
  /** Each of the (at most two) attempts of one read of the secret. */
  readTimeoutMs: 4_000,
  /** After a read failed for trouble at Svix, no read is made for this long: the owed one comes after it. */
  readRetryAfterMs: 5_000,
};

/** The record check, loaded only when a delivery needs it: most never do, and every process starts faster. */
const providerRecord = (): typeof ProviderRecord => require('./record');

/** Replaced secrets are kept as long as runs are remembered: an older delivery is refused anyway. */
const KEEP_REPLACED_MS = (REMEMBER_RUNS_SECONDS + CLOCK_ALLOWANCE_SECONDS) * 1000;

export const secretHistoryKey = (endpointId: string): string => `secrets:${endpointId}`;

/** What perform knows of the Zap's endpoint from its subscribe, and which connection it runs for. */
export interface Subscription {
  /** The connection, as connectionScope gives it. */
  connection: string;
  id: string;
  secret: string;
  checkedAt?: number;
  cacheHonoursNx?: boolean;
}

/** The parts of a delivery its signature covers, and the signing time it states. */
export interface SignedParts {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  signedAtSeconds: number;
}

export type Verdict =
  /** Signed with the current secret: the delivered body is the event. */
  | { kind: 'signed'; cacheHonoursNx: boolean | undefined }
  /** Confirmed by the provider's record: `event` is its copy of the payload (the delivered body is not used). */
  | { kind: 'confirmed'; event: unknown; cacheHonoursNx: boolean | undefined }
  | { kind: 'refused'; why: 'no-valid-signature' | 'unchecked-signature' };

/**
 * How a read of the secret ended: `passing` when the provider had trouble for
 * the moment (a 5xx, a time-out, its rate limit), and `error` when it was
 * anything else (the key refused, the endpoint gone), which the delivery shows.
 */
type ReadOutcome = { ok: true } | { ok: false; passing: true } | { ok: false; passing: false; error: unknown };

/** Provider trouble that may pass: another call (of the record) is worth making. */
const isPassing = (failure: Failure | undefined): boolean =>
  failure !== undefined && (failure.kind === 'throttled' || mayPass(failure));

/** What one process knows of one endpoint. */
interface EndpointState {
  history: SecretHistory;
  /** When this process last merged what z.cache holds. */
  syncedAt: number;
  /**
   * When the allowance z.cache held was last spent, as this process last saw
   * it: an allowance seen before is not merged again, or a call given back
   * here since would be taken away by the older spending.
   */
  sharedSpentAt?: number;
  /** When a read of a stale current secret last failed. */
  staleReadFailedAt?: number;
  /** When a read of the secret last failed for trouble at Svix: no read for a delivery that matches no known secret is made for a few seconds. */
  readFailedAt?: number;
  /**
   * That read is owed: the next one, a few seconds later, takes no place in
   * the allowance (the failed one was not charged, and Svix's trouble was no
   * delivery's doing). So junk cannot keep the secret from being read again
   * once Svix answers, and while Svix keeps failing it is read at most once
   * every few seconds.
   */
  readOwed?: boolean;
  /** The read of the secret under way in this process, and when it started. */
  reading?: { startedAt: number; done: Promise<ReadOutcome> };
  /** Provider calls under way for deliveries that match no known secret, each holding a place in the allowance. */
  held: number;
  /** Deliveries waiting for one of those calls to end. */
  waiting: Array<() => void>;
}

/**
 * This process's memory, shared by every connection it serves: keyed by the
 * connection as well as the endpoint, as z.cache is scoped, so one
 * connection's reads never stand for another's. Bounded: the oldest goes first.
 */
const memory = new Map<string, EndpointState>();
const MEMORY_LIMIT = 1_000;

/** For tests: a cold process. */
export const forgetKnownSecrets = (): void => memory.clear();

const memoryKey = (subscription: Subscription): string => `${subscription.connection}\u0000${subscription.id}`;

const stateOf = (subscription: Subscription): EndpointState => {
  const key = memoryKey(subscription);
  const known = memory.get(key);
  if (known) return known;
  if (memory.size >= MEMORY_LIMIT) {
    const oldest = memory.keys().next();
    if (!oldest.done) memory.delete(oldest.value);
  }
  const checkedAt = subscription.checkedAt ?? 0;
  // The subscribe made the endpoint with this secret: current since the endpoint was made.
  const made = timeOfProviderId(subscription.id) ?? checkedAt;
  const state: EndpointState = {
    history: startingWith(subscription.secret, Math.min(made, checkedAt), checkedAt),
    syncedAt: Number.NEGATIVE_INFINITY,
    held: 0,
    waiting: [],
  };
  memory.set(key, state);
  return state;
};

const nxOf = (subscription: Subscription, state: EndpointState | undefined): boolean | undefined =>
  subscription.cacheHonoursNx ?? state?.history.cacheHonoursNx;

const matcher = (delivery: SignedParts) => (secret: string) =>
  signedWith(secret, delivery.id, delivery.timestamp, delivery.signature, delivery.body);

/**
 * The usual case, without a promise (each costs on the platform, which tracks
 * them all): this process looked at z.cache within the minute, read the secret
 * within ten, and the delivery is signed with it.
 */
export const verifyKnown = (subscription: Subscription, delivery: SignedParts): Verdict | undefined => {
  const state = memory.get(memoryKey(subscription));
  const now = Date.now();
  if (!state || now - state.syncedAt > secretSettings.syncAfterMs) return undefined;
  const current = currentOf(state.history);
  if (!current || now - current.seen > secretSettings.staleAfterMs) return undefined;
  return matcher(delivery)(current.secret) ? { kind: 'signed', cacheHonoursNx: nxOf(subscription, state) } : undefined;
};

/** What z.cache holds of the endpoint's history: undefined when there is none, `failed` when it could not say. */
const readShared = async (z: ZObject, endpointId: string): Promise<SecretHistory | undefined | 'failed'> => {
  try {
    const decoded = SecretHistory.decode(await cacheGet(z, secretHistoryKey(endpointId)));
    return isRight(decoded) ? decoded.right : undefined;
  } catch {
    return 'failed';
  }
};

/**
 * Merges what other processes learnt into this process's history. A cache
 * that could not answer is asked again a few seconds later, not a minute.
 */
const sync = async (
  z: ZObject,
  subscription: Subscription,
  state: EndpointState,
): Promise<SecretHistory | undefined> => {
  const at = Date.now();
  const shared = await readShared(z, subscription.id);
  if (shared === 'failed') {
    state.syncedAt = Math.max(state.syncedAt, at - secretSettings.syncAfterMs + secretSettings.syncRetryAfterMs);
    return undefined;
  }
  const spentAt = shared?.allowance?.at;
  const news = shared && spentAt !== undefined && spentAt === state.sharedSpentAt ? withoutAllowance(shared) : shared;
  state.history = mergeHistories(state.history, news, Date.now(), secretSettings);
  state.sharedSpentAt = spentAt ?? state.sharedSpentAt;
  state.syncedAt = at;
  return shared;
};

const withoutAllowance = ({ allowance: _spent, ...rest }: SecretHistory): SecretHistory => rest;

/** Whether the shared history lacks something this process knows: a secret, or a replacement. */
const lacks = (shared: SecretHistory | undefined, mine: SecretHistory): boolean =>
  mine.secrets.some((entry) => {
    const there = shared?.secrets.find((candidate) => candidate.secret === entry.secret);
    return !there || (entry.until !== undefined && there.until === undefined);
  });

/**
 * Shares this process's history: merged with what z.cache holds first, so no
 * process's knowledge is lost. Two processes may write at once, and the last
 * write wins: the write is read back, and made again (once) when another
 * process's write took what this one knows away.
 */
const publish = async (z: ZObject, subscription: Subscription, state: EndpointState): Promise<void> => {
  await sync(z, subscription, state);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    state.history = forgetBefore(state.history, Date.now() - KEEP_REPLACED_MS);
    const key = secretHistoryKey(subscription.id);
    const stored = await cacheSet(z, key, state.history, CLAIM_TTL_SECONDS, false).catch(() => false);
    if (stored !== true) return;
    state.sharedSpentAt = state.history.allowance?.at;
    const after = await sync(z, subscription, state);
    if (!lacks(after, state.history)) return;
  }
};

/** Less time left than this after a failed read: the invocation's budget ran out, not Svix's patience. */
const OUT_OF_TIME_MS = 500;

/** A delivery that could not be checked in time while Svix had trouble: an error (not a halt) naming it. */
const couldNotCheck = (z: ZObject, messageId: string): never =>
  raise(z, {
    kind: 'error',
    code: 'SignatureNotChecked',
    status: 503,
    message: `The auction event ${messageId} was not signed with this Zap's endpoint secret as last read, and Svix had trouble answering whether the secret had changed or whether the event is genuine, so the Zap did not run for it. ${resendHint(messageId)}`,
  });

/**
 * Reads the endpoint's secret, as the one read under way in this process.
 * `charged`: made for a delivery that matches no known secret, so charged to
 * the allowance when it ends. A read holds no place while it runs (there is
 * one at a time): a read Svix is slow to answer must not keep the record
 * from being asked.
 */
const readSecret = (
  z: ZObject,
  caller: () => Caller,
  subscription: Subscription,
  state: EndpointState,
  charged: boolean,
): Promise<ReadOutcome> => {
  const startedAt = Date.now();
  const known = state.history;
  const before = currentOf(known)?.secret;
  state.readOwed = false;
  const read = async (): Promise<ReadOutcome> => {
    /** What the read is charged: nothing when it found a new secret, or failed for trouble at Svix. */
    let charge: 'found' | 'nothing' | 'unused' = 'nothing';
    let failure: Failure | undefined;
    const get = () =>
      getEndpointSecret(caller(), subscription.id, {
        timeoutMs: secretSettings.readTimeoutMs,
        attempts: 2,
        // Kept to tell trouble that may pass from a failure the person must act on.
        reword: (described) => (failure = described),
      });
    try {
      let readAt = startedAt;
      let secret = await get();
      if (state.history.secrets.some((entry) => entry.secret === secret && entry.until !== undefined)) {
        // A secret known to be replaced, shown current: this read may have crossed a rotation
        // (answered from before it). Only a second read, started now, may bring it back.
        readAt = Date.now();
        secret = await get();
      }
      if (secret !== before) charge = 'found';
      state.history = observeRead(state.history, secret, readAt);
      if (nxOf(subscription, state) === undefined) {
        // A Zap turned on by an older version: learn once how to claim in one round trip.
        const cacheHonoursNx = await probeNx(z);
        if (cacheHonoursNx !== undefined) state.history = { ...state.history, cacheHonoursNx };
      }
      return { ok: true };
    } catch (error) {
      if (!isPassing(failure)) return { ok: false, passing: false, error };
      // Trouble at Svix says nothing of the delivery: not charged, and for a few seconds
      // deliveries ask the record rather than read again (see checkSignature). A read cut
      // short because the invocation ran out of time is no sign of trouble at Svix.
      charge = 'unused';
      if (caller().deadline.remainingMs() >= OUT_OF_TIME_MS) {
        state.readFailedAt = Date.now();
        state.readOwed = true;
      }
      return { ok: false, passing: true };
    } finally {
      // Whoever waits is woken: what the read found may settle them.
      settleCall(state, charged ? charge : 'unused');
      // Shared when it taught something (a failed read changes nothing).
      if (state.history !== known) await publish(z, subscription, state);
    }
  };
  const done = read().finally(() => {
    if (state.reading?.done === done) state.reading = undefined;
  });
  state.reading = { startedAt, done };
  return done;
};

/**
 * Takes a place for one provider call on behalf of a delivery that matches
 * no known secret. The places are the allowance's calls left, less those
 * under way: a call is charged when it ends having found nothing, and one that
 * found something real costs nothing, so genuine traffic keeps the allowance
 * full and junk empties it. When there is no place, this waits for a call
 * or a read under way to end, for the allowance to refill, or for a read owed
 * after Svix's trouble to be due, and says `woken`: what happened meanwhile
 * may settle the delivery already. `too-late`: no place can be had within the
 * operation's deadline.
 */
const takePlace = async (state: EndpointState, caller: () => Caller): Promise<'taken' | 'woken' | 'too-late'> => {
  const now = Date.now();
  const room = tokensLeft(state.history, now, secretSettings) - state.held;
  if (room >= 1) {
    state.held += 1;
    return 'taken';
  }
  // Room must be left for the call itself: one attempt at least (a second is made if time allows).
  const spare = caller().deadline.remainingMs() - secretSettings.readTimeoutMs;
  // A read owed after Svix's trouble may settle the delivery: wake when it is due.
  const owedIn = state.readOwed && readRetryAt(state) > now ? readRetryAt(state) - now : Number.POSITIVE_INFINITY;
  const wait = Math.min(state.held > 0 ? spare : waitForToken(state.history, now, secretSettings), owedIn);
  if (spare <= 0 || wait > spare) return 'too-late';
  await new Promise<void>((resolve) => {
    const wake = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      const at = state.waiting.indexOf(wake);
      if (at >= 0) state.waiting.splice(at, 1);
      resolve();
    }, wait);
    state.waiting.push(wake);
  });
  return 'woken';
};

/** When the read owed after a failed one may be made. */
const readRetryAt = (state: EndpointState): number =>
  (state.readFailedAt ?? Number.NEGATIVE_INFINITY) + secretSettings.readRetryAfterMs;

/**
 * Gives a place back: a call that found something real (a new secret, a
 * genuine event) gives the allowance a call back, one that found nothing is
 * charged to it, and a place that was not used changes nothing.
 */
const givePlace = (state: EndpointState, call: 'found' | 'nothing' | 'unused'): void => {
  state.held = Math.max(0, state.held - 1);
  settleCall(state, call);
};

/** Charges a call that ended to the allowance (or gives it back), and wakes whoever waits for room. */
const settleCall = (state: EndpointState, call: 'found' | 'nothing' | 'unused'): void => {
  const now = Date.now();
  if (call === 'found') state.history = refundToken(state.history, now, secretSettings);
  if (call === 'nothing') state.history = spendToken(state.history, now, secretSettings);
  for (const wake of state.waiting.splice(0)) wake();
};

/**
 * The delivery checked against what is known of the endpoint's secrets, read
 * again when needed. `caller` gives what a provider call needs; it is asked
 * for only when one is made. `startedAt`: when this invocation began.
 */
export const checkSignature = async (
  z: ZObject,
  caller: () => Caller,
  subscription: Subscription,
  delivery: SignedParts,
  startedAt: number,
): Promise<Verdict> => {
  const state = stateOf(subscription);
  const matches = matcher(delivery);
  const cacheHonoursNx = () => nxOf(subscription, state);
  const signed = (): Verdict => ({ kind: 'signed', cacheHonoursNx: cacheHonoursNx() });
  const record = () =>
    providerRecord().confirmByRecord(z, caller(), { endpoint: subscription, messageId: delivery.id });
  const confirmed = async (): Promise<Verdict> => ({
    kind: 'confirmed',
    event: await record(),
    cacheHonoursNx: cacheHonoursNx(),
  });
  if (Date.now() - state.syncedAt > secretSettings.syncAfterMs) await sync(z, subscription, state);

  let found = classify(state.history, matches);
  if (found.kind === 'current' && Date.now() - found.entry.seen > secretSettings.staleAfterMs) {
    // Read more than ten minutes ago: it may have been revoked since. If it cannot be read
    // now, the stale secret is trusted (and not read again for a while).
    const failedAt = state.staleReadFailedAt ?? Number.NEGATIVE_INFINITY;
    if (Date.now() - failedAt < secretSettings.staleRetryAfterMs) return signed();
    const outcome = await (state.reading?.done ?? readSecret(z, caller, subscription, state, false));
    if (!outcome.ok && !outcome.passing) throw outcome.error;
    if (!outcome.ok) {
      state.staleReadFailedAt = Date.now();
      return signed();
    }
    found = classify(state.history, matches);
  }
  if (found.kind === 'current') return signed();
  // A secret this endpoint had: however many such deliveries arrive, each is checked.
  if (found.kind === 'replaced') return confirmed();

  /**
   * The record asked with a place in the allowance: a genuine event gives the
   * call back, anything else (not confirmed, or no answer) is charged.
   */
  const confirmWithPlace = async (): Promise<Verdict | 'woken' | 'too-late'> => {
    const place = await takePlace(state, caller);
    if (place !== 'taken') return place;
    let genuine = false;
    try {
      const verdict = await confirmed();
      genuine = true;
      return verdict;
    } finally {
      givePlace(state, genuine ? 'found' : 'nothing');
      if (!genuine) await publish(z, subscription, state);
    }
  };
  /**
   * The secret could not be read (twice) for trouble that may pass: the record
   * can still say whether the event is genuine, and it needs no secret. It is
   * asked with a place in the allowance like any call for such a delivery, so
   * junk arriving while Svix has trouble costs no more than at other times;
   * when no place can be had in time, or the record cannot be read either, the
   * error names the event and how to send it again. `again` when it waited:
   * what happened meanwhile (a read, the moment for the owed one) may settle
   * the delivery. Any other failure (the key refused, the endpoint gone) is
   * the delivery's error, as the person must act on it.
   */
  const confirmInstead = async (read: Extract<ReadOutcome, { ok: false }>): Promise<Verdict | 'again'> => {
    if (!read.passing) throw read.error;
    const checked = await confirmWithPlace();
    if (checked === 'too-late') return couldNotCheck(z, delivery.id);
    return checked === 'woken' ? 'again' : checked;
  };

  // Signed with no secret known here: junk, or a secret this side has not seen yet.
  let syncedSinceStart = state.syncedAt >= startedAt;
  /** Set once a read this delivery waited for failed for trouble at Svix. */
  let recordInstead: Extract<ReadOutcome, { ok: false }> | undefined;
  /** The time left after the owed read (two attempts) and a call of the record after it. */
  const spareAfterOwedRead = (): number => caller().deadline.remainingMs() - 3 * secretSettings.readTimeoutMs;
  for (;;) {
    // What was learnt while this delivery waited (a read, another process's news) may settle it.
    found = classify(state.history, matches);
    if (found.kind === 'current') return signed();
    if (found.kind === 'replaced') return confirmed();
    if (settles(state.history, delivery.signedAtSeconds, startedAt)) {
      // Read after it was signed: no newer secret can have signed it. A secret that came and
      // went unseen between two reads still could have, and then only the record can tell.
      if (!inUnseenSpan(state.history, delivery.signedAtSeconds)) return { kind: 'refused', why: 'no-valid-signature' };
      const checked = await confirmWithPlace();
      if (checked === 'too-late') return { kind: 'refused', why: 'unchecked-signature' };
      if (checked !== 'woken') return checked;
      continue;
    }
    let failedRead = recordInstead;
    const reading = state.reading;
    if (recordInstead) {
      // This delivery saw Svix fail a read: it asks the record from now on, and waits for no
      // other read (Svix may keep failing them), though it makes the owed one when it is due.
      if (!reading && state.readOwed && Date.now() >= readRetryAt(state) && spareAfterOwedRead() >= 0) {
        const outcome = await readSecret(z, caller, subscription, state, false);
        if (outcome.ok) failedRead = undefined;
        else if (!outcome.passing) throw outcome.error;
      }
    } else if (reading) {
      const outcome = await reading.done;
      // Only the failure of a read that started after this delivery arrived counts: one that
      // started before may have missed the secret that signed it, and one of its own follows.
      if (!outcome.ok && reading.startedAt >= startedAt) failedRead = outcome;
    } else if (!syncedSinceStart) {
      // Another process may have read the secret since this delivery arrived.
      await sync(z, subscription, state);
      syncedSinceStart = true;
    } else if (Date.now() < readRetryAt(state)) {
      // Svix failed a read a moment ago. The read owed a few seconds later settles every
      // delivery waiting for it with one call; one that cannot wait that long asks the record.
      const wait = readRetryAt(state) - Date.now();
      if (state.readOwed && wait <= spareAfterOwedRead()) {
        await pause(wait);
      } else {
        failedRead = { ok: false, passing: true };
      }
    } else if (state.readOwed) {
      // The read owed since Svix's trouble: it neither takes a place nor is charged.
      const outcome = await readSecret(z, caller, subscription, state, false);
      if (!outcome.ok) failedRead = outcome;
    } else {
      const place = await takePlace(state, caller);
      if (place === 'too-late') return { kind: 'refused', why: 'unchecked-signature' };
      if (place === 'taken') {
        // A read holds no place. When another delivery started one meanwhile, it settles this one too.
        givePlace(state, 'unused');
        if (!state.reading) {
          const outcome = await readSecret(z, caller, subscription, state, true);
          if (!outcome.ok) failedRead = outcome;
        }
      }
    }
    if (failedRead && classify(state.history, matches).kind === 'unknown') {
      recordInstead = failedRead;
      const checked = await confirmInstead(failedRead);
      if (checked !== 'again') return checked;
    }
  }
};
