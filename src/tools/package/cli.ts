import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import { runCommand } from '../cli/runCommand';
import { projectListing, type Listing } from './listing';
import { buildStaged, newStage, PackageFailure, ROOT, stage, zapierCli } from './stage';

/**
 * `npm run package`: builds build/build.zip, the package Zapier runs, from a
 * staged copy of the app (see stage.ts). `npm run deploy`: the same, then
 * `zapier-platform push` from the staged folder. `npm run register`: registers
 * the integration with Zapier once, with its App Directory listing.
 */

/**
 * What `npm run register` runs with Zapier's CLI: the App Directory's title and description, from package.json
 * (listing.ts); the CLI asks for the rest (audience, role, category).
 */
export const registerArgs = (listing: Listing = projectListing()): string[] => [
  'register',
  listing.title,
  '--desc',
  listing.description,
];

const say = (line: string) => process.stdout.write(`${line}\n`);

const AppRc = t.partial({ id: t.union([t.number, t.string]) }, '.zapierapprc');

/** The app's id at Zapier, written to .zapierapprc by `zapier-platform register`. */
export const registeredId = (root: string): string | number | undefined => {
  const decoded = AppRc.decode(JSON.parse(readFileSync(join(root, '.zapierapprc'), 'utf8')));
  return isRight(decoded) ? decoded.right.id : undefined;
};

/** Stages the app in `stage`, builds it there, and copies the zips into the project's build/. */
const packageApp = (root: string, dir: string): void => {
  say(`Staging the app in ${dir} and installing its production dependencies…`);
  stage(root, dir);
  say('Building it with zapier-platform (Node 22)…');
  const zip = buildStaged(dir, root);
  const built = join(root, 'build');
  mkdirSync(built, { recursive: true });
  copyFileSync(zip, join(built, 'build.zip'));
  copyFileSync(join(dir, 'build', 'source.zip'), join(built, 'source.zip'));
  say(`Built ${join(built, 'build.zip')} (${Math.round(statSync(join(built, 'build.zip')).size / 1024)} KiB).`);
};

export const main = async (argv: string[], root = ROOT): Promise<number> => {
  const [command] = argv;
  if (command === 'register') {
    let args: string[];
    try {
      args = registerArgs();
    } catch (error) {
      process.stderr.write(
        `Fix the App Directory listing, then register: ${String(error instanceof Error ? error.message : error)}\n`,
      );
      return 2;
    }
    // Interactive: Zapier's CLI asks for what the listing does not say.
    const cli = realpathSync(join(root, 'node_modules/.bin/zapier-platform'));
    const run = spawnSync('npx', ['-y', '-p', 'node@22', '--', 'node', cli, ...args], {
      cwd: root,
      stdio: 'inherit',
    });
    return run.status ?? 1;
  }
  if (command !== 'package' && command !== 'deploy') {
    process.stderr.write('Usage: node dist/tools/package/cli.js package|deploy|register\n');
    return 2;
  }
  if (command === 'deploy' && registeredId(root) === undefined) {
    process.stderr.write(
      'This integration is not registered with Zapier yet (.zapierapprc has no id). Log in and register it once:\n' +
        '  npx -y -p node@22 -- zapier-platform login\n' +
        '  npm run register\n' +
        'then run npm run deploy again.\n',
    );
    return 1;
  }
  const staged = newStage();
  try {
    packageApp(root, staged);
    if (command === 'deploy') {
      // Push builds again, in place, with Zapier's validation, then uploads.
      say('Pushing the staged app to Zapier…');
      say(zapierCli(['push', '--skip-dep-install'], staged, root));
    }
    return 0;
  } catch (error) {
    if (!(error instanceof PackageFailure)) throw error;
    process.stderr.write(`${command === 'deploy' ? 'Deploy' : 'Packaging'} stopped: ${error.message}\n`);
    return 1;
  } finally {
    rmSync(staged, { recursive: true, force: true });
  }
};

if (require.main === module) runCommand(() => main(process.argv.slice(2)), 'Packaging stopped');
