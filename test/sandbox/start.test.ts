import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { main as setup } from '../../src/tools/setup/cli';
import { SANDBOX_APP_ID } from '../../src/tools/sandbox/cli';
import { EVENT_TYPE_ARCHIVED } from '../../src/zap/endpoint';
import { zapierHeaderName } from '../../src/tools/sandbox/hookRunner';
import { listenOnLoopback, unusedPort } from '../../src/tools/sandbox/net';

/**
 * `npm start` end to end, in a child process exactly as a newcomer runs it
 * (build, then the story), and `npm start -- --serve` with the set-up pointed at it.
 */

const ROOT = resolve(__dirname, '../..');

/** In its own process group, so stopping it stops npm, its shell and node together. */
const npm = (args: string[]) =>
  spawn('npm', ['--silent', ...args], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });

const collect = async (args: string[]): Promise<{ code: number | null; out: string; err: string }> => {
  const child = npm(args);
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const [code] = await once(child, 'exit');
  return { code: typeof code === 'number' ? code : null, out, err };
};

/** Resolves once `npm start -- --serve` says it is ready; rejects if it exits first. */
const untilListening = (child: ReturnType<typeof npm>): Promise<void> =>
  new Promise((ready, failed) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('Stop with Ctrl+C')) ready();
    });
    child.once('exit', () => failed(new Error(`exited before listening: ${out}`)));
  });

/** Whether a server could listen on the port now (nothing holds it). */
const portIsFree = async (port: number): Promise<boolean> => {
  const probe = createServer();
  try {
    await listenOnLoopback(probe, port);
  } catch {
    return false;
  }
  await new Promise<void>((closed) => probe.close(() => closed()));
  return true;
};

/** The key=value pairs of a summary line ("summary: …", "zap life: …"), or of the output's last line. */
const summaryOf = (text: string): Record<string, number> =>
  Object.fromEntries(
    (text.trim().split('\n').pop() ?? '')
      .replace(/^[a-z ]+: /, '')
      .split(' ')
      .map((pair) => pair.split('='))
      .map(([key, value]) => [key ?? '', Number(value)]),
  );

describe('npm start', () => {
  it('says what it is doing while it builds, and how long it took (#61.2)', async () => {
    const child = spawn(process.execPath, ['scripts/build.mjs', '--force'], { cwd: ROOT });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(err).toMatch(
      /^Building the integration from src\/ \(the first build takes longest; later ones, seconds\)…\n/,
    );
    expect(err).toMatch(/Built in \d+ s\.\n$/);
  }, 120_000);

  it('tells the whole story and ends with a machine-readable summary', async () => {
    const { code, out } = await collect(['start', '--', '--events', '6']);
    expect(code).toBe(0);
    const lines = out.trim().split('\n');
    const last = lines[lines.length - 1] ?? '';
    expect(last).toMatch(/^summary: emitted=\d+ delivered=\d+ zap_runs=\d+ filtered=\d+ rejected=\d+( \w+=\d+)*$/);
    const summary = summaryOf(last);
    expect(summary).toMatchObject({
      emitted: 6,
      delivered: 7,
      rejected: 1,
      duplicates: 1,
      doubled: 0,
      failed: 0,
      lost: 0,
      endpoints_left: 0,
    });
    // The runs are what perform returned items for, one per line of fields; every event the story
    // emitted either ran the Zap or had a status the Zap does not want (judged from what was emitted).
    expect(out.match(/▶ Zap run \d+ for msg_/g)?.length).toBe(summary.zap_runs);
    expect((summary.zap_runs ?? 0) + (summary.filtered ?? 0)).toBe(summary.emitted);
    expect(summary.zap_runs).toBeGreaterThan(0);
    expect(out).not.toMatch(/\? no run/);
    // Each Zap run shows its fields; the forged delivery and the redelivery say what became of them.
    // Fields by the labels the Zap editor shows, as the README's field reference names them.
    expect(out).toMatch(/Zap run 1 for msg_[A-Za-z0-9]{27}, fields:\n\s+Auction UUID\s+[0-9a-f-]{36}/);
    expect(out).toMatch(/Status Label\s+(Open For Bidding|Lots Sold)/);
    expect(out).toMatch(/Occurred At\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00/);
    expect(out).not.toMatch(/\boccurredAt\b|\bstatusLabel\b/);
    // A forged signature: the secret is read again (unchanged), and Svix's record has no such event.
    expect(out).toMatch(
      /refused .*Nothing to do unless you sent it: .*Svix's record of your Consumer App has no such event/,
    );
    expect(out).toMatch(/dropped .*already ran/);
    // Words a newcomer can read (#54): which status a filtered event had, no operation names, and a verdict.
    // Each filtered line names its auction, so none reads as one auction going back (#61.3).
    expect(out).toMatch(/filtered msg_\w+ {2}\(auction [0-9a-f]{8} is now [A-Z_]+: a status not chosen in this Zap\)/);
    expect(out).toMatch(/Zapier's store for the app \(where each event's run is claimed, so it runs once\)/);
    expect(out).not.toMatch(/performSubscribe|performUnsubscribe|z\.cache/);
    expect(out).toMatch(/^It works: each event the Zap wants ran once/m);
    // Neither the sandbox key nor an endpoint secret is ever printed.
    expect(out).not.toMatch(/whsec_|sk_sandbox_/);
  }, 60_000);

  it('--archived: AUCTION_STATUS_CHANGE archived after the set-up; with the integration key, the words a person reads; then the Zap on', async () => {
    const { code, out } = await collect(['start', '--', '--archived', '--events', '4']);
    expect(code).toBe(0);
    expect(out).toContain("AUCTION_STATUS_CHANGE archived in Svix's dashboard (archived: true).");
    // What a person connected with an integration key reads, quoted, within the 250 characters Zapier shows.
    const read = /the person reads \((\d+) characters\):\n\s+"([^"\n]+)"/.exec(out);
    expect(read?.[2]).toBe(EVENT_TYPE_ARCHIVED);
    expect(Number(read?.[1])).toBe(EVENT_TYPE_ARCHIVED.length);
    expect(EVENT_TYPE_ARCHIVED.length).toBeLessThanOrEqual(250);
    expect(out).not.toMatch(/throttl|pacing|plan without/i);
    // Then turned on with the API Access Key, whose subscribe un-archived it: events run.
    expect(out).toMatch(/Turning it on made its endpoint in Svix, ep_\w+, sending to /);
    expect(out).toContain('AUCTION_STATUS_CHANGE is live again: the Zap is on.');
    // Every line under its step (#54: the app's log broke the layout), but the verdict and the summary.
    const stray = out.split('\n').filter((line) => line !== '' && !/^(\[\d\/\d\]|\s|It works: |summary: )/.test(line));
    expect(stray).toEqual([]);
    const summary = summaryOf(out);
    expect(summary).toMatchObject({ emitted: 4, doubled: 0, failed: 0, lost: 0, endpoints_left: 0 });
    expect(out).not.toMatch(/whsec_|sk_sandbox_|integsk_/);
  }, 60_000);

  it('--edits: a Zap edited while events flow, in both orders, then off and on again catching up: each event once', async () => {
    const { code, out } = await collect(['start', '--', '--edits']);
    expect(code).toBe(0);
    expect(out).toContain('new version turned on first, at the same address');
    expect(out).toContain('old version turned off first, new address');
    // Where the Zap's endpoint is at each step, and what real time would take (#59.8).
    expect(out).toMatch(/Turned the Zap off: its endpoint is parked \(at parked\.invalid\)/);
    expect(out).toMatch(/turned the Zap on again: its endpoint is live \(pointed at Zapier\)/);
    expect(out).toMatch(/a thousand times faster here/);
    const summary = summaryOf(out);
    expect(summary).toMatchObject({ events: 21, zap_runs: 21, doubled: 0, lost: 0, endpoints_left: 0 });
    // The lines count every event the summary does (#61.3: they showed 17 of 21).
    const counted = [...out.matchAll(/sent (\d+) events|(\d+) events sent|Sent (\d+) events/g)];
    expect(counted.reduce((sum, match) => sum + Number(match[1] ?? match[2] ?? match[3]), 0)).toBe(summary.events);
    expect(out).not.toMatch(/whsec_|sk_sandbox_|integsk_/);
  }, 60_000);

  it('--burst explains its figures: the runs, the pace that sets its time, Zapier’s refusals (#61.2)', async () => {
    const { code, out } = await collect(['start', '--', '--burst', '50', '--zaps', '2']);
    expect(code).toBe(0);
    expect(out).toMatch(
      /100 Zap runs\. Svix paces your Zaps at 25 deliveries a second together, under the 30 Zapier takes/,
    );
    expect(out).toMatch(/take about 4 s/);
    expect(out).toMatch(/Zapier's refusals \(zapier_429 below\): 0, each retried by Svix/);
  }, 60_000);

  it('refuses a bad --events with exit code 2', async () => {
    const { code, err } = await collect(['start', '--', '--events', 'many']);
    expect(code).toBe(2);
    expect(err).toMatch(/--events takes a whole number/);
  }, 60_000);

  it('says to put -- before the options when npm took them (npm start --events 3)', async () => {
    const { code, err } = await collect(['start', '--events', '3']);
    expect(code).toBe(2);
    expect(err).toContain('npm kept --events for itself');
    expect(err).toContain('`npm start -- --events`');
    // `npm start --serve`: nothing is left for the sandbox, which says so rather than run the story.
    const serve = await collect(['start', '--serve']);
    expect(serve.code).toBe(2);
    expect(serve.err).toContain('npm kept --serve for itself');
    expect(serve.out).not.toMatch(/summary:/);
  }, 60_000);

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '--serve stops and frees its port when npm itself is sent %s (kill PID, Ctrl+C)',
    async (signal) => {
      const port = await unusedPort();
      const child = npm(['start', '--', '--serve', '--port', String(port)]);
      try {
        await untilListening(child);
        if (child.pid !== undefined) process.kill(child.pid, signal);
        const deadline = Date.now() + 5_000;
        while (!(await portIsFree(port))) {
          if (Date.now() > deadline) throw new Error(`port ${port} still taken 5 s after ${signal} to npm`);
          await new Promise((wait) => setTimeout(wait, 100));
        }
      } finally {
        // Whatever is left of npm's process group (npm itself may be gone), so a failure leaves nothing running.
        if (child.pid !== undefined) {
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            // nothing left
          }
        }
      }
    },
    60_000,
  );

  it("--serve runs the emulator with the sandbox's Consumer App and a few events, which npm run setup can use, until stopped", async () => {
    const port = await unusedPort();
    const child = npm(['start', '--', '--serve', '--port', String(port), '--api-key', 'testsk_served']);
    try {
      let out = '';
      const listening = await new Promise<string>((found, failed) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString('utf8');
          const match = /listening on (http:\/\/127\.0\.0\.1:\d+)[\s\S]*Stop with Ctrl\+C/.exec(out);
          if (match?.[1]) found(match[1]);
        });
        child.once('exit', () => failed(new Error(`exited before listening: ${out}`)));
      });
      expect(listening).toBe(`http://127.0.0.1:${port}`);
      // It says what listens, and who calls it (#61.3).
      expect(out).toMatch(
        /Svix emulator listening on http:\/\/127\.0\.0\.1:\d+: Zapier's CLI and the set-up call it there/,
      );
      expect(out).toContain(`Consumer App ${SANDBOX_APP_ID}, with 4 auction events`);
      expect(out).toContain(`authData_appId=${SANDBOX_APP_ID}`);
      expect(out).toContain(`authData_serverUrl=${listening}`);
      // A key given on the command line is not printed back.
      expect(out).not.toContain('testsk_served');
      const lines: string[] = [];
      const io = {
        out: (line: string) => lines.push(line),
        err: (line: string) => lines.push(line),
        env: { SVIX_API_KEY: 'testsk_served' },
      };
      expect(await setup(['--server-url', listening], io)).toBe(0);
      expect(lines.join('\n')).toMatch(/Consumer App ID: app_/);
    } finally {
      const exited = once(child, 'exit');
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
  }, 60_000);
});

describe('the Zapier stand-in', () => {
  it('names headers as Zapier hands them to a hook trigger', () => {
    expect(zapierHeaderName('svix-id')).toBe('Http-Svix-Id');
    expect(zapierHeaderName('webhook-signature')).toBe('Http-Webhook-Signature');
    expect(zapierHeaderName('CONTENT-TYPE')).toBe('Http-Content-Type');
  });
});
