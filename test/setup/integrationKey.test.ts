import { API_KEY_LABEL } from '../../src/authentication';
import { SvixEmulator } from '../../src/tools/sandbox/emulator';
import { main, type CliIo } from '../../src/tools/setup/cli';
import { ZAPIER_INTEGRATION_NAME } from '../../src/tools/setup/integrationKey';

/** The set-up's integration key for Zapier: made once, kept, replaced on request; the account key never printed. */

const KEY = 'testsk_setupIntegrationKeyAccount';
let emulator: SvixEmulator;
let url: string;

beforeEach(async () => {
  emulator = new SvixEmulator({ apiKey: KEY });
  url = await emulator.start();
});
afterEach(async () => {
  await emulator.stop();
});

const run = async (...flags: string[]) => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (line) => out.push(line), err: (line) => err.push(line), env: { SVIX_API_KEY: KEY } };
  const code = await main(['--server-url', url, ...flags], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
};

const printedKeys = (text: string): string[] => text.match(/integsk_[A-Za-z0-9]+/g) ?? [];
const appIdOf = (text: string): string => /Consumer App ID: (app_[A-Za-z0-9]{27})/.exec(text)?.[1] ?? '';

/** Whether a key may read its Consumer App at Svix. */
const works = async (key: string, appId: string): Promise<boolean> =>
  (await fetch(`${url}/api/v1/app/${appId}`, { headers: { Authorization: `Bearer ${key}` } })).status === 200;

const integrations = async (appId: string) => {
  const answer = await fetch(`${url}/api/v1/app/${appId}/integration`, { headers: { Authorization: `Bearer ${KEY}` } });
  const body: unknown = await answer.json();
  return typeof body === 'object' && body !== null && 'data' in body && Array.isArray(body.data) ? body.data : [];
};

describe('npm run setup -- --integration-key', () => {
  it('makes an integration for Zapier and prints its key once, clearly, with where to paste it', async () => {
    const first = await run('--integration-key');
    expect(first.code).toBe(0);
    const appId = appIdOf(first.out);
    const keys = printedKeys(first.out);
    expect(keys).toHaveLength(1);
    expect(first.out).toMatch(/shown only this once: copy it now/);
    expect(first.out).toContain(`Paste it into the "${API_KEY_LABEL}" field when you connect Zapier`);
    expect(first.out).toMatch(/through a secure channel/);
    // This Svix is not where the key says (a sandbox here; a self-hosted one for real): Zapier must be told.
    expect(first.out).toContain(`Also give Zapier's "Server URL" field ${url}`);
    expect(await integrations(appId)).toEqual([expect.objectContaining({ name: ZAPIER_INTEGRATION_NAME })]);
    // The key works in this Consumer App, and only there.
    expect(await works(keys[0] ?? '', appId)).toBe(true);
    expect(first.out + first.err).not.toContain(KEY);
  });

  it('a second run keeps the key working, does not print it again, and says how to get a new one', async () => {
    const first = await run('--integration-key');
    const [key = ''] = printedKeys(first.out);
    const second = await run('--integration-key');
    expect(second.code).toBe(0);
    expect(printedKeys(second.out)).toEqual([]);
    expect(second.out).toMatch(/cannot be printed again/);
    expect(second.out).toMatch(/--rotate-integration-key/);
    expect(await works(key, appIdOf(second.out))).toBe(true);
    expect(await integrations(appIdOf(second.out))).toHaveLength(1);
  });

  it('--rotate-integration-key replaces the key and says the old one must be reconnected', async () => {
    const first = await run('--integration-key');
    const [old = ''] = printedKeys(first.out);
    const rotated = await run('--rotate-integration-key');
    expect(rotated.code).toBe(0);
    const [fresh = ''] = printedKeys(rotated.out);
    expect(fresh).not.toBe(old);
    expect(rotated.out).toMatch(/previous integration key no longer works: reconnect every Zapier connection/);
    const appId = appIdOf(rotated.out);
    expect(await works(fresh, appId)).toBe(true);
    expect(await works(old, appId)).toBe(false);
    expect(rotated.out + rotated.err).not.toContain(KEY);
  });

  it('--rotate-integration-key on a first run makes the integration and its key', async () => {
    const result = await run('--rotate-integration-key');
    expect(result.code).toBe(0);
    expect(printedKeys(result.out)).toHaveLength(1);
    expect(result.out).not.toMatch(/previous integration key/);
  });

  it('without the option, recommends an integration key and says how to make one', async () => {
    const result = await run();
    expect(result.code).toBe(0);
    expect(printedKeys(result.out)).toEqual([]);
    expect(result.out).toMatch(/Recommended: an integration key/);
    expect(result.out).toMatch(/--integration-key/);
  });

  it('tells the support team to get a separate, revocable key, not the account key itself', async () => {
    const result = await run();
    expect(result.out).toMatch(/Create a separate one on the API Access page .* so you can revoke it/);
  });

  it('keeps its exit codes and wording when the key is refused', async () => {
    const out: string[] = [];
    const env = { SVIX_API_KEY: 'testsk_wrong' };
    const io: CliIo = { out: (line) => out.push(line), err: (line) => out.push(line), env };
    const code = await main(['--server-url', url, '--integration-key'], io);
    expect(code).toBe(1);
    expect(out.join('\n')).toMatch(
      /Check that you copied the whole key.*then run the set-up again: Svix refused the key/,
    );
  });
});
