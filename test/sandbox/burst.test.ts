import { runBurst } from '../../src/tools/sandbox/burst';

/**
 * A burst of auction events at once, through the emulator to the Zapier stand-in, which refuses deliveries past
 * Zapier's limit for one hook (30 a second) with 429, as Zapier does. The Zap's endpoint is paced at 25 a second,
 * so none is refused; where Svix does not pace it (the open-source server stores throttleRate but does not enforce it),
 * Zapier refuses part of the burst and Svix retries it.
 * (`npm start -- --burst 300` is the same with 300 events.)
 */

describe('a burst of events at once', () => {
  it('paced at 25 a second, reaches Zapier with no 429, and every event runs once, saying how far it got', async () => {
    const said: string[] = [];
    const result = await runBurst({ events: 60, paced: true, say: (line) => said.push(line), sayEveryMs: 500 });
    // Long work says how far it has got (#61.2).
    expect(said.length).toBeGreaterThan(0);
    expect(said[0]).toMatch(/^ {6}\d+ of 60 Zap runs so far, \d+ s in; Zapier refused 0\.$/);
    expect(result).toEqual(
      expect.objectContaining({ paced: true, hookLimitAnswers: 0, zapRuns: 60, doubled: 0, lost: 0 }),
    );
  }, 60_000);

  it('to three Zaps, paced at 25 a second together, reaches Zapier with no 429, and every event runs once in each', async () => {
    const result = await runBurst({ events: 40, zaps: 3, paced: true });
    expect(result).toEqual(
      expect.objectContaining({ zaps: 3, hookLimitAnswers: 0, zapRuns: 120, doubled: 0, lost: 0 }),
    );
  }, 60_000);

  it("unpaced to two Zaps, meets Zapier's limit for one person across them (here 50 in 5 minutes)", async () => {
    // 30 events to each of two Zaps: under the limit of one hook (30 each), over the person's (60 in all).
    const result = await runBurst({
      events: 30,
      zaps: 2,
      paced: false,
      hookLimit: { perSecond: 1_000, perFiveMinutes: 50 },
      retryScheduleMs: [5],
    });
    // 50 taken; the other 10 refused, and refused again when Svix tries each once more within the 5 minutes.
    expect(result).toEqual(expect.objectContaining({ zapRuns: 50, hookLimitAnswers: 20, lost: 10 }));
  }, 60_000);

  it('unpaced (as the open-source server sends), meets 429s from Zapier, and Svix retries them', async () => {
    // A third of Zapier's limit: the stand-in shares this process with the performs, and on a busy machine it
    // may see even a burst arrive at under 30 a second. Svix retries a refused delivery every second here.
    const result = await runBurst({
      events: 30,
      paced: false,
      hookLimit: { perSecond: 10, perFiveMinutes: 10_000 },
      retryScheduleMs: Array.from({ length: 20 }, () => 1_000),
    });
    expect(result.paced).toBe(false);
    expect(result.hookLimitAnswers).toBeGreaterThan(0);
    expect(result).toEqual(expect.objectContaining({ zapRuns: 30, doubled: 0, lost: 0 }));
  }, 60_000);
});
