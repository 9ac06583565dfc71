import { copyFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import { runCommand } from '../cli/runCommand';
import { BUILD_ZIP, buildStaged, PackageFailure, ROOT, STAGE, stage, zapierCli } from './stage';

/**
 * `npm run package`: builds build/build.zip, the package Zapier runs, from a
 * staged copy of the app (see stage.ts). `npm run deploy`: the same, then
 * `zapier-platform push` from the staged folder.
 */

const say = (line: string) => process.stdout.write(`${line}\n`);

const AppRc = t.partial({ id: t.union([t.number, t.string]) }, '.zapierapprc');

/** The app's id at Zapier, written to .zapierapprc by `zapier-platform register`. */
export const registeredId = (root: string): string | number | undefined => {
  const decoded = AppRc.decode(JSON.parse(readFileSync(join(root, '.zapierapprc'), 'utf8')));
  return isRight(decoded) ? decoded.right.id : undefined;
};

const packageApp = (): void => {
  say(`Staging the app in ${STAGE} and installing its production dependencies…`);
  stage(ROOT, STAGE);
  say('Building it with zapier-platform (Node 22)…');
  const zip = buildStaged(STAGE);
  mkdirSync(dirname(BUILD_ZIP), { recursive: true });
  copyFileSync(zip, BUILD_ZIP);
  copyFileSync(join(STAGE, 'build', 'source.zip'), join(ROOT, 'build', 'source.zip'));
  say(`Built ${BUILD_ZIP} (${Math.round(statSync(BUILD_ZIP).size / 1024)} KiB).`);
};

export const main = async (argv: string[], root = ROOT): Promise<number> => {
  const [command] = argv;
  if (command !== 'package' && command !== 'deploy') {
    process.stderr.write('Usage: node dist/package/cli.js package|deploy\n');
    return 2;
  }
  if (command === 'deploy' && registeredId(root) === undefined) {
    process.stderr.write(
      'This integration is not registered with Zapier yet (.zapierapprc has no id). Log in and register it once:\n' +
        '  npx -y -p node@22 -- zapier-platform login\n' +
        '  npx -y -p node@22 -- zapier-platform register "Auction Status Changed"\n' +
        'then run npm run deploy again.\n',
    );
    return 1;
  }
  try {
    packageApp();
    if (command === 'deploy') {
      say('Pushing the staged app to Zapier…');
      // Push builds again, in place, with Zapier's validation, then uploads.
      copyFileSync(join(ROOT, '.zapierapprc'), join(STAGE, '.zapierapprc'));
      say(zapierCli(['push', '--skip-dep-install'], STAGE));
    }
    return 0;
  } catch (error) {
    if (!(error instanceof PackageFailure)) throw error;
    process.stderr.write(`${command === 'deploy' ? 'Deploy' : 'Packaging'} stopped: ${error.message}\n`);
    return 1;
  }
};

if (require.main === module) runCommand(() => main(process.argv.slice(2)), 'Packaging stopped');
