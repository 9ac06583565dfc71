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
  const verdict = (budget: string, met: boolean) => `${budget}, ${met ? 'met' : 'MISSED'}`;
  const lines = [
    '| Measure | Ours / baseline | Ratio (95% interval) | Budget |',
    '|---|---|---|---|',
    ...results.comparisons.map(
      (entry) =>
        `| ${entry.name} | ${entry.ours} / ${entry.baseline} ${entry.unit} | **${entry.ratio}×** (${entry.detail?.interval95 ?? '-'}) | ${verdict(entry.budget, entry.met)} |`,
    ),
    '',
    '| Round trips | Counted | Budget |',
    '|---|---|---|',
    ...results.roundTrips.map(
      (entry) => `| ${entry.name} | ${entry.value} ${entry.unit} | ${verdict(`<= ${entry.budget}`, entry.met)} |`,
    ),
  ];
  const throughput = results.throughput;
  if (throughput) {
    lines.push(
      '',
      `${throughput.name}: ${throughput.events} events, ${throughput.deliveriesPerSecond} deliveries a second, ` +
        `latency p50 ${throughput.p50Ms} ms and p99 ${throughput.p99Ms} ms, peak memory ${throughput.peakRssMb} MB.`,
    );
  }
  return lines.join('\n');
};

/** docs/performance.md for these results. */
export const performanceDoc = (results: BenchResults): string => {
  const { machine } = results;
  return `# Performance

<!-- Written by \`npm run bench -- --docs\` from docs/performance.json; do not edit by hand. -->

One run of \`npm run bench\` (${results.seconds} s) on ${results.when.slice(0, 10)}: ${machine.cpu}, ${machine.cores} cores,
${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node}. Source fingerprint \`${results.source}\` (a test fails
when the source changes and this is not regenerated).

Each figure is a ratio to a baseline measured in the same run, both sides taking turns in small
steps, so a busy machine slows both alike; the ratio is the median of the per-round ratios. One past
its budget whose 95% interval reaches back over it is measured again, up to ${REMEASURES} times. Round
trips are counted on the stand-ins for Zapier's cache and for Svix.

${benchTables(results)}

CPU per delivery: perform (verify, decode, map, claim) against a hook that only claims each message,
both through core's handler. The sandbox sends auction events over real HTTP through the emulator,
the Zapier stand-in and perform.
`;
};
