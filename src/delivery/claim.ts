import { randomBytes } from 'node:crypto';
import { CLOCK_ALLOWANCE_SECONDS, type SigningWindow } from '../provider/signature';
import type { Io } from '../provider/request';
import { backoffMs } from './machine';
import type { Runtime } from './runtime';

/** Exactly-once Zap runs under Svix's at-least-once delivery: a delivery claims its message in z.cache. */

/** How long a run is remembered: Svix retries for about 28 hours, and a person may resend a message for days. */
export const REMEMBER_RUNS_SECONDS = 7 * 24 * 60 * 60;

/** The signing times a delivery may have: one signed longer ago than runs are remembered is refused. */
export const SIGNING_WINDOW: SigningWindow = {
  maxAgeSeconds: REMEMBER_RUNS_SECONDS + CLOCK_ALLOWANCE_SECONDS,
  maxAheadSeconds: CLOCK_ALLOWANCE_SECONDS,
};

/** A claim outlives the window by the clock allowance; the event's own time must be inside it too (each attempt
 * is signed afresh): then every delivery that runs finds any earlier claim. */
export const CLAIM_TTL_SECONDS = SIGNING_WINDOW.maxAgeSeconds + CLOCK_ALLOWANCE_SECONDS;

export const isTooOldToRemember = (occurredAtMs: number, nowMs: number): boolean =>
  occurredAtMs < nowMs - SIGNING_WINDOW.maxAgeSeconds * 1000;

export const claimKey = (endpointId: string, messageId: string): string => `seen:${endpointId}:${messageId}`;

/**
 * Whether the cache honours `nx` (Zapier's does; the local tester's mock does not): two sets of one new key with
 * `nx` answer `true` then `false` (or `null`, as Redis's SET NX does), or `true` twice. Undefined when it failed.
 */
export const probeNx = async ({ cache }: Pick<Io, 'cache'>): Promise<boolean | undefined> => {
  const key = `nx-probe:${randomBytes(9).toString('hex')}`;
  try {
    const first = await cache.set(key, 1, 60, true);
    const second = await cache.set(key, 1, 60, true);
    if (first !== true) return undefined;
    return second === true ? false : second === false || second === null ? true : undefined;
  } catch {
    return undefined;
  }
};

/**
 * True when this delivery should run the Zap: its claim was stored, or the cache could not say before `deadline`
 * (a possible duplicate is better than a lost event). Where the cache honours `nx`, one `set`; otherwise a `get`
 * first. Any other answer than `true` is read back: the value is this invocation's token, so its own claim
 * (stored by an attempt core's RPC client retried) reads as ours, and another's is a copy. What leaves it
 * unsettled (a throttle, an error, a holder that cannot be read) is tried again, on the one back-off, until the
 * deadline; then `false` (the key exists) counts as another's claim, and anything else runs the Zap.
 */
export const claimMessage = (
  runtime: Runtime,
  io: Pick<Io, 'cache'>,
  key: string,
  honoursNx: boolean | undefined,
  deadline: number,
): Promise<boolean> => {
  const { clock, claims } = runtime;
  const token = `${claims.token}.${(claims.count += 1)}`;
  // Promise chains rather than async layers: the platform tracks every promise a delivery makes.
  const again = (attempt: number, otherwise: boolean): Promise<boolean> => {
    const wait = backoffMs(attempt + 1);
    return clock.now() + wait >= deadline
      ? Promise.resolve(otherwise)
      : clock.sleep(wait).done.then(() => claim(attempt + 1));
  };
  const claim = (attempt: number): Promise<boolean> =>
    io.cache.set(key, token, CLAIM_TTL_SECONDS, true).then(
      (stored) =>
        stored === true ||
        io.cache.get(key).then(
          (holder) => (holder !== undefined ? holder === token : again(attempt, stored !== false)),
          () => again(attempt, stored !== false),
        ),
      () => again(attempt, true),
    );
  const start = (nx: boolean | undefined): Promise<boolean> =>
    nx === true
      ? claim(0)
      : io.cache.get(key).then(
          (earlier) => (earlier === undefined ? claim(0) : false),
          () => claim(0),
        );
  const known = honoursNx ?? claims.honoursNx;
  return known === undefined ? probeNx(io).then((probed) => start((claims.honoursNx = probed))) : start(known);
};
