import { isRight } from 'fp-ts/Either';
import { Webhook } from 'standardwebhooks';
import { runBuilt } from '../helpers/builtScript';
import { RawRequest } from '../../src/models/inbound';
import type { DeliveryBundle } from '../../src/triggers/auctionStatusChanged';

import { WORKER_FLAGS } from '../../src/tools/sim/cli';
import { failed, outcomeLine, replayCommand, SETTINGS, type Setting } from '../../src/tools/sim/settings';
import { overBound, withinMemory } from '../../src/tools/sim/oracle';
import { Outcome, RETRY_WITHIN_MS, T0 } from '../../src/tools/sim/vocabulary';
import { Runtime } from '../../src/delivery/runtime';
import { known } from '../../src/delivery/known';
import { ENDPOINTS_KEPT } from '../../src/limits';
import { Random } from '../../src/tools/sim/random';
import { EventLoop, Scheduler } from '../../src/tools/sim/scheduler';
import { SimSvix } from '../../src/tools/sim/svix';
import { simulate } from '../../src/tools/sim/world';
import { RETRY_SCHEDULE_MS } from '../../src/tools/svix/rules';

/**
 * The delivery path's real code (machine, driver, claim, through the trigger's deliver) in the seeded
 * simulation of src/tools/sim: the same seed gives the same result, seeds of the hardest settings meet every promise,
 * and the oracle catches what breaks them. The sweep over many seeds is `npm run simulate` (CI runs a short one).
 * Whole runs go through the built simulation in a Node process of its own, as a sweep runs them: jest runs code in
 * a vm context, where every lookup of a global (Math, JSON) is many times slower.
 */

const named = (name: string): Setting => {
  const setting = SETTINGS.find((each) => each.name === name);
  if (!setting) throw new Error(`no setting ${name}`);
  return setting;
};

/** One seed of a setting (changed by `--set KEY=VALUE` options), run by `npm run simulate`'s worker, as a sweep runs
 * it (with its flags). */
const simulated = (name: string, seed: number, ...sets: string[]): Promise<Outcome> =>
  runBuilt(
    Outcome,
    'tools/sim/cli.js',
    ['--worker', '--setting', name, ...sets.flatMap((set) => ['--set', set]), '--seeds', `${seed}-${seed}`],
    WORKER_FLAGS,
  );

/** The promises: nothing lost, run twice, forged or revoked run, junk within the allowance, no perform past 30 s, and
 * memory within its bound. */
const broken = (outcome: Outcome) => ({
  lost: outcome.lost,
  doubled: outcome.doubled,
  forgedRun: outcome.forgedRun,
  revokedRun: outcome.revokedRun,
  junkOverBound: outcome.junkOverBound,
  overTime: outcome.overTime,
  overMemory: outcome.overMemory,
});
/** The --set options of the regressions that need them. */
const QUIET = ['processes=4', 'share=0.2'];
const AHEAD = ['stolen=10', 'rotations=5', 'grace=immediate', 'forgeAheadSeconds=295'];
const SLOW = ['cacheLatencyMs=8000'];
const DAY = ['hours=24', 'edits=12', 'events=500'];
const NONE = { lost: 0, doubled: 0, forgedRun: 0, revokedRun: 0, junkOverBound: 0, overTime: 0, overMemory: 0 };

jest.setTimeout(60_000);

describe('the simulation', () => {
  it('gives the same line, byte for byte, for the same seed, and another for another seed', async () => {
    const setting = named('everything');
    const [first, again, other] = await Promise.all([
      simulated('everything', 11),
      simulated('everything', 11),
      simulated('everything', 12),
    ]);
    expect(outcomeLine(again, setting)).toBe(outcomeLine(first, setting));
    expect(outcomeLine(other, setting)).not.toBe(outcomeLine(first, setting));
    expect(outcomeLine(first, setting)).toContain(`replay="${replayCommand(setting, 11)}"`);
  });

  it("signs as Svix's reference library does, with every secret given", () => {
    const svix = new SimSvix(new Random(7), new Scheduler(T0), 0, { random: new Random(8), share: 0 });
    const endpoint = svix.endpoint(0);
    endpoint.rotate(T0, svix.newSecret(), 60);
    const keys = endpoint.secrets.map((spell) => spell.key);
    const body = '{"status":"CLOSED"}';
    const reference = keys.map((key) => new Webhook(key).sign('msg_1', new Date(1_767_600_000_000), body));
    expect(svix.sign('msg_1', 1_767_600_000, body, keys)).toBe(reference.join(' '));
  });

  it('goes on to each timer once what the last one started has settled, and spends no turn on a cancelled one', async () => {
    const scheduler = new Scheduler(T0);
    const loop = new EventLoop(scheduler);
    const seen: string[] = [];
    const chain = (name: string) => () =>
      void Promise.resolve()
        .then(() => Promise.resolve())
        .then(() => seen.push(`${name} settled`));
    loop.setTimeout(chain('a'), 10);
    const cancelled = loop.setTimeout(chain('b'), 20);
    loop.setTimeout(chain('c'), 30);
    loop.clearTimeout(cancelled);
    await scheduler.run(100, () => seen.push(`turn at ${scheduler.now - T0}`));
    expect(seen).toEqual(['turn at 0', 'a settled', 'turn at 10', 'c settled', 'turn at 30']);
  });

  it("finds a message by its id only once the transaction that wrote it commits, as Svix's server does", async () => {
    const scheduler = new Scheduler(T0);
    const svix = new SimSvix(new Random(7), scheduler, 0, { random: new Random(8), share: 0 });
    const message = svix.createMessage({ auctioneerUuid: 'a', auctionUuid: 'b', status: 'CLOSED' }, 300);
    const found: Record<number, number> = {};
    for (const at of [0, 300])
      scheduler.after(at, () => {
        const url = `http://127.0.0.1:9/api/v1/app/${svix.appId}/msg/${message.id}`;
        const options = { url, method: 'GET' as const, throwForThrottlingEarly: false };
        void svix.request(options, []).then(({ status }) => (found[at] = status));
      });
    await scheduler.run(100, () => undefined);
    expect(found).toEqual({ 0: 404, 300: 200 });
  });

  it("edits Zaps while on with the app's own subscribe and unsubscribe: each Zap keeps its endpoint, each event runs once", async () => {
    const [delivered, generations] = [new Set<number>(), new Set<number>()];
    const setting = { ...named('edits'), name: 'custom', events: 80 };
    const outcome = await simulate(setting, 5, {
      received: ({ endpoint }, { gen }) => {
        delivered.add(endpoint);
        generations.add(gen ?? 0);
      },
    });
    expect(broken(outcome)).toEqual(NONE);
    // Three Zaps, each with its one endpoint: the edits pointed them at new subscriptions, and made none.
    expect(delivered.size).toBe(setting.endpoints);
    expect(Math.max(...generations)).toBeGreaterThan(1);
  });

  it.each(['base', 'everything', 'backlog', 'wide-world', 'long-run', 'edits', 'edits-wide'])(
    'keeps every promise at the setting %s',
    async (name) => {
      const setting = named(name);
      const outcome = await simulated(name, 1_000 + SETTINGS.indexOf(setting));
      expect({ line: outcomeLine(outcome, setting), ...broken(outcome) }).toEqual({
        line: expect.any(String),
        ...NONE,
      });
      expect(outcome.events).toBe(setting.events);
    },
  );
});

/** Seeds that failed in a sweep of an earlier design, kept with what they found; each replays with its line. Those of
 * 8c1b55a fail on its delivery path in today's world, as its closing note shows. */
const REGRESSIONS: Array<[setting: string, seed: number, found: string, sets?: string[]]> = [
  ['backlog', 4, 'a listing whose scheduler left with its answer was never continued: 15 lost'],
  ['everything-fast', 3, "a read scheduled by a genuine delivery, made by junk's perform, counted as junk's"],
  ['everything-fast', 61, 'a read kept until its deadline by a delivery a look had taught: 4 lost'],
  ['everything-fast', 238, 'junk made a free call a genuine delivery gave up: one past the bound'],
  ['quiet-stolen-secret', 86, 'Svix hung twice, and a replaced secret ran 692 s after its rotation'],
  ['quiet-stolen-secret', 27, '8c1b55a: S0 trusted 138 s after a newer read, the sharing given up', QUIET],
  ['base', 49, '8c1b55a: a forgery signed 295 s ahead ran, and 9 genuine events were refuted after it', AHEAD],
  ['slow-cache', 10, '8c1b55a: 49 performs past 30 s (z.cache without a deadline), 31 lost, and a claim run twice'],
  ['base', 20, '8c1b55a: z.cache calls without a deadline kept a perform past 30 s, its event lost', SLOW],
  ['long-run', 4, '8c1b55a: windows nobody would list kept past their deliveries, in four runtimes'],
  ['commit-lag', 13, '8c1b55a: listings begun before a slow commit refuted 28 genuine events'],
  ['backlog', 34, 'a window listed again lost what it had found when its delivery left: 2 lost'],
  ['slow-cache', 7, "a delivery waited 23 s behind another's look, then had no time for the record: lost"],
  ['slow-cache', 145, 'a body accepted 35 s after a look ran 60.017 s after a newer read, its claim slow'],
  ['cold', 31, 'a verdict deferred to share what it read was decided again, out of time: lost'],
  ['commit-lag', 863, 'a listing handed over when its payer left was deleted, and paid again: 8 lost'],
  ['junk-100', 415, 'a free delivery moved a listing junk paid for earlier, and junk made it: one past the bound'],
  ['slow-cache', 249, 'a delivery whose checks took all its time had none left to claim its message: run twice'],
  ['edits-wide', 29, "Svix's clock 6 min behind: events just after the Zap was on fell before its edit's catch-up"],
  ['edits-wide', 48, "an edit's catch-up, queued across a rotation, halted as from before its endpoint: 2 lost"],
  ['edits-long', 575, "a read hung across an outage's end, another endpoint answered: unanswered, not lost"],
  ['junk-recent-windows', 545, 'a listing paid for again kept its failure, and was made at once as its free retry'],
  ['edits-wide', 282, "a history write that timed out landed over the successor's: judged from when z.cache held it"],
  ['slow-cache', 342, 'the judge took a look its delivery had given up on (z.cache 3 s away) for the process learning'],
  ['junk-recent-windows', 244, '962d0e2: genuine deliveries halted on arrival while junk held the listings: 2 lost'],
  ['junk-recent-windows', 21, '962d0e2: a genuine delivery halted with 25 s to wait for a read: lost'],
  [
    'flood-then-stolen',
    34,
    '962d0e2: a secret replaced at once stayed trusted after the record confirmed its successor',
  ],
  ['flood-then-stolen', 45, '962d0e2: bodies signed with the replaced secret ran after a flood spent the reads'],
  ['edits-wide', 208, 'a history write throttled false was never made again: a replaced secret ran 153 s later'],
  ['junk-recent-windows', 387, 'junk made a failed listing free 15 s after its time: one past the allowance'],
  [
    'everything-fast',
    289,
    "a process behind filed the newest secret below an older one; that one ran 0.016 s after its successor's",
  ],
  [
    'wide-world-cold',
    12,
    "962d0e2's judge: losses Svix never answered, judged by a forgery's halt and other lives",
    DAY,
  ],
  ['edits-wide', 17, "0f1a: a body ran 602.5 s after its secret's rotation, its claim and sweep slow after the check"],
  [
    'together-on',
    438,
    "0f1a: an older version's late pointing landed over the newer one's, then the endpoint went: 23 lost",
  ],
  ['no-zap-named', 601, "0f1a: a sweep's read of an off mark throttled, the endpoint of a Zap off left live"],
];

describe('seeds that once failed', () => {
  it.each(REGRESSIONS)('%s seed %d (%s) keeps every promise', async (name, seed, _found, sets = []) => {
    expect(broken(await simulated(name, seed, ...sets))).toEqual(NONE);
  });
});

describe("the simulated Svix follows Svix's server (src/tools/svix/rules.ts, as the emulator does)", () => {
  it('refuses a rotation while ten replaced secrets still sign, and takes it once the first has stopped', () => {
    const svix = new SimSvix(new Random(7), new Scheduler(T0), 0, { random: new Random(8), share: 0 });
    const endpoint = svix.endpoint(0);
    const rotated = Array.from({ length: 11 }, (_, index) => endpoint.rotate(T0 + index, svix.newSecret(), 60));
    expect(rotated).toEqual([...Array<boolean>(10).fill(true), false]);
    expect(endpoint.signingAt(T0 + 10)).toHaveLength(11);
    expect(endpoint.rotate(T0 + 60_000, svix.newSecret(), 60)).toBe(true);
  });

  it('retries an attempt Zapier took but whose answer was lost (a time-out to Svix) 60 s later, ±20%', async () => {
    const attempts = new Map<string, Map<number, number>>();
    await simulate({ ...named('share-0.2'), name: 'custom', events: 200 }, 3, {
      received: ({ kind, id, attempt, signedAt }) => {
        if (kind !== 'genuine') return;
        attempts.set(id, (attempts.get(id) ?? new Map<number, number>()).set(attempt, signedAt));
      },
    });
    // A retry of an attempt Zapier took (its answer was lost), as a share of its wait: Svix's schedule, at least 60 s.
    const shares = [...attempts.values()].flatMap((times) =>
      [...times].flatMap(([attempt, signedAt]) => {
        const [next, scheduled] = [times.get(attempt + 1), RETRY_SCHEDULE_MS[attempt - 1]];
        if (next === undefined || scheduled === undefined) return [];
        return [(next - signedAt) / Math.max(scheduled, 60_000)];
      }),
    );
    expect(shares.length).toBeGreaterThan(3);
    // Signed in whole seconds: a second either way.
    for (const share of shares) expect(share).toBeGreaterThanOrEqual(0.8 - 1 / 48);
    for (const share of shares) expect(share).toBeLessThanOrEqual(1.2 + 1 / 48);
    expect(new Set(shares).size).toBeGreaterThan(1);
  });
});

describe('the oracle', () => {
  const base = named('base');
  /** Enough forgeries, redeliveries and rotations for each failure to show, in a fraction of a second. */
  const small = { ...named('share-0.2'), name: 'custom', events: 60 };

  /** The delivered body as an item, unchecked: what a broken perform would run. */
  const bodyOf = (bundle: DeliveryBundle) => {
    const raw = RawRequest.decode(bundle.rawRequest);
    if (!isRight(raw)) throw new Error('the simulation sent no body');
    const body: unknown = JSON.parse(raw.right.content);
    return [{ ...Object(body), id: String(raw.right.headers?.['Http-Svix-Id']) }];
  };

  it('counts forged bodies run, and events run twice, when deliveries run unchecked', async () => {
    const outcome = await simulate(small, 5, {
      deliver: () => async (_io, bundle) => bodyOf(bundle),
    });
    expect(outcome.forgedRun).toBeGreaterThan(0);
    expect(outcome.doubled).toBeGreaterThan(0);
  });

  /** A broken perform: a halt ignored, and the delivered body run anyway. */
  const ignoringHalts: NonNullable<Parameters<typeof simulate>[2]>['deliver'] = (deliver) => async (io, bundle) => {
    try {
      return await deliver(io, bundle);
    } catch (error) {
      if (error instanceof Error && error.name === 'HaltedError') return bodyOf(bundle);
      throw error;
    }
  };

  it('counts revoked secrets trusted when a halt is ignored and the body runs anyway', async () => {
    const outcome = await simulate(small, 2, { deliver: ignoringHalts });
    expect(outcome.revokedRun).toBeGreaterThan(0);
  });

  // Each way the promise on replaced secrets can break: a process ran one after reading its successor itself, or
  // 10 minutes after the rotation.
  it('tells each broken promise on replaced secrets when halts are ignored', async () => {
    const stolen = { ...named('quiet-stolen-secret'), name: 'custom', events: 100 };
    const broken = new Set<string>();
    for (const seed of [2, 3]) {
      const outcome = await simulate(stolen, seed, { deliver: ignoringHalts });
      for (const trace of outcome.traces)
        broken.add(/s after (its own process \w+|it was replaced)/.exec(trace)?.[1] ?? '');
    }
    const ways = ['it was replaced', 'its own process read'];
    expect([...broken].filter(Boolean).sort()).toEqual(ways);
  });

  it('counts lost events when performs fail', async () => {
    const outcome = await simulate(base, 5, {
      deliver: () => (io) => {
        throw new io.errors.Error('down', 'Down', 503);
      },
    });
    expect(outcome.lost).toBe(outcome.events);
  });

  it('counts junk calls past the allowance when junk makes extra reads', async () => {
    const outcome = await simulate({ ...named('junk-100'), name: 'custom', events: 40, rotations: 2 }, 5, {
      deliver: (deliver) => async (io, bundle) => {
        const url = `${String(Reflect.get(Object(bundle.authData), 'serverUrl'))}/api/v1/app/x/endpoint/y/secret`;
        const options = { url, method: 'GET' as const, skipThrowForStatus: true, throwForThrottlingEarly: false };
        for (let call = 0; call < 3; call += 1) await io.send(options, true);
        return deliver(io, bundle);
      },
    });
    expect(outcome.junkOverBound).toBeGreaterThan(0);
  });

  it("models Zapier's runtime: a perform whose process holds nothing but unref'd waits is cut off, its event lost", async () => {
    const cut = await simulate(base, 3, {
      timers: (loop) => ({
        setTimeout: (run, ms) => loop.setTimeout(run, ms, false), // as Node's unref'd timers
        clearTimeout: loop.clearTimeout,
      }),
    });
    expect(cut.cut).toBeGreaterThan(0);
    expect(cut.lost).toBeGreaterThan(0);
    const held = await simulate(base, 3);
    expect({ cut: held.cut, lost: held.lost }).toEqual({ cut: 0, lost: 0 });
    expect(failed(held)).toBe(false);
  });

  it('counts a perform still running 30 s after it began as Zapier ends it, its event lost', async () => {
    const outcome = await simulate({ ...base, name: 'custom', events: 20 }, 5, {
      deliver: (deliver) => async (io, bundle) => {
        // About 40 s of z.cache round trips (1–12 ms each) before the delivery is even looked at.
        for (let call = 0; call < 6_000; call += 1) await io.cache.get('slow').catch(() => undefined);
        return deliver(io, bundle);
      },
    });
    expect(outcome.overTime).toBe(outcome.performs);
    expect(outcome.lost).toBe(outcome.events);
  });

  it('finds a runtime that kept more endpoints than its limit', () => {
    const runtime = new Runtime(undefined, ENDPOINTS_KEPT + 1);
    for (let n = 0; n <= ENDPOINTS_KEPT; n += 1) runtime.endpoints.get(`endpoint-${n}`, () => known('s', 0, 0));
    expect(withinMemory(runtime)).toBe(false);
    expect(withinMemory(new Runtime())).toBe(true);
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
