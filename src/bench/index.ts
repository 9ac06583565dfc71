import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  coldStart,
  deliveryCpu,
  packageSize,
  ROOT,
  roundTrips,
  sandboxThroughput,
  verification,
  type Comparison,
  type RoundTrips,
  type Throughput,
} from './measures';

/**
 * `npm run bench`: each figure is a median of repeated runs, and each
 * comparison is measured side by side, in alternating rounds, in this run.
 * Prints a table and writes the figures to bench-results.json.
 */

const table = (comparisons: Comparison[], trips: RoundTrips[], throughput: Throughput | undefined): string => {
  const rows = comparisons.map(
    (entry) =>
      `| ${entry.name} | ${entry.ours} | ${entry.baseline} | ${entry.unit} | **${entry.ratio}×** | ${entry.budget} | ${entry.met ? 'met' : 'MISSED'} |`,
  );
  const lines = ['| Measure | Ours | Baseline | Unit | Ratio | Budget | |', '|---|---|---|---|---|---|---|', ...rows];
  lines.push(
    '',
    '| Round trips | Counted | Unit | Budget | |',
    '|---|---|---|---|---|',
    ...trips.map(
      (entry) =>
        `| ${entry.name} | ${entry.value} | ${entry.unit} | <= ${entry.budget} | ${entry.met ? 'met' : 'MISSED'} |`,
    ),
  );
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

export const main = async (argv: string[]): Promise<number> => {
  const { values } = parseArgs({
    args: argv,
    options: { quick: { type: 'boolean' }, 'skip-package': { type: 'boolean' }, out: { type: 'string' } },
  });
  const quick = values.quick === true;
  const started = Date.now();
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const comparisons: Comparison[] = [];

  // Verification first, while the heap is small: the tester keeps every
  // invocation's bundle, and a big heap would tax the allocating side more.
  say('bench: verification…');
  const verified = await verification(quick ? 5 : 31, quick ? 10_000 : 20_000);
  say('bench: cold start…');
  comparisons.push(await coldStart(quick ? 6 : 21));
  say('bench: round trips…');
  const trips = await roundTrips();
  say('bench: CPU per delivery…');
  comparisons.push(await deliveryCpu(quick ? 4 : 10, quick ? 100 : 200));
  comparisons.push(verified);
  if (!values['skip-package']) {
    say('bench: package size (two builds under Node 22)…');
    comparisons.push(packageSize());
  }
  say('bench: sandbox throughput…');
  const throughput = await sandboxThroughput(quick ? 300 : 2_000);

  const seconds = Math.round((Date.now() - started) / 100) / 10;
  const results = {
    when: new Date().toISOString(),
    node: process.version,
    cpus: (await import('node:os')).cpus().length,
    seconds,
    comparisons,
    roundTrips: trips,
    throughput,
  };
  const out = values.out ?? join(ROOT, 'bench-results.json');
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${table(comparisons, trips, throughput)}\n\nbench: ${seconds} s, figures in ${out}\n`);
  return comparisons.every((entry) => entry.met) && trips.every((entry) => entry.met) ? 0 : 1;
};
