import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createAppTester, type Bundle, type ZObject } from 'zapier-platform-core';
import app from '../index';
import { secretKey, sign, verify } from '../provider/signature';
import { auctionStatusChangedOperations as trigger, TRIGGER_KEY } from '../triggers/auctionStatusChanged';
import { AuctionBackEnd } from '../sandbox/auctions';
import { newId, newSecret } from '../sandbox/emulator/store';
import { ProviderEmulator } from '../sandbox/emulator';
import { HookRunner } from '../sandbox/hookRunner';
import { listenOnLoopback } from '../sandbox/net';
import { ProviderClient } from '../setup/client';
import { runSetup } from '../setup/setup';
import { elapsedMs, median, pairedRatio, percentile, round, sideBySide } from './stats';

/** The project's root: dist/bench/ → ../../ */
export const ROOT = resolve(__dirname, '../..');

export interface Comparison {
  name: string;
  ours: number;
  baseline: number;
  unit: string;
  ratio: number;
  budget: string;
  met: boolean;
  detail?: Record<string, number | string>;
}

/** A ratio budget: at most (slower than a baseline) or at least (a rate). */
type Budget = { most: number } | { least: number };

/** A side-by-side comparison: medians of each side, and the median of the per-round ratios against its budget. */
const compared = (
  name: string,
  samples: { a: number[]; b: number[] },
  unit: string,
  budget: Budget,
  detail: Comparison['detail'],
  digits = 1,
): Comparison => {
  const ratio = pairedRatio(samples);
  return {
    name,
    ours: round(median(samples.a), digits),
    baseline: round(median(samples.b), digits),
    unit,
    ratio: round(ratio),
    budget: 'most' in budget ? `<= ${budget.most}` : `>= ${budget.least}`,
    met: 'most' in budget ? ratio <= budget.most : ratio >= budget.least,
    ...(detail ? { detail } : {}),
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

export const coldStart = async (rounds: number): Promise<Comparison> => {
  const ours = join(ROOT, 'index.js');
  const core = require.resolve('zapier-platform-core', { paths: [ROOT] });
  loadMs(ours);
  loadMs(core);
  const samples = await sideBySide(
    rounds,
    () => loadMs(ours),
    () => loadMs(core),
  );
  return compared(
    'Cold start: load index.js vs bare zapier-platform-core (fresh process)',
    samples,
    'ms',
    { most: 1.05 },
    {
      rounds,
    },
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

/** A delivery as Zapier hands it to perform, signed now. */
const delivery = (): Partial<Bundle> => {
  const id = newId('msg');
  const body = EVENT_BODY;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = secretKey(SECRET);
  if (!key) throw new Error('bad bench secret');
  const subscribeData = { id: ENDPOINT, secret: SECRET };
  return {
    subscribeData,
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
 * The baselines run in the same app definition, through the same tester, so
 * the platform's own per-invocation work (which grows with the definition) is
 * the same on both sides: `passthrough` is the smallest hook trigger there is,
 * handing the delivery on as Zapier's REST-hook example does; `nothing`
 * returns no item at all, so it also skips the platform's per-item work.
 */
const benchApp = {
  ...app,
  triggers: {
    ...app.triggers,
    passthrough: {
      key: 'passthrough',
      noun: 'Delivery',
      display: { label: 'Passthrough', description: 'Triggers when a delivery arrives, as it is.', hidden: true },
      operation: { type: 'hook', perform: (_z: ZObject, bundle: Bundle) => [bundle.cleanedRequest] },
    },
    nothing: {
      key: 'nothing',
      noun: 'Delivery',
      display: { label: 'Nothing', description: 'Triggers when nothing happens at all.', hidden: true },
      operation: { type: 'hook', perform: (_z: ZObject, _bundle: Bundle) => [] },
    },
  },
};

export const deliveryPath = async (rounds: number, perRound: number): Promise<Comparison> => {
  // A provider stand-in that only counts: perform must not call it when the stored secret verifies.
  let providerRequests = 0;
  const counter = createServer((_request, response) => {
    providerRequests += 1;
    response.writeHead(500).end();
  });
  const port = await listenOnLoopback(counter);
  const authData = { apiKey: 'testsk_bench', appId: `app_${'A'.repeat(27)}`, serverUrl: `http://127.0.0.1:${port}` };

  const tester = createAppTester(benchApp);
  const timed = (run: (bundle: Partial<Bundle>) => Promise<unknown>) => async () => {
    const bundles = Array.from({ length: perRound }, delivery);
    const start = process.hrtime.bigint();
    for (const bundle of bundles) await run({ ...bundle, authData });
    return (elapsedMs(start) * 1000) / perRound;
  };
  const ours = timed(async (bundle) => {
    const items: unknown = await tester(trigger.perform, bundle);
    if (!Array.isArray(items) || items.length !== 1) throw new Error('perform did not return the item');
  });
  const passthrough = timed((bundle) => tester(benchApp.triggers.passthrough.operation.perform, bundle));
  const nothing = timed((bundle) => tester(benchApp.triggers.nothing.operation.perform, bundle));
  try {
    await ours();
    await passthrough();
    await nothing();
    const samples = await sideBySide(rounds, ours, passthrough);
    const bare = await sideBySide(rounds, ours, nothing);
    const comparison = compared(
      'Delivery path: perform (verify, decode, dedupe, map) vs the smallest hook trigger, same tester',
      samples,
      'µs per delivery',
      { most: 1.15 },
      {
        deliveries: rounds * perRound * 3,
        providerRequests,
        trigger: TRIGGER_KEY,
        returningNothingUs: round(median(bare.b), 1),
        ratioToReturningNothing: round(pairedRatio(bare)),
      },
    );
    return {
      ...comparison,
      budget: `${comparison.budget}, and no provider request`,
      met: comparison.met && providerRequests === 0,
    };
  } finally {
    counter.close();
  }
};

// ---- 3. Verification --------------------------------------------------------

export const verification = async (rounds: number, perRound: number): Promise<Comparison> => {
  const id = newId('msg');
  const timestamp = String(Math.floor(Date.now() / 1000));
  const body = EVENT_BODY;
  const key = secretKey(SECRET);
  if (!key) throw new Error('bad bench secret');
  const signature = `v1,${sign(key, id, timestamp, body)}`;
  const now = Math.floor(Date.now() / 1000);
  const ours = () => {
    const start = process.hrtime.bigint();
    for (let index = 0; index < perRound; index += 1) {
      if (!verify({ id, timestamp, signature, body }, SECRET, now).ok) throw new Error('verification failed');
    }
    return perRound / (elapsedMs(start) / 1000);
  };
  const bare = () => {
    const start = process.hrtime.bigint();
    for (let index = 0; index < perRound; index += 1) {
      createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
    }
    return perRound / (elapsedMs(start) / 1000);
  };
  // Warm both up well: the JIT settles each over the first few hundred thousand calls.
  for (let round = 0; round < 10; round += 1) {
    ours();
    bare();
  }
  const samples = await sideBySide(rounds, ours, bare);
  return compared(
    'Verification: signature checks vs a bare HMAC-SHA256 of the same bytes',
    samples,
    'checks/s',
    { least: 0.8 },
    { checks: rounds * perRound },
    0,
  );
};

// ---- 4. Package size --------------------------------------------------------

const run = (command: string, args: string[], cwd: string): void => {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${result.stderr}${result.stdout}`);
};

/** `zapier-platform build` under Node 22, in a directory with production dependencies only. */
const buildSize = (dir: string): number => {
  const cli = realpathSync(join(ROOT, 'node_modules/.bin/zapier-platform'));
  run('npx', ['-y', '-p', 'node@22', '--', 'node', cli, 'build', '--skip-validation', '--skip-dep-install'], dir);
  return statSync(join(dir, 'build/build.zip')).size;
};

/** Writes package.json without scripts: the build must not try to compile (dist/ is already built). */
const writeManifest = (dir: string, manifest: Record<string, unknown>): void => {
  const { scripts, devDependencies, ...rest } = manifest;
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(rest, null, 2)}\n`);
};

export const packageSize = (): Comparison => {
  const manifest: unknown = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  if (typeof manifest !== 'object' || manifest === null) throw new Error('package.json is not an object');
  const record: Record<string, unknown> = { ...manifest };
  const coreVersion = app.platformVersion;
  const work = mkdtempSync(join(tmpdir(), 'auction-bench-'));
  try {
    const oursDir = join(work, 'ours');
    const minimalDir = join(work, 'minimal');
    // All of dist/, as a build would see it: dependency detection keeps only what index.js requires.
    cpSync(join(ROOT, 'dist'), join(oursDir, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'index.js'), join(oursDir, 'index.js'));
    cpSync(join(ROOT, 'package-lock.json'), join(oursDir, 'package-lock.json'));
    cpSync(join(ROOT, '.zapierapprc'), join(oursDir, '.zapierapprc'));
    writeManifest(oursDir, record);
    run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], oursDir);

    cpSync(join(ROOT, '.zapierapprc'), join(minimalDir, '.zapierapprc'));
    writeManifest(minimalDir, {
      name: 'minimal-zapier-app',
      version: '1.0.0',
      main: 'index.js',
      dependencies: { 'zapier-platform-core': coreVersion },
    });
    writeFileSync(
      join(minimalDir, 'index.js'),
      "module.exports = { version: '1.0.0', platformVersion: require('zapier-platform-core').version };\n",
    );
    run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], minimalDir);

    const ours = buildSize(oursDir);
    const minimal = buildSize(minimalDir);
    return {
      name: 'Package size: build.zip vs a minimal app on the same core',
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

export interface Throughput {
  name: string;
  events: number;
  deliveriesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  peakRssMb: number;
}

export const sandboxThroughput = async (events: number): Promise<Throughput> => {
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 20);
  const apiKey = `sk_bench_${randomBytes(8).toString('hex')}`;
  const emulator = new ProviderEmulator({ apiKey });
  const baseUrl = await emulator.start();
  const client = new ProviderClient({ baseUrl, apiKey });
  const { appId } = await runSetup({ client, appName: 'Bench Auction House' });
  const runner = new HookRunner({ app, authData: { apiKey, appId, serverUrl: baseUrl } });
  try {
    await runner.start();
    const zap = await runner.turnOn('Every status change');
    const backEnd = new AuctionBackEnd(client, appId);
    const start = Date.now();
    for (let index = 0; index < events; index += 1) {
      await backEnd.emitNext(3);
    }
    await emulator.idle();
    await runner.idle();
    const finishedAt = Math.max(...runner.runs.map((entry) => entry.at));
    const emittedAt = new Map(backEnd.emitted.map((event) => [event.messageId, event.at]));
    const latencies = runner.runs
      .filter((entry) => entry.outcome === 'ran' && entry.messageId !== undefined)
      .map((entry) => entry.at - (emittedAt.get(entry.messageId ?? '') ?? entry.at));
    if (latencies.length !== events) throw new Error(`only ${latencies.length} of ${events} events reached the Zap`);
    await runner.turnOff(zap);
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    return {
      name: 'Sandbox: auction status change → Zap fields, over real HTTP',
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
  }
};
