import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { coldStart, deliveryCpu, packageSize, ROOT, roundTrips, sandboxThroughput, type Remeasuring } from './measures';
import { round } from './stats';
import { budgetText, REMEASURES } from './verdict';
import {
  benchTables,
  machineOf,
  performanceDoc,
  sourceFingerprint,
  type BenchResults,
  type Comparison,
} from './report';

/**
 * `npm run bench`: each figure is a median of repeated runs, and each
 * comparison is measured side by side, in alternating rounds, in this run.
 * Prints the tables and writes the figures to bench-results.json; with
 * `--docs`, also writes them to docs/performance.json and docs/performance.md.
 */

const OPTIONS = {
  quick: { type: 'boolean' },
  'skip-package': { type: 'boolean' },
  out: { type: 'string' },
  docs: { type: 'boolean' },
} as const;

const USAGE = 'Options: --quick, --skip-package, --out FILE, --docs.';

/** The options, or why they are wrong. */
const optionsOf = (argv: string[]) => {
  try {
    return parseArgs({ args: argv, options: OPTIONS }).values;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
};

/**
 * Exits 0 when every budget is met; 1 when a figure missed its budget (after
 * being measured again, if it missed by no more than its own noise) or the
 * bench itself failed; 2 when the options are wrong.
 */
export const main = async (argv: string[]): Promise<number> => {
  const values = optionsOf(argv);
  if (typeof values === 'string') {
    process.stderr.write(`${values}\n${USAGE}\n`);
    return 2;
  }
  const quick = values.quick === true;
  if (values.docs && (quick || values['skip-package'])) {
    process.stderr.write('--docs records a full run: leave out --quick and --skip-package.\n');
    return 2;
  }
  const started = Date.now();
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const comparisons: Comparison[] = [];
  const onRemeasure: Remeasuring = (name, judged, attempt) =>
    say(
      `bench: ${name.split(':')[0]} measured ${round(judged.ratio)}× against ${budgetText(
        judged.budget,
      )}, within its noise (95% interval ${round(judged.low)}–${round(judged.high)}×): measuring again (${attempt} of ${REMEASURES})…`,
    );

  // CPU per delivery first, while the heap is small: a heap
  // grown by other measures taxes the side that allocates more. Each round of
  // CPU per delivery swings by several percent (a garbage collection lands on
  // one side), so it takes forty rounds to tell 1.08 from 1.10.
  say('bench: CPU per delivery…');
  comparisons.push(await deliveryCpu(quick ? 8 : 40, quick ? 100 : 200, onRemeasure));
  say('bench: cold start…');
  comparisons.push(await coldStart(quick ? 6 : 21, onRemeasure));
  say('bench: round trips…');
  const trips = await roundTrips();
  if (!values['skip-package']) {
    say('bench: package size (two builds under Node 22)…');
    comparisons.push(packageSize());
  }
  say('bench: sandbox throughput…');
  const throughput = await sandboxThroughput(quick ? 300 : 2_000);

  const seconds = Math.round((Date.now() - started) / 100) / 10;
  const results: BenchResults = {
    when: new Date().toISOString(),
    machine: machineOf(),
    seconds,
    comparisons,
    roundTrips: trips,
    throughput,
    source: sourceFingerprint(ROOT),
  };
  const out = values.out ?? join(ROOT, 'bench-results.json');
  const json = `${JSON.stringify(results, null, 2)}\n`;
  writeFileSync(out, json);
  if (values.docs) {
    writeFileSync(join(ROOT, 'docs/performance.json'), json);
    writeFileSync(join(ROOT, 'docs/performance.md'), performanceDoc(results));
  }
  process.stdout.write(
    `${benchTables(results)}\n\nbench: ${seconds} s, figures in ${out}${values.docs ? ' and docs/performance.md' : ''}\n`,
  );
  return comparisons.every((entry) => entry.met) && trips.every((entry) => entry.met) ? 0 : 1;
};
