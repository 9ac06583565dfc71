import { resolve } from 'node:path';
import { SvixEmulator } from '../../src/tools/sandbox/emulator';
import { spawned } from '../helpers/spawned';

/**
 * `npm run setup` exactly as a newcomer runs it, in a child process against
 * the emulator on loopback: with the key in SVIX_API_KEY, nothing printed,
 * npm's own lines included, holds the key.
 */

const ROOT = resolve(__dirname, '../..');
const KEY = 'testsk_fromTheEnvironmentOnly77';

let emulator: SvixEmulator;

afterEach(async () => {
  await emulator.stop();
});

// Not --silent: npm's own lines (the script it runs, with its arguments) must not show the key either.
const npmRunSetup = (args: string[], env: Record<string, string>) =>
  spawned('npm', ['run', 'setup', '--', ...args], {
    cwd: ROOT,
    env: { ...process.env, npm_config_update_notifier: 'false', ...env },
  });

describe('npm run setup, run by npm', () => {
  it('takes the key from SVIX_API_KEY and never prints it', async () => {
    emulator = new SvixEmulator({ apiKey: KEY });
    const url = await emulator.start();
    const { code, printed } = await npmRunSetup(['--server-url', url, '--integration-key'], { SVIX_API_KEY: KEY });
    expect(printed).toMatch(/Consumer App ID: app_/);
    expect(code).toBe(0);
    expect(printed).not.toContain(KEY);
    expect(printed).not.toContain(KEY.slice(7));
  }, 60_000);

  it('without a key and without a terminal: exit code 2, saying how to give the key', async () => {
    emulator = new SvixEmulator({ apiKey: KEY });
    const url = await emulator.start();
    const { code, printed } = await npmRunSetup(['--server-url', url], { SVIX_API_KEY: '', PROVIDER_API_KEY: '' });
    expect(code).toBe(2);
    expect(printed).toContain('export SVIX_API_KEY=');
    expect(emulator.stats().requests).toBe(0);
  }, 60_000);
});
