import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../cli/runCommand';
import { ROOT } from './stage';

/**
 * `npm run validate`: Zapier's checks of the definition, with its CLI under Node 22. The structural checks run
 * on this computer; the style checks (the publishing checks of Zapier's integration check reference: D003, D004,
 * M002…) run on Zapier's servers. They run wherever Zapier can be reached, and the run says plainly when they
 * could not: a run that only checked the structure must not read as one that checked everything.
 */

export type Env = Record<string, string | undefined>;

/** Where Zapier's CLI sends the definition for its style checks: its default, or the variables it honours. */
export const checksEndpoint = (env: Env): string =>
  env.ZAPIER_ENDPOINT ?? `${env.ZAPIER_BASE_ENDPOINT ?? 'https://zapier.com'}/api/platform/cli`;

/** How long to wait for Zapier to answer at all before saying it cannot be reached. */
const REACH_TIMEOUT_MS = 5_000;

export type Reach = { ok: true } | { ok: false; reason: string };

/** Whether Zapier answers: any HTTP answer counts; no connection, or none in time, is why not, in a few words. */
export const reach = async (endpoint: string, timeoutMs = REACH_TIMEOUT_MS): Promise<Reach> => {
  try {
    await fetch(new URL(endpoint).origin, { method: 'HEAD', signal: AbortSignal.timeout(timeoutMs) });
    return { ok: true };
  } catch (error) {
    // Read by shape: fetch's errors may come from another realm (a test's), where instanceof Error fails.
    const field = (value: unknown, key: string): unknown =>
      typeof value === 'object' && value !== null && key in value ? Reflect.get(value, key) : undefined;
    const code = String(field(field(error, 'cause'), 'code') ?? '');
    const reason =
      field(error, 'name') === 'TimeoutError'
        ? `no answer in ${timeoutMs / 1000} s`
        : code === 'ECONNREFUSED'
          ? 'the connection was refused'
          : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
            ? 'its address could not be found: this computer may be offline'
            : `the connection failed${code ? ` (${code})` : ''}`;
    return { ok: false, reason };
  }
};

export interface ValidateIo {
  out: (line: string) => void;
  env: Env;
  /** Runs Zapier's CLI with these arguments, its output shown as it comes; answers its exit code. */
  runCli: (args: string[]) => number;
}

export const main = async (io: ValidateIo): Promise<number> => {
  const endpoint = checksEndpoint(io.env);
  const zapier = await reach(endpoint);
  if (zapier.ok) return io.runCli(['validate']);
  const notice = `Zapier could not be reached from this computer (${new URL(endpoint).origin}: ${zapier.reason}), so its style checks (its publishing checks) did not run: only the structural checks did.`;
  io.out(notice);
  const code = io.runCli(['validate', '--without-style']);
  io.out('');
  io.out(notice);
  io.out('Run npm run validate where Zapier can be reached before publishing.');
  return code;
};

/** The project's own Zapier CLI under Node 22 from the npm registry (the CLI refuses older versions). */
const runZapierCli = (args: string[]): number =>
  spawnSync(
    'npx',
    [
      '-y',
      '--prefer-offline',
      '-p',
      'node@22',
      '--',
      'node',
      realpathSync(join(ROOT, 'node_modules/.bin/zapier-platform')),
      ...args,
    ],
    { cwd: ROOT, stdio: 'inherit', env: { ...process.env, npm_config_update_notifier: 'false' } },
  ).status ?? 1;

if (require.main === module) {
  runCommand(
    () => main({ out: (line) => process.stdout.write(`${line}\n`), env: process.env, runCli: runZapierCli }),
    'Validation stopped',
  );
}
