import { loadAppProcess, type AppProcess, type SimTimers } from '../../src/sim/loader';
import { failed, outcomeLine, replayCommand, SETTINGS, settingNamed } from '../../src/sim/settings';
import { overBound, RETRY_WITHIN_MS, simulate, type Outcome, type Setting } from '../../src/sim/world';

/**
 * The delivery path's real code (perform, rules, secrets, verify, claim, as
 * built in dist/) in the seeded simulation of src/sim: the same seed gives
 * the same result, one seed of every setting meets every promise, and the
 * oracle catches rules that break them. The sweep over many seeds is
 * `npm run simulate` (CI runs a short one).
 */

const processes: AppProcess[] = [0, 1, 2, 3].map(() => loadAppProcess());
const run = (setting: Setting, seed: number): Promise<Outcome> => simulate(setting, seed, processes);
const named = (name: string): Setting => {
  const setting = settingNamed(name);
  if (!setting) throw new Error(`no setting ${name}`);
  return setting;
};

/** The promises: nothing lost, run twice, forged or revoked run, and junk within the allowance. */
const broken = (outcome: Outcome) => ({
  lost: outcome.lost,
  doubled: outcome.doubled,
  forgedRun: outcome.forgedRun,
  revokedRun: outcome.revokedRun,
  junkOverBound: outcome.junkOverBound,
});
const NONE = { lost: 0, doubled: 0, forgedRun: 0, revokedRun: 0, junkOverBound: 0 };

jest.setTimeout(60_000);

describe('the simulation', () => {
  it('gives the same line, byte for byte, for the same seed, and another for another seed', async () => {
    const setting = named('everything');
    const first = outcomeLine(await run(setting, 11), setting);
    const again = outcomeLine(await run(setting, 11), setting);
    const other = outcomeLine(await run(setting, 12), setting);
    expect(again).toBe(first);
    expect(other).not.toBe(first);
    expect(first).toContain(`replay="${replayCommand(setting, 11)}"`);
  });

  // One seed per setting (each its own, so that CI's sweep and this suite try different ones).
  it.each(SETTINGS.map((setting, index) => [setting.name, setting, 1_000 + index] as const))(
    'keeps every promise at the setting %s',
    async (_name, setting, seed) => {
      const outcome = await run(setting, seed);
      expect({ line: outcomeLine(outcome, setting), ...broken(outcome) }).toEqual({
        line: expect.any(String),
        ...NONE,
      });
      expect(outcome.events).toBe(setting.events);
      expect(outcome.performs).toBeGreaterThanOrEqual(outcome.deliveries);
    },
  );
});

/**
 * Seeds that failed in a sweep, kept with what they found. Each fails on the
 * code before the fix named, and replays with the command in its line.
 */
const REGRESSIONS: Array<[setting: string, seed: number, found: string]> = [
  // A process read a new secret, and its one look at z.cache failed: nothing was written, and another
  // process kept running bodies signed with the replaced secret for 64 s. Fixed: the look is made again.
  ['rotations-15-grace', 467, 'a new secret never shared when the look after its read failed'],
  ['share-0.2', 452, 'a new secret never shared when the look after its read failed'],
  ['fifty-a-second', 495, 'a new secret never shared when the look after its read failed'],
  ['fifty-a-second', 636, 'a new secret never shared when the look after its read failed'],
  // Found by the 1,000-seed sweep of 5b568c3: a genuine delivery refused unchecked under every adversity
  // at 50 events a second. It keeps every promise since a read begun after a delivery was signed settles it.
  ['everything-fast', 592, 'a genuine delivery refused unchecked'],
  // Found by the sweeps of d1ab9a5 and after: a genuine delivery signed with a secret never read here lost the
  // race for the allowance to junk that came after it (91), waited behind junk's reserved listing when a free
  // one was due (76), or had its listing failed by Svix and waited at the back of the queue (17, 286).
  ['everything-fast', 91, 'a genuine delivery refused unchecked behind junk'],
  ['everything-fast', 76, 'genuine deliveries refused while waiting for junk’s listing'],
  ['everything-fast', 17, 'a genuine delivery refused after Svix failed its listing'],
  ['everything-fast', 286, 'a genuine delivery refused after Svix failed its listing'],
  // A look that read z.cache back straight after each write met the history's throttle every time; a cold
  // process trusted the replaced secret for 75 s. Fixed by keeping the read-back's own retries.
  ['everything', 159, 'a revoked secret run when every read-back of the history was throttled'],
  // A listing made again after a failure, by junk, for a call another delivery had made: counted as one retry.
  ['everything-fast', 148, 'junk calls past the allowance when junk made again a listing Svix failed'],
  // Found by the soak at 2,000 events (hundreds a second behind a queue): deliveries signed with a secret no process
  // read, in windows of over 1,000 messages that a listing of 4 pages could not read whole, and each page charged
  // to the allowance. 409 lost on 1a53c1e. Fixed: a listing reads its window whole, and the allowance counts listings.
  ['backlog', 6, 'genuine deliveries refused when their window held more than four pages'],
  // Found by the 1,000-seed sweep of 49d6217: a listing of 6 pages that Svix failed part-way began again at page 1,
  // and with 10% of calls faulted some never finished in the deliveries' time (76 and 378 lost). Fixed in 31e4dda:
  // a listing goes on from the page it reached.
  ['backlog', 784, 'genuine deliveries refused when a many-page listing kept failing part-way'],
  ['backlog', 917, 'genuine deliveries refused when a many-page listing kept failing part-way'],
];

describe('seeds that once failed', () => {
  it.each(REGRESSIONS)('%s seed %d (%s) keeps every promise', async (name, seed) => {
    expect(broken(await run(named(name), seed))).toEqual(NONE);
  });
});

describe('the oracle', () => {
  afterEach(() => {
    for (const process of processes) {
      process.rules.freshForMs = 10 * 60_000;
      process.rules.lookEveryMs = 50_000;
      process.rules.reads.burst = 3;
      process.rules.reads.refillMs = 2_000;
      process.rules.listings.burst = 5;
      process.rules.listings.refillMs = 2_000;
    }
  });

  it('counts revoked runs when the rules trust the secret they know for ever and never learn another', async () => {
    for (const process of processes) {
      process.rules.freshForMs = Number.POSITIVE_INFINITY;
      process.rules.lookEveryMs = Number.POSITIVE_INFINITY;
      process.rules.reads.burst = 0;
      process.rules.reads.refillMs = Number.POSITIVE_INFINITY;
    }
    // One rotation, then an hour of events with a fifth of them forged: bodies signed with the revoked secret run.
    const setting: Setting = { ...named('one-a-minute'), name: 'custom', rotations: 1, share: 0.2, events: 60 };
    const outcome = await run(setting, 5);
    expect(failed(outcome)).toBe(true);
    expect(outcome.revokedRun).toBeGreaterThan(0);
  });

  it('counts lost events when no process may read a new secret or list the record', async () => {
    for (const process of processes) {
      process.rules.reads.burst = 0;
      process.rules.reads.refillMs = Number.POSITIVE_INFINITY;
      process.rules.listings.burst = 0;
      process.rules.listings.refillMs = Number.POSITIVE_INFINITY;
    }
    const outcome = await run(named('base'), 5);
    expect(outcome.lost).toBeGreaterThan(0);
  });

  it("models Zapier's runtime: a perform whose process holds nothing but unref'd waits is cut off, its event lost", async () => {
    // Processes whose every wait is unref'd, as the delivery path's were before 2026-11-25.
    const unrefAll = (app: AppProcess): AppProcess => {
      const timers: AppProcess['timers'] = {};
      Object.defineProperty(timers, 'current', {
        set: (loop: SimTimers | undefined) => {
          app.timers.current = loop && {
            setTimeout: (run, ms) => {
              const timer = loop.setTimeout(run, ms);
              Reflect.apply(Reflect.get(Object(timer), 'unref'), timer, []);
              return timer;
            },
            clearTimeout: (timer) => loop.clearTimeout(timer),
          };
        },
      });
      return { ...app, timers };
    };
    const cut = await simulate(named('base'), 3, processes.map(unrefAll));
    expect(cut.cut).toBeGreaterThan(0);
    expect(cut.lost).toBeGreaterThan(0);
    const held = await run(named('base'), 3);
    expect({ cut: held.cut, lost: held.lost }).toEqual({ cut: 0, lost: 0 });
  });

  it('measures the allowance as a burst and a refill: calls past it are counted, whatever their spacing', () => {
    expect(overBound([0, 0, 0], 3, 2_000)).toBe(0);
    expect(overBound([0, 0, 0, 0], 3, 2_000)).toBe(1);
    expect(overBound([0, 0, 0, 2_000], 3, 2_000)).toBe(0);
    expect(overBound([0, 0, 0, 0, 1_000, 1_000], 3, 2_000)).toBe(2);
    expect(overBound([0, 0, 0, 2_000, 2_000], 3, 2_000)).toBe(1);
  });

  it('allows one call more for each call Svix failed, made again within 6 s of its start', () => {
    const four = [10_000, 10_000, 10_000, 10_000];
    expect(overBound(four, 3, 2_000, [10_000 - RETRY_WITHIN_MS])).toBe(0);
    expect(overBound(four, 3, 2_000, [10_000 - RETRY_WITHIN_MS - 1])).toBe(1);
    expect(overBound(four, 3, 2_000, [10_001])).toBe(1);
  });
});
