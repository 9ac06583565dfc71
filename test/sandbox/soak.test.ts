import { runSoak, soakLine } from '../../src/sandbox/soak';

/**
 * A small soak in every test run (the full 10,000 events are `npm run soak`):
 * real HTTP deliveries from the emulator into perform, z.cache on the platform
 * stand-in, with five times the usual share of overlapping redeliveries,
 * forgeries, transient endpoint failures and cache faults, and an immediate
 * rotation of the endpoint's secret whose first read meets a provider fault.
 */
describe('soak (small)', () => {
  it('loses nothing, runs nothing twice and lets no forgery through', async () => {
    const result = await runSoak({
      events: 400,
      redeliveryRate: 0.05,
      forgeryRate: 0.05,
      failureRate: 0.05,
      cacheFaultRate: 0.05,
      rotations: 1,
    });
    expect(result.lostDetail).toEqual([]);
    expect(result).toMatchObject({ events: 400, zapRuns: 400, lost: 0, doubled: 0, forgedAccepted: 0, failedRuns: 0 });
    // The hostile parts really happened.
    expect(result.forged).toBe(20);
    expect(result.forgedRefused).toBe(20);
    expect(result.redelivered).toBe(20);
    expect(result.overlapping).toBeGreaterThan(0);
    expect(result.transientFailures).toBeGreaterThan(0);
    expect(result.providerRetries).toBe(result.transientFailures);
    expect(result.cacheFaults).toBeGreaterThan(0);
    expect(result.rotations).toBe(1);
    expect(result.secretReadFaults).toBe(1);
    expect(result.duplicatesDropped).toBeGreaterThanOrEqual(result.redelivered);
    expect(soakLine(result)).toMatch(
      /^soak: events=400 zap_runs=400 lost=0 doubled=0 forged_accepted=0 .*overlapping=\d+ .*peak_rss_mb=\d+/,
    );
  }, 120_000);
});
