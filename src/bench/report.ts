import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus, release, totalmem, type as osType } from 'node:os';
import { join, relative } from 'node:path';
import * as t from 'io-ts';
import { REMEASURES } from './verdict';

/**
 * What `npm run bench` reports: the tables it prints, and the performance
 * document (`docs/performance.md`) that `npm run bench -- --docs` writes from
 * the same figures, with the machine they were measured on and a fingerprint
 * of the source they were measured for, so the document cannot silently go
 * stale (a test compares the fingerprint with the source as it is).
 */

/** One side-by-side comparison against a baseline, with its ratio budget. */
export const Comparison = t.intersection([
  t.type({
    name: t.string,
    ours: t.number,
    baseline: t.number,
    unit: t.string,
    ratio: t.number,
    budget: t.string,
    met: t.boolean,
  }),
  t.partial({ detail: t.record(t.string, t.union([t.number, t.string])) }),
]);
export type Comparison = t.TypeOf<typeof Comparison>;

/** Round trips counted on the stand-ins, against an absolute budget. */
export const RoundTrip = t.type({ name: t.string, value: t.number, budget: t.number, unit: t.string, met: t.boolean });
export type RoundTrip = t.TypeOf<typeof RoundTrip>;

/** Auction events through the sandbox, end to end. */
export const Throughput = t.type({
  name: t.string,
  events: t.number,
  deliveriesPerSecond: t.number,
  p50Ms: t.number,
  p99Ms: t.number,
  peakRssMb: t.number,
});
export type Throughput = t.TypeOf<typeof Throughput>;

const Machine = t.type(
  { cpu: t.string, cores: t.number, memoryGiB: t.number, os: t.string, node: t.string },
  'Machine',
);
type Machine = t.TypeOf<typeof Machine>;

export const BenchResults = t.intersection(
  [
    t.type({
      when: t.string,
      machine: Machine,
      seconds: t.number,
      comparisons: t.array(Comparison),
      roundTrips: t.array(RoundTrip),
      /** The fingerprint of the source measured (see sourceFingerprint). */
      source: t.string,
    }),
    t.partial({ throughput: Throughput }),
  ],
  'BenchResults',
);
export type BenchResults = t.TypeOf<typeof BenchResults>;

export const machineOf = (): Machine => {
  const processors = cpus();
  return {
    cpu: processors[0]?.model.trim() ?? 'unknown CPU',
    cores: processors.length,
    memoryGiB: Math.round(totalmem() / 1024 ** 3),
    os: `${osType()} ${release()}`,
    node: process.version,
  };
};

/**
 * What decides the figures: the app's source, the dependencies the lockfile
 * pins, and how it is compiled (the build's settings extend tsconfig.json).
 */
export const MEASURED = ['src', 'package-lock.json', 'tsconfig.build.json', 'tsconfig.json'];

/** A SHA-256 over the measured files (path and content), the same on any checkout of the same source. */
export const sourceFingerprint = (root: string): string => {
  const files: string[] = [];
  const walk = (path: string): void => {
    if (statSync(path).isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
    else files.push(path);
  };
  for (const entry of MEASURED) walk(join(root, entry));
  const hash = createHash('sha256');
  for (const file of files.map((path) => relative(root, path).split('\\').join('/')).sort()) {
    hash
      .update(`${file}\n`)
      .update(readFileSync(join(root, file)))
      .update('\n');
  }
  return hash.digest('hex').slice(0, 16);
};

/** The tables the bench prints. */
export const benchTables = (results: Pick<BenchResults, 'comparisons' | 'roundTrips' | 'throughput'>): string => {
  const lines = [
    '| Measure | Ours | Baseline | Unit | Ratio | 95% interval | Budget | |',
    '|---|---|---|---|---|---|---|---|',
    ...results.comparisons.map(
      (entry) =>
        `| ${entry.name} | ${entry.ours} | ${entry.baseline} | ${entry.unit} | **${entry.ratio}×** | ${entry.detail?.interval95 ?? '-'} | ${entry.budget} | ${entry.met ? 'met' : 'MISSED'} |`,
    ),
    '',
    '| Round trips | Counted | Unit | Budget | |',
    '|---|---|---|---|---|',
    ...results.roundTrips.map(
      (entry) =>
        `| ${entry.name} | ${entry.value} | ${entry.unit} | <= ${entry.budget} | ${entry.met ? 'met' : 'MISSED'} |`,
    ),
  ];
  const throughput = results.throughput;
  if (throughput) {
    lines.push(
      '',
      `| ${throughput.name} | |`,
      '|---|---|',
      `| Events | ${throughput.events} |`,
      `| Deliveries per second | ${throughput.deliveriesPerSecond} |`,
      `| Latency p50 | ${throughput.p50Ms} ms |`,
      `| Latency p99 | ${throughput.p99Ms} ms |`,
      `| Peak memory (RSS) | ${throughput.peakRssMb} MB |`,
    );
  }
  return lines.join('\n');
};

/** docs/performance.md for these results. */
export const performanceDoc = (results: BenchResults): string => {
  const { machine } = results;
  return `# Performance

<!-- Written by \`npm run bench -- --docs\` from docs/performance.json; do not edit by hand. -->

Figures from one run of \`npm run bench\` (${results.seconds} s), on ${results.when.slice(0, 10)}, on this machine:
${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB of memory, ${machine.os}, Node ${machine.node}.
Source fingerprint \`${results.source}\` (the app's source, lockfile and compiler settings; a test fails
when they change and this document is not regenerated).

The bench measures each figure against a baseline in the same run, with both sides taking turns in
small steps (one delivery each, or batches of checks), so a slow spell of a busy machine touches
both alike; a ratio is the median of the per-round ratios, so it need not equal Ours over
Baseline, which are each side's own median. A ratio is judged before it is rounded for the table;
one past its budget whose 95% interval still reaches back over the budget is measured again, with
more rounds, up to ${REMEASURES} times, before it is called missed. Round trips are counted on the
stand-ins for Zapier's cache (answering as Zapier documents, then as Redis does) and for Svix.
Nothing here asserts a time: the budgets are ratios, and the run reports whether each is met.

${benchTables(results)}

- **Cold start**: loading \`index.js\` in a fresh process, against loading bare zapier-platform-core.
- **CPU per delivery**: perform (verify, decode, map, claim) against the smallest hook trigger
  that only claims each message, both through core's handler in the same app.
- **Verification**: signature checks against a bare HMAC-SHA256 of the same bytes.
- **Package size**: \`build/build.zip\` as \`npm run package\` makes it, against a minimal app on the
  same core.
- **Sandbox**: auction events from a status change to Zap fields, over real HTTP through the Svix
  emulator, the Zapier stand-in and perform.

Regenerate with \`npm run bench -- --docs\` (two to four minutes: longer when a figure near its budget
is measured again; the package measure builds two zips with Node 22 from the npm registry).
`;
};
