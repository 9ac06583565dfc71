import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { BARE_MARK } from './bareRunner';

/**
 * Runs one operation in a fresh Node process through bareRunner.js, as
 * Zapier's runtime does (see there), and reads what became of it: an answer
 * (results, or an error's name and message), or a silent exit, which is what
 * the platform makes of an operation whose process drained its event loop
 * before answering.
 */

const Pending = t.type({ ms: t.number, setBy: t.string }, 'PendingTimer');
const Answered = t.intersection([
  t.type({ ok: t.boolean, pending: t.array(Pending), requests: t.number }),
  t.partial({ results: t.unknown, name: t.string, message: t.string }),
]);
const Exited = t.type({ exitedAfterMs: t.number });

export type BareOutcome =
  | {
      kind: 'answered';
      ok: boolean;
      results?: unknown;
      name?: string;
      message?: string;
      /** The ref'd timers still waiting when it answered, each with the file that set it. */
      pending: Array<t.TypeOf<typeof Pending>>;
      /** Requests it made to any host but the platform's (z.cache, logs): its calls to Svix. */
      requests: number;
      /** How long the process took to exit once it had answered. */
      exitedAfterMs?: number;
    }
  | { kind: 'silent'; code: number | null; stderr: string };

export interface BareOptions {
  /** The app's index.js (default: the one beside dist/), or a built zip's zapierwrapper.js. */
  entry?: string;
  /** The Node binary (default: this one). */
  node?: string;
}

/** The compiled sandbox beside this file, or dist/tools/sandbox/ when this runs from its TypeScript source (under jest). */
const HERE = __filename.endsWith('.ts') ? join(__dirname, '..', '..', '..', 'dist', 'tools', 'sandbox') : __dirname;
const RUNNER = join(HERE, 'bareRunner.js');
const APP_ENTRY = join(HERE, '..', '..', '..', 'index.js');

/** The process's environment: as on Zapier, not a test run (core words its errors for production then). */
const environment = (): NodeJS.ProcessEnv => {
  const { NODE_ENV: _testing, JEST_WORKER_ID: _worker, ...rest } = process.env;
  return rest;
};

export const runBare = async (event: object, options: BareOptions = {}): Promise<BareOutcome> => {
  const dir = mkdtempSync(join(tmpdir(), 'bare-'));
  const file = join(dir, 'event.json');
  writeFileSync(file, JSON.stringify(event));
  try {
    const entry = options.entry ?? APP_ENTRY;
    const child = spawn(options.node ?? process.execPath, [RUNNER, entry, file], {
      env: environment(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    const [code] = await once(child, 'close');
    const lines = out
      .split('\n')
      .filter((line) => line.startsWith(BARE_MARK))
      .map((line): unknown => JSON.parse(line.slice(BARE_MARK.length)));
    const answer = lines.map((line) => Answered.decode(line)).find(isRight);
    if (!answer) return { kind: 'silent', code: typeof code === 'number' ? code : null, stderr: err.slice(-2_000) };
    const exited = lines.map((line) => Exited.decode(line)).find(isRight);
    return { kind: 'answered', ...answer.right, ...(exited ? { exitedAfterMs: exited.right.exitedAfterMs } : {}) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
