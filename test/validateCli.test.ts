import { createServer, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { listenOnLoopback, unusedPort } from '../src/tools/sandbox/net';
import { spawned } from './helpers/spawned';

/**
 * npm run validate's built script with Zapier's real CLI under Node 22 (from npm's cache), offline both ways:
 * with Zapier out of reach, and with a stand-in for Zapier's check service on loopback, which the CLI is
 * pointed at by its own variable (ZAPIER_BASE_ENDPOINT). Needs dist/ built (npm run test:e2e builds first).
 */

const ROOT = resolve(__dirname, '..');
let server: Server | undefined;
afterEach(async () => {
  const closing = server;
  server = undefined;
  if (closing) await new Promise((closed) => closing.close(closed));
});

const validate = (zapier: string) =>
  spawned(process.execPath, [join(ROOT, 'dist/tools/package/validate.js')], {
    cwd: ROOT,
    // No Zapier login here: the CLI sends the definition alone, as it does for an integration not registered yet.
    env: { ...process.env, ZAPIER_BASE_ENDPOINT: zapier, ZAPIER_AUTH_LOCATION: join(tmpdir(), 'no-zapierrc-here') },
  });

/** The shape of the check service's answer the CLI reads: one publishing task, for the run to show. */
const CHECKS = {
  passes: [{}],
  errors: { display_label: 'Errors', total_failures: 0, results: [] },
  warnings: {
    display_label: 'Publishing Tasks',
    total_failures: 1,
    results: [
      { type: 'auth', violations: [{ type: 'connectionLabel', results: [{ message: 'Stand-in', tag: 'D003' }] }] },
    ],
  },
  suggestions: { display_label: 'Warnings', total_failures: 0, results: [] },
};

describe('npm run validate, with Zapier’s CLI', () => {
  it('offline: the structural checks, and plainly that the style checks did not run', async () => {
    const { code, printed } = await validate(`http://127.0.0.1:${await unusedPort()}`);
    expect(printed).toContain('This project is structurally sound!');
    expect(printed).toMatch(
      /Zapier could not be reached from this computer .* did not run: only the structural checks did\./,
    );
    expect(printed).not.toMatch(/Running integration checks/);
    expect(code).toBe(0);
  }, 120_000);

  it('where Zapier answers: its style checks too, on the definition it is sent', async () => {
    const checked: string[] = [];
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        if (request.url === '/api/platform/cli/check') {
          checked.push(body);
          response.setHeader('content-type', 'application/json');
          response.end(JSON.stringify(CHECKS));
        } else response.end('{}');
      });
    });
    const { code, printed } = await validate(`http://127.0.0.1:${await listenOnLoopback(server)}`);
    expect(checked).toHaveLength(1);
    expect(checked[0]).toContain('"auction_status_changed"');
    expect(printed).toMatch(/1 checks with publishing warning/);
    expect(printed).toContain('Stand-in (D003)');
    expect(printed).not.toMatch(/could not be reached/);
    expect(code).toBe(0);
  }, 120_000);
});
