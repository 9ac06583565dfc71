import { createServer, type Server } from 'node:http';
import { checksEndpoint, main, reach } from '../src/tools/package/validate';
import { listenOnLoopback, unusedPort } from '../src/tools/sandbox/net';

/**
 * npm run validate decides: Zapier's style checks where Zapier can be reached, the structural checks alone,
 * said plainly, where it cannot. Zapier's CLI is stood in for here; test/validateCli.test.ts runs the real one.
 */

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((closed) => server.close(closed))));
});

/** A stand-in for Zapier on loopback that answers every request, or none (it accepts and stays silent). */
const standIn = async (answers: boolean): Promise<string> => {
  const server = createServer((_request, response) => {
    if (answers) response.end('ok');
  });
  servers.push(server);
  return `http://127.0.0.1:${await listenOnLoopback(server)}`;
};

const validate = async (env: Record<string, string>, exitCode = 0) => {
  const calls: string[][] = [];
  const out: string[] = [];
  const code = await main({
    out: (line) => out.push(line),
    env,
    runCli: (args) => {
      calls.push(args);
      return exitCode;
    },
  });
  return { code, calls, out: out.join('\n') };
};

describe('npm run validate', () => {
  it('asks Zapier where its CLI sends the definition: its default, or the variables the CLI honours', () => {
    expect(checksEndpoint({})).toBe('https://zapier.com/api/platform/cli');
    expect(checksEndpoint({ ZAPIER_BASE_ENDPOINT: 'http://127.0.0.1:9' })).toBe('http://127.0.0.1:9/api/platform/cli');
    expect(checksEndpoint({ ZAPIER_ENDPOINT: 'http://127.0.0.1:9/x', ZAPIER_BASE_ENDPOINT: 'http://a' })).toBe(
      'http://127.0.0.1:9/x',
    );
  });

  it("runs Zapier's style checks too where Zapier answers", async () => {
    const result = await validate({ ZAPIER_BASE_ENDPOINT: await standIn(true) });
    expect(result.calls).toEqual([['validate']]);
    expect(result.out).toBe('');
    expect(result.code).toBe(0);
  });

  it('offline: runs the structural checks only, and says so plainly before and after them', async () => {
    const origin = `http://127.0.0.1:${await unusedPort()}`;
    const result = await validate({ ZAPIER_BASE_ENDPOINT: origin });
    expect(result.calls).toEqual([['validate', '--without-style']]);
    const notice = `Zapier could not be reached from this computer (${origin}: the connection was refused), so its style checks (its publishing checks) did not run: only the structural checks did.`;
    expect(result.out.split('\n').filter((line) => line === notice)).toHaveLength(2);
    expect(result.out).toMatch(/Run npm run validate where Zapier can be reached before publishing\.$/);
    expect(result.code).toBe(0);
  });

  it("ends with the CLI's exit code, whichever checks ran", async () => {
    expect((await validate({ ZAPIER_BASE_ENDPOINT: `http://127.0.0.1:${await unusedPort()}` }, 1)).code).toBe(1);
    expect((await validate({ ZAPIER_BASE_ENDPOINT: await standIn(true) }, 1)).code).toBe(1);
  });

  it('counts any answer as reached, and silence past the wait, or a refused connection, as not', async () => {
    await expect(reach(`${await standIn(true)}/api/platform/cli`)).resolves.toEqual({ ok: true });
    await expect(reach(await standIn(false), 200)).resolves.toEqual({ ok: false, reason: 'no answer in 0.2 s' });
    await expect(reach(`http://127.0.0.1:${await unusedPort()}`, 2_000)).resolves.toEqual({
      ok: false,
      reason: 'the connection was refused',
    });
  });
});
