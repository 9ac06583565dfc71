/**
 * Every limit the app lives within, each named once with the reason for its value, and the promises they serve
 * (docs/guarantees.md). The rules that keep a promise are checked against it by test/limits.test.ts, so a change
 * that breaks one fails there, as TigerBeetle's constants are asserted at compile time. Words a person reads take
 * their numbers from here (`inWords`). It imports nothing: every floor may use it.
 */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Zapier ends a hook's perform this long after it began (its operating constraints). */
export const ZAPIER_PERFORM_MS = 30 * SECOND;
/** Zapier takes about this many hooks a second per hook URL (and 10,000 in 5 minutes per person), then answers 429. */
export const ZAPIER_HOOKS_PER_SECOND = 30;
/** What an operation's own calls may take in all: Zapier's 30 s, less a claim's time and core's own. */
export const OPERATION_BUDGET_MS = 25 * SECOND;
/** A claim's least time once a delivery's checks are done, though they took all of OPERATION_BUDGET_MS: a claim
 * never tried may run a copy another delivery runs too. */
export const CLAIM_MIN_MS = 1_500;

/** How far apart Svix's clock and this one may be: Svix's signatures carry its time, and receivers refuse one over
 * 5 minutes off (Standard Webhooks' tolerance); Svix's clock may also step back that far. */
export const SVIX_CLOCK_ALLOWANCE_MS = 5 * MINUTE;
/** How long a run is remembered (a claim's life): Svix retries a message for about 33 hours, and a person may ask it
 * to resend one for days. An event older than this is not run again. */
export const REMEMBER_RUNS_MS = 7 * DAY;
/** Svix's wait after each failed attempt (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; after the last, none), from its
 * server's worker.rs: what a Zap turned off, an edit or a claim must outlast. */
export const RETRY_SCHEDULE_MS: readonly number[] = [5e3, 3e5, 1.8e6, 7.2e6, 1.8e7, 3.6e7, 3.6e7];
/** Each of Svix's waits varies by up to this share either way. */
export const RETRY_JITTER = 0.2;
/** The least that "Run Events Missed While Off" reaches back: a Zap's parked endpoint holds what Svix made while it
 * was off in Svix's retry schedule, which retries a message for 27.6 hours, 22 at the least (its jitter, -20%).
 * Nothing is asked of Svix again: a resend it makes once could be lost. */
export const CATCH_UP_REACH_MS = 22 * HOUR;
/** A Zap turned off and on again within this long runs what was made between, as an edit does: Zapier publishes an
 * edit of a Zap that is on as an unsubscribe and a subscribe, in an order and at a distance no source gives, and the
 * two cannot be told from a person's quick off and on. Past it, the person's pause wins: off means off. A product
 * decision, not a published figure: 2 minutes, so that what an edit held reaches Zapier at Svix's third attempt
 * (5 s, then 5 minutes less its 20% jitter: 4 minutes after it was made), with a minute for Zapier to serve the new
 * version and Svix's 30 s endpoint cache, at most about 6 minutes after it was made. */
export const EDIT_GRACE_MS = 2 * MINUTE;
/** A sweep removes a parked endpoint only once its park is older than this, counted from before its listing: a
 * subscribe that found it within EDIT_GRACE_MS and is pointing it again has ended by then (Zapier ends an operation
 * at 30 s; 5 s for the processes' clocks), so the listing shows it pointed. */
export const SWEEP_PARKED_AFTER_MS = EDIT_GRACE_MS + ZAPIER_PERFORM_MS + 5 * SECOND;
/** How often one process sweeps a Consumer App from deliveries and dropdowns (turning a Zap on or off, Test trigger
 * and the connection test always do): what no Zap will use again goes, and a delivery makes Svix calls at most this
 * often. */
export const SWEEP_EVERY_MS = 10 * MINUTE;
/** How long z.cache keeps a Zap's marks (its last subscribe and unsubscribe, zap/policy.ts): past Svix disabling an
 * endpoint that failed for 5 days, after which no mark can change anything. */
export const ZAP_MARKS_KEPT_MS = 7 * DAY;
/** What the Zaps of one Consumer App share, messages a second: under Zapier's 30 a hook, with room for Svix's pacing
 * letting a few percent more through. */
export const PACE_PER_SECOND = 25;

/** A process trusts a signing secret it read from Svix (or its subscribe did) this long: past it, the secret is read
 * again before it signs anything alone. So a replaced secret runs no body, in any process, longer than this after
 * the rotation, whatever fails; and a warm process reads it at most this often. */
export const SECRET_TRUSTED_MS = 10 * MINUTE;
/** How recent a read a delivery needs for the secret to sign alone: SECRET_TRUSTED_MS less the 30 s Zapier gives a
 * perform, so that the run it decides ends within SECRET_TRUSTED_MS of the read (its claim and sweep come after). */
export const SECRET_SIGNS_ALONE_MS = SECRET_TRUSTED_MS - ZAPIER_PERFORM_MS;
/** The Svix calls that deliveries the known secret did not sign may cost (junk does), per endpoint and process: a
 * token bucket of 8, one more every 200 ms, each token paying for a confirmation and the read of the secret it may
 * lead to. A failed call's retries come free, within the delivery's time. Five a second: where performs run at once
 * in one process (the sandbox), hundreds queued across quick rotations each need one; 1 a second took the small soak
 * past 170 s. */
export const JUNK_ALLOWANCE = { burst: 8, everyMs: SECOND / 5 };
/** The longest one Svix call of a delivery may take: none starts with less of the delivery's time left. */
export const DELIVERY_CALL_MS = 3 * SECOND;
/** How many endpoints a process remembers (those it served last): its memory, however many Zaps it serves. */
export const ENDPOINTS_KEPT = 1_000;

/** A limit as a person reads it: "7 days", "5 minutes". */
export const inWords = (ms: number): string => {
  const [unit, size] = ms % DAY === 0 ? ['day', DAY] : ms % HOUR === 0 ? ['hour', HOUR] : ['minute', MINUTE];
  const count = Math.round(ms / size);
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
};
