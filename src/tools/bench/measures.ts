import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRight } from 'fp-ts/Either';
import type { Bundle, ZObject } from 'zapier-platform-core';
import app from '../../index';
import { secretKey, sign } from '../../svix/signature';
import { TRIGGER_KEY } from '../../triggers/auctionStatusChanged';
import { SubscribeData } from '../../models/inbound';
import { AuctionService } from '../sandbox/auctions';
import { newId, newSecret } from '../sandbox/emulator/store';
import { SvixEmulator, type EmulatorOptions } from '../sandbox/emulator';
import { HookRunner } from '../sandbox/hookRunner';
import { buildStaged, ROOT, run, stage } from '../package/stage';
import { listenOnLoopback } from '../sandbox/net';
import { PlatformStandIn, platformInvoker } from '../sandbox/platform';
import { SvixClient } from '../setup/client';
import { runSetup } from '../setup/setup';
import type { Comparison, RoundTrip, Throughput } from './report';
import { elapsedMs, median, percentile, round, sideBySide } from './stats';
import { BUDGETS, budgetText, measureUntilDecided, REMEASURES, type Budget, type Judged } from './verdict';
import { CACHE_SCOPE } from '../../zapier/io';

export { ROOT };

/** Told when a figure past its budget by no more than its noise is measured again. */
export type Remeasuring = (name: string, judged: Judged, attempt: number) => void;

/**
 * A side-by-side comparison: medians of each side, and the median of the
 * per-round ratios against its budget, measured again (rounds pooled) while
 * it misses the budget by no more than its own noise (see verdict.ts).
 */
const compared = async (
  name: string,
  sample: () => Promise<{ a: number[]; b: number[] }>,
  unit: string,
  budget: Budget,
  detail: Comparison['detail'],
  onRemeasure: Remeasuring,
  digits = 1,
): Promise<Comparison> => {
  const { samples, judged, remeasured } = await measureUntilDecided(
    sample,
    budget,
    REMEASURES,
    (judgedSoFar, attempt) => onRemeasure(name, judgedSoFar, attempt),
  );
  return {
    name,
    ours: round(median(samples.a), digits),
    baseline: round(median(samples.b), digits),
    unit,
    ratio: round(judged.ratio),
    budget: budgetText(budget),
    met: judged.verdict === 'met',
    detail: {
      ...detail,
      interval95: `${round(judged.low)}–${round(judged.high)}`,
      rounds: samples.a.length,
      remeasured,
    },
  };
};

// ---- 1. Cold start ----------------------------------------------------------

/** Wall time of a fresh Node process that loads one module and exits. */
const loadMs = (modulePath: string): number => {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(modulePath)})`], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  if (result.status !== 0) throw new Error(`loading ${modulePath} failed`);
  return elapsedMs(start);
};

export const coldStart = async (rounds: number, onRemeasure: Remeasuring): Promise<Comparison> => {
  const ours = join(ROOT, 'index.js');
  const core = require.resolve('zapier-platform-core', { paths: [ROOT] });
  loadMs(ours);
  loadMs(core);
  return compared(
    'Cold start: index.js vs bare core, fresh process',
    () =>
      sideBySide(
        rounds,
        () => loadMs(ours),
        () => loadMs(core),
      ),
    'ms',
    { most: BUDGETS.coldStart },
    undefined,
    onRemeasure,
  );
};

// ---- 2. Delivery path -------------------------------------------------------

const SECRET = newSecret();
const ENDPOINT = `ep_${'B'.repeat(27)}`;

/** A real-sized AUCTION_STATUS_CHANGE body. */
const EVENT_BODY = JSON.stringify({
  auctioneerUuid: '0e7c2f44-3b8e-4f6d-a1d2-9c5b8e7a4f20',
  auctionUuid: '5b0f1c1e-8d2a-4c59-9a37-2f1f7e0b6c11',
  status: 'OPEN_FOR_BIDDING',
});

/** The Zap a delivery is for: what its subscribe returned (by default, one made a moment ago). */
const BENCH_ZAP: SubscribeData = { id: ENDPOINT, secret: SECRET, checkedAt: Date.now(), zap: 'bench', on: 0, gen: 1 };

/** A delivery as Zapier hands it to perform, signed now with the Zap's secret. */
export const benchDelivery = (authData: Record<string, string>, zap: SubscribeData = BENCH_ZAP) => {
  const id = newId('msg');
  const body = EVENT_BODY;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = secretKey(zap.secret);
  if (!key) throw new Error('bad bench secret');
  return {
    authData,
    subscribeData: zap,
    rawRequest: {
      method: 'POST',
      querystring: '',
      content: body,
      headers: {
        'Http-Svix-Id': id,
        'Http-Svix-Timestamp': timestamp,
        'Http-Svix-Signature': `v1,${sign(key, id, timestamp, body)}`,
      },
    },
    cleanedRequest: JSON.parse(body),
    inputData: {},
  };
};

/**
 * The baseline runs in the same app definition, through the same handler, so
 * the platform's own per-invocation work (which grows with the definition) is
 * the same on both sides: the smallest hook trigger that runs each message
 * once, with one `set` with `nx` of the message id, and no checks at all.
 */
const CLAIM_ONLY = 'claim_only';
const benchApp = {
  ...app,
  triggers: {
    ...app.triggers,
    [CLAIM_ONLY]: {
      key: CLAIM_ONLY,
      noun: 'Delivery',
      display: {
        label: 'Claim Only',
        description: 'Triggers when a message arrives for the first time.',
        hidden: true,
      },
      operation: {
        type: 'hook',
        perform: async (z: ZObject, bundle: Bundle) => {
          const id = String(bundle.rawRequest?.headers?.['Http-Svix-Id']);
          const stored = await z.cache.set(`seen:${id}`, true, 3600, CACHE_SCOPE, true);
          return stored === true ? [bundle.cleanedRequest] : [];
        },
      },
    },
  },
};

/** A Svix stand-in that only counts: a warm delivery must not call it. */
const countingSvix = async () => {
  let requests = 0;
  const server = createServer((_request, response) => {
    requests += 1;
    response.writeHead(500).end();
  });
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

const benchAuth = (serverUrl: string) => ({ apiKey: 'testsk_bench', appId: `app_${'A'.repeat(27)}`, serverUrl });

/** Microseconds of this process's CPU time. */
const cpuMicros = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** Microseconds of wall time: deliveryCpu's clock when what it compares is the time a delivery takes. */
export const wallMicros = (): number => Number(process.hrtime.bigint() / 1_000n);

/**
 * CPU per delivery, through core's handler as Zapier runs it, with z.cache on
 * the platform stand-in at zero delay: perform (verify, decode, map, claim)
 * against the smallest hook that claims each message once. `clock` may be wall time instead.
 */
export const deliveryCpu = async (
  rounds: number,
  perRound: number,
  onRemeasure: Remeasuring,
  clock: () => number = cpuMicros,
): Promise<Comparison> => {
  const Svix = await countingSvix();
  const platform = new PlatformStandIn();
  await platform.start();
  const authData = benchAuth(Svix.url);
  const invoke = platformInvoker({ app: benchApp, platform, identity: { authId: 'bench', userId: 'bench' } });
  const ours = `triggers.${TRIGGER_KEY}.operation.perform`;
  const claimOnly = `triggers.${CLAIM_ONLY}.operation.perform`;
  const deliver = async (method: string): Promise<number> => {
    const bundle = benchDelivery(authData);
    const start = clock();
    const items = await invoke(method, bundle);
    const spent = clock() - start;
    if (!Array.isArray(items) || items.length !== 1) throw new Error(`${method} did not run the delivery`);
    return spent;
  };
  /**
   * One round: the two sides take turns delivery by delivery, so each meets
   * the same heap, the same JIT state and its share of the garbage collector.
   */
  const round = async () => {
    const spent = { a: 0, b: 0 };
    for (let index = 0; index < perRound; index += 1) {
      const first = index % 2 === 0;
      const oneSide = await deliver(first ? ours : claimOnly);
      const otherSide = await deliver(first ? claimOnly : ours);
      spent.a += first ? oneSide : otherSide;
      spent.b += first ? otherSide : oneSide;
    }
    return { a: spent.a / perRound, b: spent.b / perRound };
  };
  try {
    for (let warm = 0; warm < 2; warm += 1) await round();
    const sample = async () => {
      const samples: { a: number[]; b: number[] } = { a: [], b: [] };
      for (let index = 0; index < rounds; index += 1) {
        const { a, b } = await round();
        samples.a.push(a);
        samples.b.push(b);
      }
      return samples;
    };
    return await compared(
      'CPU per delivery: perform vs a claim-only hook',
      sample,
      'µs CPU per delivery',
      { most: BUDGETS.performCpu },
      { deliveriesPerRound: perRound * 2, trigger: TRIGGER_KEY },
      onRemeasure,
    );
  } finally {
    await platform.stop();
    await Svix.close();
  }
};

const within = (name: string, value: number, budget: number, unit: string): RoundTrip => ({
  name,
  value,
  budget,
  unit,
  met: value <= budget,
});

/** Runs one delivery in a new Node process, as a cold Lambda would, and reports the cache round trips it made. */
const coldDelivery = (platform: PlatformStandIn, bundle: object): Promise<number> =>
  new Promise((resolve, reject) => {
    const before = platform.calls.length;
    const child = spawn(process.execPath, [join(__dirname, 'coldDelivery.js')], {
      cwd: ROOT,
      stdio: ['pipe', 'ignore', 'inherit'],
      env: { ...process.env, NODE_ENV: 'test' },
    });
    child.stdin.end(JSON.stringify({ fields: platform.eventFor({ authId: 'bench', userId: 'bench' }), bundle }));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve(platform.calls.length - before);
      else reject(new Error(`the cold delivery exited with ${code}`));
    });
  });

/**
 * The Svix emulator under a fresh API key, set up as `npm run setup` does it,
 * and the connection to it (stopped again if the set-up fails).
 */
const setUpSvix = async (options: Partial<EmulatorOptions> = {}) => {
  const apiKey = `sk_bench_${randomBytes(8).toString('hex')}`;
  const emulator = new SvixEmulator({ apiKey, ...options });
  const serverUrl = await emulator.start();
  try {
    const client = new SvixClient({ baseUrl: serverUrl, apiKey });
    const { appId } = await runSetup({ client, appName: 'Bench Auction House' });
    return { emulator, client, authData: { apiKey, appId, serverUrl } };
  } catch (error) {
    await emulator.stop();
    throw error;
  }
};

/**
 * Round trips per delivery and per subscribe, counted on the stand-ins, for a
 * Zap turned on through its subscribe on a platform stand-in that answers as
 * Zapier documents (so what the subscribe learnt of the cache is what counts),
 * and again with a conflict answered as Redis does.
 */
export const roundTrips = async (): Promise<RoundTrip[]> => {
  const platform = new PlatformStandIn();
  await platform.start();
  let emulator: SvixEmulator | undefined;
  try {
    const Svix = await setUpSvix();
    emulator = Svix.emulator;
    const { authData } = Svix;
    const invoke = platformInvoker({ app, platform, identity: { authId: 'bench', userId: 'bench' } });
    const perform = `triggers.${TRIGGER_KEY}.operation.perform`;

    // Subscribe, when the event type exists (the set-up registered it).
    const requestsBefore = emulator.stats().requests;
    const subscribed = SubscribeData.decode(
      await invoke(`triggers.${TRIGGER_KEY}.operation.performSubscribe`, {
        authData,
        targetUrl: 'http://127.0.0.1:9/hooks/standard/bench/',
        inputData: {},
      }),
    );
    if (!isRight(subscribed)) throw new Error('the bench subscribe returned no endpoint');
    const zap = subscribed.right;
    const subscribeCalls = emulator.stats().requests - requestsBefore;

    // Warm: this process has run a delivery of the Zap before.
    const warmRuns = 50;
    const warm = async (conflict: false | null): Promise<number> => {
      platform.answerConflictsWith(conflict);
      await invoke(perform, benchDelivery(authData, zap));
      const callsBefore = platform.calls.length;
      for (let index = 0; index < warmRuns; index += 1) await invoke(perform, benchDelivery(authData, zap));
      return (platform.calls.length - callsBefore) / warmRuns;
    };
    const svixBefore = emulator.stats().requests;
    const warmZapier = await warm(false);
    const warmRedis = await warm(null);
    const warmSvix = emulator.stats().requests - svixBefore;
    platform.answerConflictsWith(false);
    // Cold: a new process, the subscribe's read of the secret under 10 minutes old.
    const svixBeforeCold = emulator.stats().requests;
    const cold = await coldDelivery(platform, benchDelivery(authData, zap));
    const coldSvix = emulator.stats().requests - svixBeforeCold;
    return [
      within("Warm delivery, Zapier's cache answers: cache round trips", warmZapier, 1, 'per delivery'),
      within("Warm delivery, Redis's answers: cache round trips", warmRedis, 1, 'per delivery'),
      within('Warm delivery: Svix calls', warmSvix, 0, 'in all'),
      within('Cold process: cache round trips', cold, 1, 'per delivery'),
      within('Cold process: Svix calls', coldSvix, 0, 'per delivery'),
      within('Subscribe: Svix calls', subscribeCalls, 2, 'per subscribe'),
    ];
  } finally {
    await platform.stop();
    await emulator?.stop();
  }
};

// ---- 4. Package size --------------------------------------------------------

/**
 * The zip `npm run package` makes (the app staged with its production
 * dependencies, built by the CLI under Node 22), against a minimal app on the
 * same core built the same way.
 */
export const packageSize = (): Comparison => {
  const coreVersion = app.platformVersion;
  const work = mkdtempSync(join(tmpdir(), 'auction-bench-'));
  try {
    const oursDir = join(work, 'ours');
    stage(ROOT, oursDir);
    const minimalDir = join(work, 'minimal');
    mkdirSync(minimalDir);
    cpSync(join(ROOT, '.zapierapprc'), join(minimalDir, '.zapierapprc'));
    const minimalManifest = {
      name: 'minimal-zapier-app',
      version: '1.0.0',
      main: 'index.js',
      dependencies: { 'zapier-platform-core': coreVersion },
    };
    writeFileSync(join(minimalDir, 'package.json'), `${JSON.stringify(minimalManifest, null, 2)}\n`);
    writeFileSync(
      join(minimalDir, 'index.js'),
      "module.exports = { version: '1.0.0', platformVersion: require('zapier-platform-core').version };\n",
    );
    run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], minimalDir);

    const ours = statSync(buildStaged(oursDir)).size;
    const minimal = statSync(buildStaged(minimalDir)).size;
    return {
      name: 'Package size vs a minimal app',
      ours: round(ours / 1024, 1),
      baseline: round(minimal / 1024, 1),
      unit: 'KiB',
      ratio: round(ours / minimal),
      budget: '<= 1.3',
      met: ours / minimal <= 1.3,
      detail: { core: coreVersion },
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
};

// ---- 5. Sandbox throughput --------------------------------------------------

export const sandboxThroughput = async (events: number): Promise<Throughput> => {
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 20);
  // The delivery path's own pace: unpaced deliveries, and no hook limit at Zapier's stand-in.
  const { emulator, client, authData } = await setUpSvix({ paceDeliveries: false });
  const platform = new PlatformStandIn();
  await platform.start();
  const runner = new HookRunner({ app, platform, authData, hookLimit: false });
  try {
    await runner.start();
    const zap = await runner.turnOn('Every status change');
    const auctionService = new AuctionService(client, authData.appId);
    const start = Date.now();
    for (let index = 0; index < events; index += 1) {
      await auctionService.emitNext(3);
    }
    await emulator.idle();
    await runner.idle();
    const finishedAt = Math.max(...runner.runs.map((entry) => entry.at));
    const emittedAt = new Map(auctionService.emitted.map((event) => [event.messageId, event.at]));
    const latencies = runner.runs
      .filter((entry) => entry.outcome === 'ran' && entry.messageId !== undefined)
      .map((entry) => entry.at - (emittedAt.get(entry.messageId ?? '') ?? entry.at));
    if (latencies.length !== events) throw new Error(`only ${latencies.length} of ${events} events reached the Zap`);
    await runner.turnOff(zap);
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    return {
      name: 'Sandbox, over real HTTP',
      events,
      deliveriesPerSecond: Math.round(events / ((finishedAt - start) / 1000)),
      p50Ms: round(percentile(latencies, 50), 1),
      p99Ms: round(percentile(latencies, 99), 1),
      peakRssMb: Math.round(peakRss / (1024 * 1024)),
    };
  } finally {
    clearInterval(sampler);
    await runner.stop();
    await emulator.stop();
    await platform.stop();
  }
};
