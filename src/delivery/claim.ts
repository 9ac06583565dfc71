import { REMEMBER_RUNS_MS } from '../limits';
import { CLOCK_ALLOWANCE_SECONDS, type SigningWindow } from '../svix/signature';
import { backoffMs } from './machine';

/**
 * Exactly-once Zap runs under Svix's at-least-once delivery: a delivery claims its message in z.cache. The claim is
 * a small pure state machine of its own, as the endpoint's is (machine.ts): the driver (driver.ts) makes its calls
 * and waits, and hands back what each answered.
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

/** A message's claim, per Zap: its claim scope (claimScopeOf: the Zap, or its first endpoint before scopes). */
export const claimKey = (scope: string, messageId: string): string => `seen:${scope}:${messageId}`;

/** Learn whether the cache honours `nx`; read the key first (a cache that does not); write it with `nx`; read back
 * whose it is. */
export type ClaimCall = 'probe' | 'check' | 'set' | 'read-back';
export type ClaimCommand = { kind: ClaimCall } | { kind: 'wait'; until: number } | { kind: 'done'; run: boolean };
/** What a call answered when it threw, or its time was up. */
export const FAILED = 'failed';

/**
 * A delivery's claim of its message. Where the cache honours `nx` (Zapier's does; the local tester's mock does
 * not): one `set`; otherwise a read first, and a key there is another's claim. Any answer but `true` is read back:
 * the value is this claim's token, so its own claim (stored by a try that core's RPC client made again) reads as
 * its own, and another's as a copy. Only a read that shows another's token settles the claim as another's: a `set`
 * answering `false` may mean the key exists or that Zapier throttled it (core's own tests mock a throttled set as
 * `false`; its maintainers say `null`), so it is read back like any other answer. What leaves it unsettled (a
 * throttle, an error, a holder not read) is tried again, on the one back-off, until the delivery's time is up: then
 * it runs, a possible duplicate being better than a lost event.
 */
export const newClaim = (token: string, honoursNx: boolean | undefined) => ({
  token,
  call: honoursNx === undefined ? 'probe' : first(honoursNx),
  failures: 0,
  failedAt: -Infinity,
  /** Whether to run, once a read settled it (or a `set` stored it). */
  verdict: unsettled,
});
const first = (honoursNx: boolean): ClaimCall => (honoursNx ? 'set' : 'check');
const unsettled: boolean | undefined = undefined;
export type Claim = ReturnType<typeof newClaim>;

/** The claim's next command at `now`; once the delivery's time is up, its verdict. */
export const nextClaim = (c: Claim, now: number, deadline: number): ClaimCommand => {
  if (c.verdict !== undefined) return { kind: 'done', run: c.verdict };
  const at = c.failedAt + backoffMs(c.failures);
  if (Math.max(now, at) >= deadline) return { kind: 'done', run: true };
  return now < at ? { kind: 'wait', until: at } : { kind: c.call };
};

/** Learns at `now` what a call answered: the probe, whether the cache honours `nx`; a set, whether it stored; a
 * read, the key's holder (none when it is absent or the read was throttled: Zapier answers both alike). */
export const applyClaim = (c: Claim, call: ClaimCall, answer: unknown, now: number): void => {
  const unread = answer === undefined || answer === null || answer === FAILED;
  const again = () => Object.assign(c, { call: 'set', failures: c.failures + 1, failedAt: now });
  switch (call) {
    case 'probe':
      return void (c.call = first(answer === true));
    case 'check':
      return void (unread ? (c.call = 'set') : (c.verdict = false));
    case 'read-back':
      return void (unread ? again() : (c.verdict = answer === c.token));
    case 'set':
      if (answer === true) c.verdict = true;
      else if (answer === FAILED) again();
      else c.call = 'read-back';
  }
};
