import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';

/**
 * The package Zapier runs, built without the CLI ever seeing the project's
 * development node_modules (its build copies the whole project first, and
 * with them it dies of EMFILE: zapier/zapier-platform#820). Only what the app
 * needs is staged in a clean folder, production dependencies are installed
 * there from the lockfile, and the CLI builds there. For `npm run package`,
 * `npm run deploy` and the benchmark; never loaded by the app.
 */

/** The project's root: dist/tools/package/ → ../../../ */
export const ROOT = resolve(__dirname, '../../..');

/**
 * A new, empty folder to stage in, outside the project: inside it, Node's
 * module resolution would walk up from the stage into the project's own
 * node_modules, and the build would pack files from there.
 */
export const newStage = (): string => mkdtempSync(join(tmpdir(), 'auction-status-zapier-stage-'));

/** What of dist/ ships: the product's folders and files (src/ less src/tools/), each with its declarations. Anything
 * else (the tools, the build's records, a folder added later) stays out until it is named here. */
export const PRODUCT = [
  'index.js',
  'authentication.js',
  'messages.js',
  'limits.js',
  'models',
  'zapier',
  'svix',
  'fields',
  'delivery',
  'zap',
  'triggers',
];
/** Whether a path of dist/ (relative to it) ships: the product's, or one of their declarations. */
export const ships = (path: string): boolean => {
  const [first = ''] = path.split(sep);
  return path === '' || PRODUCT.includes(first) || PRODUCT.includes(first.replace(/\.d\.ts$/, '.js'));
};

export class PackageFailure extends Error {}

/** Runs a command; a failure carries what it printed. */
export const run = (command: string, args: string[], cwd: string): string => {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  if (result.status !== 0) {
    throw new PackageFailure(`${command} ${args.join(' ')} failed in ${cwd}:\n${result.stderr}${result.stdout}`);
  }
  return result.stdout;
};

/** The project's own CLI, run under Node 22 from the npm registry (the CLI refuses older versions). */
export const zapierCli = (args: string[], cwd: string, root = ROOT): string =>
  run(
    'npx',
    ['-y', '-p', 'node@22', '--', 'node', realpathSync(join(root, 'node_modules/.bin/zapier-platform')), ...args],
    cwd,
  );

const Manifest = t.record(t.string, t.unknown, 'package.json');

/** package.json without scripts (dist/ is built already) or devDependencies. */
export const productionManifest = (root: string): Record<string, unknown> => {
  const decoded = Manifest.decode(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
  if (!isRight(decoded)) throw new PackageFailure('package.json is not a JSON object.');
  const { scripts: _scripts, devDependencies: _dev, ...manifest } = decoded.right;
  return manifest;
};

/**
 * Copies what the app needs into `dir` (emptied first) and installs its production dependencies there, exactly as the
 * lockfile pins them: what npm's cache holds (each tarball checked against the lockfile's hash) is not fetched again.
 */
export const stage = (root: string, dir: string): void => {
  if (!existsSync(join(root, 'dist', 'index.js'))) throw new PackageFailure('dist/ is not built: run npm run build.');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(productionManifest(root), null, 2)}\n`);
  for (const file of ['package-lock.json', 'index.js', '.zapierapprc']) copyFileSync(join(root, file), join(dir, file));
  const dist = join(root, 'dist');
  cpSync(dist, join(dir, 'dist'), {
    recursive: true,
    filter: (source) => ships(relative(dist, source)),
  });
  run('npm', ['ci', '--omit=dev', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], dir);
};

/** Builds `dir` with the CLI, in place (its dependencies are installed), offline. Returns the zip's path. */
export const buildStaged = (dir: string, root = ROOT): string => {
  zapierCli(['build', '--skip-dep-install', '--skip-validation'], dir, root);
  return join(dir, 'build', 'build.zip');
};
