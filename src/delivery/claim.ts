import { REMEMBER_RUNS_MS } from '../limits';
import { CLOCK_ALLOWANCE_SECONDS, type SigningWindow } from '../svix/signature';
import type { Clock } from '../zapier/clock';
import type { Io } from '../zapier/io';
import { FAILED, within } from '../zapier/cache';

/**
 * Exactly-once Zap runs under Svix's at-least-once delivery: a delivery claims its message in z.cache, per Zap, with
 * one write that stores only a new key (`nx`), its value a token no other claim writes.
 */

/** How long a run is remembered: Svix retries for about 28 hours, and a person may resend a message for days. */
export const REMEMBER_RUNS_SECONDS = REMEMBER_RUNS_MS / 1_000;

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

/** A message's claim, per Zap. */
export const claimKey = (zap: string, messageId: string): string => `seen:${zap}:${messageId}`;

/**
 * Whether this delivery runs its message: true unless another delivery holds its claim. A `set` with `nx` answering
 * `true` stored it. Any other answer is read back: Zapier's cache may answer a throttled set `false` or `null`, and
 * core's RPC client may have stored this very token on a try it made again, so only a read showing another's token
 * settles it as another's. What settles nothing (a throttle, an error, a read finding none) is tried again after a
 * back-off until the deadline: then it runs, a possible duplicate being better than a lost event.
 */
export const claimOnce = async (
  clock: Clock,
  { cache }: Pick<Io, 'cache'>,
  key: string,
  token: string,
  deadline: number,
): Promise<boolean> => {
  for (let tries = 1; ; tries += 1) {
    const stored = await within(clock, deadline, () => cache.set(key, token, CLAIM_TTL_SECONDS, true));
    if (stored === true) return true;
    if (stored !== FAILED) {
      const holder = await within(clock, deadline, () => cache.get(key));
      if (holder !== FAILED && holder !== undefined && holder !== null) return holder === token;
    }
    const backoffMs = Math.min(2_000, 50 * 2 ** (tries - 1));
    if (clock.now() + backoffMs >= deadline) return true;
    await clock.sleep(backoffMs).done;
  }
};
