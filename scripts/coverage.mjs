// npm run coverage: which branches (and functions) of the delivery path the CI sweep of the simulation runs, and,
// with --tests, which tests reach those it does not. The sweep runs on a build of its own, with source maps inline,
// under Node's own coverage (NODE_V8_COVERAGE), and c8 maps it back to src/; each unit test file runs alone under
// jest's V8 coverage, and the memory flood of test/delivery/memory.test.ts as the sweep does. The builds differ (tsc,
// swc), so a branch is matched to a test by its line: by its place among the line's branches where both count as
// many on it, else only a test that runs every branch of the line reaches it.
//   npm run coverage -- [--seeds 2001-2008] [--tests]
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const { Report } = require('c8');
const libCoverage = require('istanbul-lib-coverage');

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'coverage', 'delivery');
/** The delivery path: its machines, driver and runtime, the trigger's perform, and the ports it waits on. */
const FILES = [
  'src/delivery/**/*.ts',
  'src/triggers/auctionStatusChanged.ts',
  'src/triggers/outdated.ts',
  'src/zapier/cache.ts',
  'src/zapier/clock.ts',
];
/** The tests that may reach what the sweep does not: the unit tests of the path and of its trigger. */
const TEST_DIRS = ['test/delivery', 'test/triggers', 'test/reliability'];
/** The memory flood as test/delivery/memory.test.ts runs it, within its limits. */
const FLOOD = '--endpoints 30 --junk 2 --pages 2 --payload-bytes 200 --limit-endpoints 10 --limit-bytes 100000';
const NODE_22 = ['-y', '--prefer-offline', '-p', 'node@22', '--'];

const { values } = parseArgs({ options: { seeds: { type: 'string' }, tests: { type: 'boolean' } } });
const seeds = values.seeds ?? '2001-2008';

const run = (command, args, env = {}) => {
  const { status } = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
  if (status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${status}`);
};

/** What V8 recorded under `directory`, mapped back to the delivery path's sources. */
const v8Map = (directory) =>
  new Report({
    tempDirectory: directory,
    reporter: [],
    include: FILES,
    excludeAfterRemap: true,
    src: [ROOT],
  }).getCoverageMapFromAllCoverageFiles();

/** Each line's branches and functions (V8 reports no branch inside a function never called), in the order they
 * start, each with whether it ran: `file:line` → [{ column, ran }]. */
const armsByLine = (map) => {
  const lines = new Map();
  for (const file of map.files()) {
    const { branchMap, b, fnMap, f } = map.fileCoverageFor(file).data;
    const branches = Object.entries(branchMap).flatMap(([id, { locations, loc }]) =>
      (locations.length > 0 ? locations : [loc]).map((at, arm) => ({ at: at.start, ran: (b[id]?.[arm] ?? 0) > 0 })),
    );
    const functions = Object.entries(fnMap).map(([id, { loc }]) => ({ at: loc.start, ran: (f[id] ?? 0) > 0 }));
    for (const { at, ran } of [...branches, ...functions]) {
      const key = `${relative(ROOT, file)}:${at.line}`;
      lines.set(key, [...(lines.get(key) ?? []), { column: at.column, ran }]);
    }
  }
  for (const arms of lines.values()) arms.sort((x, y) => x.column - y.column);
  return lines;
};

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
// A build of its own, with source maps, so that dist/ (and the package made from it) stays without them.
const tsconfig = join(OUT, 'tsconfig.json');
const compilerOptions = { outDir: 'dist', inlineSourceMap: true, sourceMap: false, declaration: false };
writeFileSync(tsconfig, JSON.stringify({ extends: relative(OUT, join(ROOT, 'tsconfig.build.json')), compilerOptions }));
const tsc = require.resolve('typescript/bin/tsc');
run(process.execPath, [tsc, '-p', tsconfig, '--tsBuildInfoFile', join(OUT, 'dist', '.tsbuildinfo')]);
const sweep = ['node', join(OUT, 'dist', 'sim', 'cli.js'), '--seeds', seeds, '--setting', 'all', '--quiet'];
run('npx', [...NODE_22, ...sweep], { NODE_V8_COVERAGE: join(OUT, 'v8') });
const swept = armsByLine(await v8Map(join(OUT, 'v8')));

/** Per test: its arms by line. */
const tested = new Map();
if (values.tests) {
  // The suites npm test runs: those of npm run test:e2e run the built project in child processes.
  const { E2E } = require('../jest.config.js');
  const tests = TEST_DIRS.flatMap((dir) =>
    readdirSync(join(ROOT, dir))
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => `${dir}/${name}`),
  ).filter((test) => !E2E.includes(test));
  for (const test of tests) {
    const directory = join(OUT, 'jest', test.replace(/[/.]/g, '_'));
    const collect = FILES.flatMap((file) => ['--collectCoverageFrom', file]);
    const coverage = [
      '--coverage',
      '--coverageProvider=v8',
      '--coverageReporters=json',
      '--coverageDirectory',
      directory,
    ];
    run('npx', [...NODE_22, 'jest', test, '--silent', ...coverage, ...collect]);
    const json = JSON.parse(readFileSync(join(directory, 'coverage-final.json'), 'utf8'));
    tested.set(test, armsByLine(libCoverage.createCoverageMap(json)));
  }
  const flood = [join(OUT, 'dist', 'bench', 'memory.js'), '--json', ...FLOOD.split(' ')];
  run(process.execPath, ['--expose-gc', ...flood], { NODE_V8_COVERAGE: join(OUT, 'v8-flood') });
  tested.set('test/delivery/memory.test.ts', armsByLine(await v8Map(join(OUT, 'v8-flood'))));
}

/** The tests that run the `index`th of a line's arms, as the sweep counts them. */
const reachedBy = (key, index, count) =>
  [...tested].flatMap(([test, lines]) => {
    const arms = lines.get(key) ?? [];
    const ran = arms.length === count ? arms[index]?.ran : arms.length > 0 && arms.every((arm) => arm.ran);
    return ran ? [test] : [];
  });

const lines = [`Branches and functions of the delivery path the sweep (seeds ${seeds} of every setting) runs:`];
const unreached = [];
const files = new Map();
for (const [key, arms] of swept) {
  const [file, line] = key.split(':');
  const counts = files.get(file) ?? { ran: 0, all: 0 };
  files.set(file, { ran: counts.ran + arms.filter((arm) => arm.ran).length, all: counts.all + arms.length });
  const source = (readFileSync(join(ROOT, file), 'utf8').split('\n')[Number(line) - 1] ?? '').trim().slice(0, 90);
  arms.forEach(({ column, ran }, index) => {
    if (ran) return;
    const by = reachedBy(key, index, arms.length);
    const tests = values.tests ? `\n      ${by.length > 0 ? `reached by ${by.join(', ')}` : 'reached by no test'}` : '';
    unreached.push({ file, line: Number(line), text: `  ${key}:${column + 1} ${source}${tests}` });
  });
}
for (const [file, { ran, all }] of [...files].sort())
  lines.push(`  ${file}: ${ran} of ${all} (${((100 * ran) / Math.max(1, all)).toFixed(1)}%)`);
unreached.sort((x, y) => x.file.localeCompare(y.file) || x.line - y.line);
lines.push(
  `Branches and functions the sweep does not run (${unreached.length}):`,
  ...unreached.map(({ text }) => text),
);
process.stdout.write(`${lines.join('\n')}\n`);
