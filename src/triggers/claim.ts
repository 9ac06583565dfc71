import { randomBytes } from 'node:crypto';
import type { ZObject } from 'zapier-platform-core';
import { CLOCK_ALLOWANCE_SECONDS, type SigningWindow } from '../provider/signature';
import { cacheGet, cacheSet } from './cache';

/**
 * Exactly-once Zap runs under the provider's at-least-once delivery. Before a
 * delivery runs the Zap, it claims its message for this Zap's endpoint in
 * z.cache with one `set` that only stores when the key is absent (`nx`); only
 * the delivery whose claim was stored runs.
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
 * Whether the cache honours `nx`. Zapier's does; the local tester's mock
 * ignores it and answers `true` to every set. Two sets of one new key with
 * `nx` tell them apart: `true` then `false` on Zapier (its documented answer
 * when the key exists), or `true` then `null` from a cache that answers as
 * Redis's own SET NX does; `true` twice on the mock. Undefined when the
 * answers say neither (the cache failed).
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
 * The pauses before a claim that was not stored is tried again. Zapier's cache
 * answers `null` when it throttles a call; a one-off throttle must not leave a
 * message unclaimed (a later redelivery would run it again), and a cache that
 * stays throttled must not hold the Zap up: about 250 ms in all, then the Zap
 * runs unclaimed. An object so tests can read it.
 */
export const claimSettings: { retryPausesMs: readonly number[] } = { retryPausesMs: [30, 70, 150] };

/** Waits `ms` milliseconds. */
export const pause = (ms: number): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * True when this delivery should run the Zap: its claim was stored, or the
 * cache could not say (a possible duplicate is better than a lost event).
 *
 * `cacheHonoursNx` decides the round trips: where the cache is known to honour
 * `nx`, one `set`; otherwise a `get` first, so that a cache that ignores `nx`
 * (the tester's) still runs a redelivery once when it comes after the first.
 *
 * Any answer but `true` is checked by reading the claim back. The value is a
 * token of this invocation, so a claim stored by an earlier attempt of this
 * same call (core's RPC client retries) reads as ours, and another delivery's
 * claim as a copy. `false` (Zapier: the key exists) and `null` (Zapier:
 * throttled; Redis: the key exists) are told apart the same way. Nothing
 * stored at all is a throttle: the claim is tried again after a pause.
 */
export const claimMessage = (
  z: ZObject,
  endpointId: string,
  messageId: string,
  cacheHonoursNx: boolean | undefined,
): Promise<boolean> => {
  const key = claimKey(endpointId, messageId);
  const token = invocationToken();
  // Promise chains rather than async layers: the platform tracks every promise a delivery makes.
  const claim = (attempt: number): Promise<boolean> =>
    cacheSet(z, key, token, CLAIM_TTL_SECONDS, true).then(
      (stored) =>
        stored === true ||
        cacheGet(z, key).then(
          (holder) => {
            if (holder !== undefined) return holder === token;
            const wait = claimSettings.retryPausesMs[attempt];
            return wait === undefined ? true : pause(wait).then(() => claim(attempt + 1));
          },
          () => true,
        ),
      () => true,
    );
  if (cacheHonoursNx === true) return claim(0);
  return cacheGet(z, key).then(
    (earlier) => (earlier === undefined ? claim(0) : false),
    () => claim(0),
  );
};
