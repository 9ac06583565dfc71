import { CLAIM_TTL_SECONDS, SIGNING_WINDOW } from '../src/delivery/claim';
import {
  CATCH_UP_REACH_MS,
  CLAIM_MIN_MS,
  DELIVERY_CALL_MS,
  EDIT_GRACE_MS,
  inWords,
  JUNK_ALLOWANCE,
  OPERATION_BUDGET_MS,
  PACE_PER_SECOND,
  REMEMBER_RUNS_MS,
  RETRY_JITTER,
  RETRY_SCHEDULE_MS,
  SECRET_SIGNS_ALONE_MS,
  SECRET_TRUSTED_MS,
  SVIX_CLOCK_ALLOWANCE_MS,
  SWEEP_EVERY_MS,
  ZAPIER_HOOKS_PER_SECOND,
  ZAPIER_PERFORM_MS,
  ZAP_MARKS_KEPT_MS,
} from '../src/limits';

/**
 * The limits (src/limits.ts), held together with the promises they serve: a limit changed so that a promise no
 * longer follows from it fails here, whatever the simulation happens to draw.
 */

describe('the limits, and the promises they serve', () => {
  it('a replaced secret runs no body 10 minutes after the rotation: a perform it signs alone ends in time', () => {
    expect(SECRET_TRUSTED_MS).toBeLessThanOrEqual(10 * 60_000);
    expect(SECRET_SIGNS_ALONE_MS + ZAPIER_PERFORM_MS).toBeLessThanOrEqual(SECRET_TRUSTED_MS);
  });

  it("a delivery's calls fit its budget, and junk's allowance refills well within it", () => {
    expect(DELIVERY_CALL_MS).toBeLessThan(OPERATION_BUDGET_MS);
    expect(JUNK_ALLOWANCE.burst).toBeGreaterThanOrEqual(2); // a confirmation and the read it may lead to
    expect(JUNK_ALLOWANCE.everyMs).toBeLessThan(OPERATION_BUDGET_MS - DELIVERY_CALL_MS);
  });

  it("a delivery's checks and then its claim end before Zapier ends the perform", () => {
    expect(OPERATION_BUDGET_MS + CLAIM_MIN_MS).toBeLessThan(ZAPIER_PERFORM_MS);
  });

  it('a claim outlives every delivery that may still run its message, and the signing window allows the clocks', () => {
    expect(SIGNING_WINDOW.maxAgeSeconds * 1_000).toBe(REMEMBER_RUNS_MS + SVIX_CLOCK_ALLOWANCE_MS);
    expect(SIGNING_WINDOW.maxAheadSeconds * 1_000).toBe(SVIX_CLOCK_ALLOWANCE_MS);
    expect(CLAIM_TTL_SECONDS * 1_000).toBeGreaterThanOrEqual(REMEMBER_RUNS_MS + 2 * SVIX_CLOCK_ALLOWANCE_MS);
  });

  it('a catch-up reaches no further than Svix surely still retries, and every retry finds its claim', () => {
    const schedule = RETRY_SCHEDULE_MS.reduce((sum, wait) => sum + wait, 0);
    // What a parked endpoint holds for a Zap turned on again: each message retried for the whole schedule, at the
    // least its jitter gives.
    expect(CATCH_UP_REACH_MS).toBeLessThanOrEqual(schedule * (1 - RETRY_JITTER));
    // Whatever Svix may still send, even with Retry-After doubling each wait, finds its claim.
    expect(2 * schedule * (1 + RETRY_JITTER)).toBeLessThan(REMEMBER_RUNS_MS);
  });

  it("an edit's held events reach Zapier at Svix's third attempt, about 6 minutes after they were made", () => {
    // A product decision between 1 and 5 minutes (docs/guarantees.md): past it, a person's pause wins.
    expect(EDIT_GRACE_MS).toBeGreaterThanOrEqual(60_000);
    expect(EDIT_GRACE_MS).toBeLessThanOrEqual(5 * 60_000);
    const [first = 0, second = 0] = RETRY_SCHEDULE_MS;
    const thirdAttemptAtLeast = (first + second) * (1 - RETRY_JITTER);
    // The edit's two calls the grace apart, Zapier serving the new version a minute late, Svix's 30 s endpoint cache.
    expect(EDIT_GRACE_MS + 60_000 + 30_000).toBeLessThanOrEqual(thirdAttemptAtLeast);
    expect((first + second) * (1 + RETRY_JITTER)).toBeLessThanOrEqual(6.5 * 60_000);
  });

  it("a Zap's marks outlast Svix disabling an endpoint that failed for 5 days, and sweeps come often", () => {
    expect(ZAP_MARKS_KEPT_MS).toBeGreaterThan(5 * 24 * 3_600_000);
    expect(SWEEP_EVERY_MS).toBeLessThanOrEqual(10 * 60_000);
  });

  it("the Zaps' shared pace stays under what Zapier takes from one hook", () => {
    expect(PACE_PER_SECOND).toBeLessThan(ZAPIER_HOOKS_PER_SECOND);
  });

  it('says a limit as a person reads it', () => {
    expect([REMEMBER_RUNS_MS, CATCH_UP_REACH_MS, SVIX_CLOCK_ALLOWANCE_MS].map(inWords)).toEqual([
      '7 days',
      '22 hours',
      '5 minutes',
    ]);
    expect(inWords(3_600_000)).toBe('1 hour');
  });
});
