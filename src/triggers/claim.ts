import { randomBytes } from 'node:crypto';
import type { ZObject } from 'zapier-platform-core';
import { CLOCK_ALLOWANCE_SECONDS, type SigningWindow } from '../provider/signature';
import { clock } from '../clock';
import { cacheGet, cacheSet } from './cache';

/**
 * Exactly-once Zap runs under Svix's at-least-once delivery: a delivery claims
 * its message for the Zap in z.cache with one `set` only if absent (`nx`).
 */

/**
 * How long a run is remembered. The provider retries for about 28 hours (5 s,
 * 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), and a person may resend a message by
 * hand for days after.
 */
export const REMEMBER_RUNS_SECONDS = 7 * 24 * 60 * 60;

/**
 * The signing times a delivery may have. A delivery signed longer ago than
 * runs are remembered could find its message's claim gone, so it is refused;
 * a run that waited in Zapier's queue for minutes or hours still runs.
 */
export const SIGNING_WINDOW: SigningWindow = {
  maxAgeSeconds: REMEMBER_RUNS_SECONDS + CLOCK_ALLOWANCE_SECONDS,
  maxAheadSeconds: CLOCK_ALLOWANCE_SECONDS,
};

/**
 * A claim outlives the window by the clock allowance. Every attempt is signed
 * afresh, so the signing time alone cannot tell an old message: the event's
 * own time must be inside the window too (see isTooOldToRemember). Then every
 * delivery that runs finds the claim of any earlier run of its message.
 */
export const CLAIM_TTL_SECONDS = SIGNING_WINDOW.maxAgeSeconds + CLOCK_ALLOWANCE_SECONDS;

/** An event older than runs are remembered: whether this Zap already ran for it can no longer be told. */
export const isTooOldToRemember = (occurredAtMs: number, nowMs: number): boolean =>
  occurredAtMs < nowMs - SIGNING_WINDOW.maxAgeSeconds * 1000;

export const claimKey = (endpointId: string, messageId: string): string => `seen:${endpointId}:${messageId}`;

/** Random per process (made on first use, not at start-up), so tokens never repeat across Zapier's processes. */
let processToken: string | undefined;
let tokens = 0;

/** A value no other invocation writes: this process's token and a count. */
const invocationToken = (): string => {
  processToken ??= randomBytes(12).toString('base64url');
  tokens += 1;
  return `${processToken}.${tokens}`;
};

/**
 * Whether the cache honours `nx` (Zapier's does; the local tester's mock does
 * not): two sets of one new key with `nx` answer `true` then `false` (or
 * `null`, as Redis's SET NX does), or `true` twice. Undefined when it failed.
 */
export const probeNx = async (z: ZObject): Promise<boolean | undefined> => {
  const key = `nx-probe:${randomBytes(9).toString('hex')}`;
  try {
    const first = await cacheSet(z, key, 1, 60, true);
    const second = await cacheSet(z, key, 1, 60, true);
    if (first !== true) return undefined;
    return second === true ? false : second === false || second === null ? true : undefined;
  } catch {
    return undefined;
  }
};

/**
 * The pauses before a claim the cache did not settle is tried again (a
 * throttle, an error, a holder that could not be read back): short at
 * first, then the last one over and over, until the delivery's time is up.
 * A cache that fails one call in five must neither run an event twice nor
 * lose it; a cache that stays down does not hold the Zap past its time.
 */
export const claimSettings: { retryPausesMs: readonly number[] } = { retryPausesMs: [30, 70, 150, 300, 600, 1_000] };

/** Waits `ms` milliseconds on this process's clock. */
export const pause = (ms: number): Promise<void> => clock.sleep(ms);

/** Whether the cache honours `nx`, as a probe in this process learnt it, for Zaps whose subscribe could not. */
let probedNx: boolean | undefined;
/** For tests: a new process, which knows nothing of its cache yet. */
export const forgetProbedNx = (): void => {
  probedNx = undefined;
};

/**
 * True when this delivery should run the Zap: its claim was stored, or the
 * cache could not say before `deadline` (a possible duplicate is better
 * than a lost event). Where the cache is known to honour `nx` (from the
 * subscribe, or a probe once per process), one `set`; otherwise a `get`
 * first. Any other answer than `true` is read back: the value is this
 * invocation's token, so its own claim (stored by an attempt core's RPC
 * client retried) reads as ours, and another's is a copy. What leaves it
 * unsettled (a throttle, an error, a holder that cannot be read) is tried
 * again until the deadline; then `false` (the key exists) counts as
 * another's claim, and anything else runs the Zap.
 */
export const claimMessage = (
  z: ZObject,
  endpointId: string,
  messageId: string,
  cacheHonoursNx: boolean | undefined,
  deadline = clock.now() + 10_000,
): Promise<boolean> => {
  const key = claimKey(endpointId, messageId);
  const token = invocationToken();
  const pauses = claimSettings.retryPausesMs;
  // Promise chains rather than async layers: the platform tracks every promise a delivery makes.
  const again = (attempt: number, otherwise: boolean): Promise<boolean> => {
    const wait = pauses[Math.min(attempt, pauses.length - 1)] ?? 0;
    return clock.now() + wait >= deadline ? Promise.resolve(otherwise) : pause(wait).then(() => claim(attempt + 1));
  };
  const claim = (attempt: number): Promise<boolean> =>
    cacheSet(z, key, token, CLAIM_TTL_SECONDS, true).then(
      (stored) =>
        stored === true ||
        cacheGet(z, key).then(
          (holder) => (holder !== undefined ? holder === token : again(attempt, stored !== false)),
          () => again(attempt, stored !== false),
        ),
      () => again(attempt, true),
    );
  const start = (honoursNx: boolean | undefined): Promise<boolean> =>
    honoursNx === true
      ? claim(0)
      : cacheGet(z, key).then(
          (earlier) => (earlier === undefined ? claim(0) : false),
          () => claim(0),
        );
  const known = cacheHonoursNx ?? probedNx;
  return known === undefined ? probeNx(z).then((probed) => start((probedNx = probed))) : start(known);
};
