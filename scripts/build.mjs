// Builds dist/ from src/ only when something it is made from changed since the last build, so that
// `npm start` and `npm run setup` start their own work at once when nothing did. The stamp
// (dist/.build-stamp) takes the time the last successful build began: a file edited during a build
// is newer, and the next run builds again. `--force` always builds. tsc itself runs incrementally
// (its record under dist/, gone with dist/), so a build after a small change is quick too.
import { spawn } from 'node:child_process';
import { clearInterval, setInterval } from 'node:timers';
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(ROOT, 'dist', '.build-stamp');
/** What dist/ is made from. Folders count too: deleting or renaming a file changes theirs. */
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

const newest = (path) => {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs);
};

const stampTime = statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs;
const fresh =
  !process.argv.includes('--force') &&
  stampTime !== undefined &&
  Math.max(...INPUTS.map((input) => newest(join(ROOT, input)))) < stampTime;

if (!fresh) {
  const began = new Date();
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  // Long work says what it is doing and how far it has got; npm test's own build stays quiet.
  const say =
    process.env.npm_lifecycle_event === 'pretest' ? () => undefined : (line) => process.stderr.write(`${line}\n`);
  say('Building the integration from src/ (the first build takes longest; later ones, seconds)…');
  const ticking = setInterval(() => say(`…still building, ${Math.round((Date.now() - began) / 1000)} s`), 5_000);
  // tsconfig.build.json makes the build incremental, with its record in dist/tools/ (not packaged).
  const args = ['-p', 'tsconfig.build.json'];
  const status = await new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, ...args], { cwd: ROOT, stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('exit', (code) => resolve(code ?? 1));
  });
  clearInterval(ticking);
  if (status !== 0) {
    process.stderr.write('The TypeScript build failed (see above); dist/ was not marked as up to date.\n');
    process.exit(status || 1);
  }
  say(`Built in ${Math.round((Date.now() - began) / 1000)} s.`);
  writeFileSync(STAMP, '');
  utimesSync(STAMP, began, began);
}
