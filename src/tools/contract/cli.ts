import { parseArgs } from 'node:util';
import { SvixEmulator, SANDBOX_RETRY_SCHEDULE_MS } from '../sandbox/emulator';
import { serverUrlFor } from '../../svix/serverUrl';
import { randomBytes } from 'node:crypto';
import { differences, runContract, type CallRow, type Cleanup, type ContractRun, type Target } from './run';

/**
 * `npm run contract`: the contract suite against the emulator (started here),
 * or against a real Svix account when SVIX_API_KEY is set in the environment
 * (and SVIX_SERVER_URL, optionally). On an account it also runs against the
 * emulator and fails where the two answer the open questions differently.
 * Ends with one table of every call; `--json` prints the report as JSON.
 */

const USAGE = `Usage: npm run contract [-- --json]
  Without SVIX_API_KEY in the environment: against the emulator, started here.
  With SVIX_API_KEY (and optionally SVIX_SERVER_URL): against that Svix account, in a Consumer App made for the run
  and deleted at its end (also when it fails or is stopped with Ctrl+C). The key is read from the environment only.`;

const table = (rows: readonly CallRow[]): string => {
  const head = ['Call', 'Status', 'Answer matches the contract', 'ms'];
  const cells = rows.map((row) => [row.call, String(row.status), row.schema, String(row.ms)]);
  const widths = head.map((title, column) =>
    Math.max(title.length, ...cells.map((cell) => (cell[column] ?? '').length)),
  );
  const line = (cell: readonly string[]) =>
    `| ${cell.map((text, column) => text.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(head), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n');
};

/**
 * The emulator as the open-source server is: a manual attempt ends a message's scheduled retries (which the
 * sandbox leaves off), and a PATCH reaches the next attempt at once (the API clears the worker's cache). Its
 * retries come on the sandbox's compressed schedule, which the questions about retries wait by.
 */
const emulatorTarget = async (): Promise<{ target: Target; stop: () => Promise<void> }> => {
  const apiKey = `testsk_${randomBytes(12).toString('hex')}`;
  const emulator = new SvixEmulator({ apiKey, manualAttemptEndsRetries: true });
  const baseUrl = await emulator.start();
  return {
    target: { kind: 'emulator', baseUrl, apiKey, retryScheduleMs: SANDBOX_RETRY_SCHEDULE_MS },
    stop: () => emulator.stop(),
  };
};

/** Where a run writes, and the environment it reads its key from (never the command line). */
export interface ContractIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

/**
 * Deletes the run's Consumer App when the run is stopped, then exits 130. The app may exist on Svix before the
 * answer to its creation arrives: the calls in flight are waited for (no new one starts), then it is deleted by
 * the uid chosen before it was made. Svix answers 404 when it was never made.
 */
const onStop = (cleanup: Cleanup, io: ContractIo) => {
  let stopping = false;
  return (signal: NodeJS.Signals) => {
    // Ctrl+C reaches node twice through npm (from the terminal, and forwarded): the first one stops the run.
    if (stopping) return;
    stopping = true;
    io.out(`Stopped (${signal}): deleting the Consumer App of this run.`);
    const { appUid, appId, client, remover } = cleanup;
    const app = appId ?? appUid;
    const action = 'deleting the Consumer App of this run';
    const deleted =
      app && client && remover
        ? client.drain().then(() =>
            remover.call({
              method: 'DELETE',
              path: `/api/v1/app/${encodeURIComponent(app)}`,
              action,
              accept: [404],
            }),
          )
        : undefined;
    void Promise.resolve(deleted).then(
      () => process.exit(130),
      () => {
        io.err(`Could not delete the Consumer App ${app ?? ''} of this run: delete it in Svix's dashboard.`);
        process.exit(130);
      },
    );
  };
};

export const main = async (argv: readonly string[], io: ContractIo): Promise<number> => {
  let json = false;
  try {
    json = parseArgs({ args: [...argv], options: { json: { type: 'boolean' } } }).values.json === true;
  } catch {
    io.err(USAGE);
    return 2;
  }
  const say = (line: string) => (json ? undefined : io.out(line));
  const cleanup: Cleanup = {};
  const stop = onStop(cleanup, io);
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    const apiKey = io.env.SVIX_API_KEY?.trim();
    const runs: ContractRun[] = [];
    let failures: string[] = [];
    if (apiKey) {
      const server = serverUrlFor(apiKey, io.env.SVIX_SERVER_URL);
      if (!server.ok) {
        io.err(`SVIX_SERVER_URL: ${server.problem}`);
        return 2;
      }
      say(`Contract suite against the Svix account at ${server.url}:`);
      const account = await runContract({ kind: 'account', baseUrl: server.url, apiKey }, { say, cleanup });
      say('The same cases against the emulator, to compare the open questions:');
      const emulator = await emulatorTarget();
      const emulated = await runContract(emulator.target, { say }).finally(emulator.stop);
      runs.push(account, emulated);
      failures = differences(account, emulated);
    } else {
      say('Contract suite against the emulator (set SVIX_API_KEY to run it against a Svix account):');
      const emulator = await emulatorTarget();
      runs.push(await runContract(emulator.target, { say, cleanup }).finally(emulator.stop));
    }
    const ok = runs.every((run) => run.ok) && failures.length === 0;
    if (json) {
      io.out(JSON.stringify({ ok, runs, differences: failures }, null, 2));
      return ok ? 0 : 1;
    }
    for (const difference of failures) say(`  DIFFERS  ${difference}`);
    say('');
    say(table(runs[0]?.calls ?? []));
    say('');
    say(ok ? 'Contract suite passed.' : 'Contract suite FAILED: see the lines marked FAIL or DIFFERS above.');
    return ok ? 0 : 1;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
};

if (require.main === module) {
  const io: ContractIo = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
  };
  void main(process.argv.slice(2), io).then((code) => process.exit(code));
}
