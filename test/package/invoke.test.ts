import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { SANDBOX_APP_ID, SERVE_DEFAULTS } from '../../src/tools/sandbox/cli';

/**
 * The README's section on Zapier's CLI, done as it says: the sandbox served
 * with `npm start -- --serve`, `.env` copied from `.env.example`, and
 * `zapier-platform invoke` (Node 22 from the npm registry) testing the
 * connection and running the trigger. In a scratch copy of the project, so
 * no `.env` is left in the working tree.
 */

const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const ZAPIER = ['npx', '-y', '-p', 'node@22', '--', 'zapier-platform'];
const COMMANDS = {
  serve: 'npm start -- --serve',
  env: 'cp .env.example .env',
  authTest: `${ZAPIER.join(' ')} invoke auth test`,
  trigger: `${ZAPIER.join(' ')} invoke trigger auction_status_changed`,
};

let sandbox: ChildProcess | undefined;
let scratch = '';

/** Runs one of the section's Zapier commands in the scratch copy; what it printed, as JSON. */
const invoke = async (command: string): Promise<unknown> => {
  const [program = '', ...args] = command.split(' ');
  const { stdout } = await run(program, args, { cwd: scratch, timeout: 120_000, env: { ...process.env, CI: 'true' } });
  const start = stdout.search(/^[[{]/m);
  if (start < 0) throw new Error(`${command} printed no JSON: ${stdout.slice(0, 500)}`);
  return JSON.parse(stdout.slice(start));
};

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'invoke-'));
  for (const name of ['package.json', 'index.js', '.zapierapprc', '.env.example', 'dist']) {
    cpSync(join(ROOT, name), join(scratch, name), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
  cpSync(join(scratch, '.env.example'), join(scratch, '.env'));
  const [program = '', ...args] = COMMANDS.serve.split(' ');
  // Its own process group, so the build and the server under npm stop together.
  const child = spawn(program, args, { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  sandbox = child;
  await new Promise<void>((ready, failed) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('Stop with Ctrl+C.')) ready();
    });
    child.once('exit', (code) => failed(new Error(`${COMMANDS.serve} exited (${code}): ${out}`)));
  });
}, 180_000);

afterAll(() => {
  if (sandbox?.pid !== undefined && sandbox.exitCode === null) process.kill(-sandbox.pid, 'SIGINT');
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("the README's section on Zapier's CLI", () => {
  it('shows the commands run here, and .env.example holds what the sandbox serves', () => {
    for (const command of Object.values(COMMANDS)) expect(README).toContain(command);
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    expect(example).toContain(`authData_apiKey=${SERVE_DEFAULTS.apiKey}\n`);
    expect(example).toContain(`authData_appId=${SANDBOX_APP_ID}\n`);
    expect(example).toContain(`authData_serverUrl=http://127.0.0.1:${SERVE_DEFAULTS.port}\n`);
  });

  it('invoke auth test: the connection reaches the sandbox’s Consumer App', async () => {
    await expect(invoke(COMMANDS.authTest)).resolves.toEqual({
      id: SANDBOX_APP_ID,
      name: 'Sandbox Auction House',
      label: `Sandbox Auction House (app_…${SANDBOX_APP_ID.slice(-4)})`,
    });
  }, 150_000);

  it('invoke trigger: the Consumer App’s recent auction events, as a Zap receives them', async () => {
    const items = await invoke(COMMANDS.trigger);
    expect(Array.isArray(items) ? items.length : 0).toBeGreaterThan(0);
    expect(items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: expect.stringMatching(/^msg_/),
          eventType: 'AUCTION_STATUS_CHANGE',
          occurredAt: expect.stringMatching(/\+00:00$/),
        }),
      ]),
    );
  }, 150_000);
});
