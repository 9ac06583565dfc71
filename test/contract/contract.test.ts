import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { main, type ContractIo } from '../../src/tools/contract/cli';
import { CONTRACT_APP_PREFIX, differences, type ContractRun } from '../../src/tools/contract/run';
import { SvixEmulator } from '../../src/tools/sandbox/emulator';
import { unusedPort } from '../../src/tools/sandbox/net';
import { SvixClient } from '../../src/tools/setup/client';

/**
 * `npm run contract`: the same cases against the emulator (as CI runs them),
 * against a Svix "account" reached over HTTP (here `npm start -- --serve`,
 * standing in for one), and stopped half-way with Ctrl+C.
 */

const ROOT = resolve(__dirname, '../..');
const SERVED_KEY = 'testsk_contract_served';
const AppNames = t.type({ data: t.array(t.type({ name: t.string })) }, 'AppNames');

const collecting = (env: NodeJS.ProcessEnv = {}) => {
  const lines: string[] = [];
  const io: ContractIo = { out: (line) => lines.push(line), err: (line) => lines.push(line), env };
  return { io, lines };
};

/** `npm start -- --serve` on a free port, until stopped; its address. */
const serve = async () => {
  const port = await unusedPort();
  const child = spawn(
    'node',
    ['dist/tools/sandbox/cli.js', '--serve', '--port', String(port), '--api-key', SERVED_KEY],
    {
      cwd: ROOT,
    },
  );
  let out = '';
  await new Promise<void>((ready, failed) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('Stop with Ctrl+C')) ready();
    });
    child.once('exit', () => failed(new Error(`the emulator exited: ${out}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    /** The names of the Consumer Apps the served emulator holds. */
    appNames: async (): Promise<string[]> => {
      const client = new SvixClient({ baseUrl: url, apiKey: SERVED_KEY });
      const answer = await client.call({ method: 'GET', path: '/api/v1/app', query: { limit: '250' }, action: 'x' });
      return client.decode(AppNames, answer.body, 'x').data.map((app) => app.name);
    },
    stop: async () => {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
};

describe('npm run contract', () => {
  it('passes against the emulator with no account; --json prints the report as one JSON document', async () => {
    const { io, lines } = collecting();
    expect(await main(['--json'], io)).toBe(0);
    expect(lines).toHaveLength(1);
    const Report = t.type({ ok: t.boolean, runs: t.array(t.type({ calls: t.array(t.type({ call: t.string })) })) });
    const report = Report.decode(JSON.parse(lines[0] ?? ''));
    expect(isRight(report) && report.right.ok).toBe(true);
    expect(isRight(report) && report.right.runs[0]?.calls.length).toBeGreaterThan(40);
  }, 30_000);

  it('asks each question only Svix Cloud answers, printed as a finding (here, what the emulator says), and those a Zap off and on rests on', async () => {
    const { io, lines } = collecting();
    expect(await main([], io)).toBe(0);
    const saw = (question: string) => lines.find((line) => line.startsWith(`  saw   cloud: ${question}: `)) ?? '';
    expect(saw('rate limit: 25 reads of the Consumer App at once')).toMatch(/: no 429 \(statuses 200\)$/);
    expect(saw("an integration key's routes")).toMatch(
      /: read the Consumer App 200; list event types 200; read a message 200; post a message 403; un-archive the event type 403; delete a message content 403; list Consumer Apps 403$/,
    );
    expect(saw('a message in the listing right after it is sent')).toMatch(/: at once$/);
    expect(saw('a message of an archived event type')).toMatch(/: accepted \(202\)$/);
    expect(saw("throttleRate 25 on this account's plan")).toMatch(/: accepted, kept at 25 a second$/);
    expect(saw('payload retention of 1 day, and of 90')).toMatch(/: 1 day: 202; 90 days: 202$/);
    // The emulator answers replay-missing as Svix Cloud does (the open-source server's 404 is its option).
    expect(saw('recover and replay-missing on an endpoint')).toMatch(/: recover 202; replay-missing 202$/);
    // The open-source worker's answer: the manual attempt ends the message's scheduled retries to the endpoint.
    expect(saw('recover of a message still being retried: its scheduled retries after the manual attempt')).toMatch(
      /: recover 202; the manual attempt failed; the scheduled retries ended \(none within [\d.]+ s, the next due [\d.]+ s after the last\)$/,
    );
    expect(saw("a CORS preflight from a browser's origin")).toMatch(/: answers 200, allows origin \*$/);
    // None of them passes or fails the run.
    expect(lines.filter((line) => /FAIL|DIFFERS/.test(line))).toEqual([]);
    // What a Zap turned off and on rests on, which the account and the emulator must answer alike.
    const asked = (question: string) => lines.find((line) => line.startsWith(`  saw   ${question}: `)) ?? '';
    expect(asked('a parked URL (https://parked.invalid/zapier/…) on endpoint create and PATCH')).toMatch(
      /: create 201; PATCH 200$/,
    );
    expect(asked("an attempt after a PATCH of the endpoint's url: where it goes")).toMatch(
      /: the next attempt went to the new URL$/,
    );
    // Read from the attempt listing, whose answers have the contract's shape.
    expect(lines.join('\n')).toMatch(
      /\| GET \/api\/v1\/app\/\{app_id\}\/attempt\/endpoint\/\{ep_id\} +\| 200 +\| ok \(ListResponse_MessageAttemptOut_\)/,
    );
  }, 30_000);

  it('runs against an account over HTTP (the served emulator, its key in SVIX_API_KEY), leaving no Consumer App', async () => {
    const served = await serve();
    try {
      const before = await served.appNames();
      const { io, lines } = collecting({ SVIX_API_KEY: SERVED_KEY, SVIX_SERVER_URL: served.url });
      expect(await main([], io)).toBe(0);
      const out = lines.join('\n');
      expect(out).toContain(`against the Svix account at ${served.url}`);
      expect(out).toMatch(/The same cases against the emulator/);
      // Each open question answered, then the table of every call the account answered.
      expect(out).toMatch(/integration key: may read a message by id: yes/);
      expect(out).toMatch(/integration key: may read the endpoint's secret: yes/);
      expect(out).toMatch(/integration key: may list messages by time window: yes/);
      expect(out).toMatch(/a message whose content was deleted: how Svix answers for it: answers 200 with payload/);
      expect(out).toMatch(/read-after-create lag: a message by id: at once/);
      expect(out).toMatch(/saw +cloud: throttleRate 25 on this account's plan: accepted, kept at 25 a second/);
      expect(out).toMatch(/\| Call +\| Status \| Answer matches the contract +\| ms +\|/);
      expect(out).toMatch(/\| GET \/api\/v1\/app\/\{app_id\}\/msg +\| 200 +\| ok \(ListResponse_MessageOut_\)/);
      expect(out).toMatch(/\| DELETE \/api\/v1\/app\/\{app_id\} +\| 204/);
      expect(out).not.toMatch(/MISMATCH|FAIL/);
      expect(out).toMatch(/Contract suite passed\./);
      expect(out).not.toContain(SERVED_KEY);
      expect(await served.appNames()).toEqual(before);
    } finally {
      await served.stop();
    }
  }, 60_000);

  it('stopped with Ctrl+C half-way, deletes the Consumer App it made and exits 130', async () => {
    const served = await serve();
    try {
      const child = spawn('node', ['dist/tools/contract/cli.js'], {
        cwd: ROOT,
        env: { ...process.env, SVIX_API_KEY: SERVED_KEY, SVIX_SERVER_URL: served.url },
      });
      let out = '';
      await new Promise<void>((started, failed) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString('utf8');
          if (out.includes('created for this run')) started();
        });
        child.once('exit', () => failed(new Error(`the run ended before its Consumer App was made: ${out}`)));
      });
      expect((await served.appNames()).some((name) => name.startsWith(CONTRACT_APP_PREFIX))).toBe(true);
      const exited = once(child, 'exit');
      child.kill('SIGINT');
      const [code] = await exited;
      expect(code).toBe(130);
      expect((await served.appNames()).filter((name) => name.startsWith(CONTRACT_APP_PREFIX))).toEqual([]);
    } finally {
      await served.stop();
    }
  }, 60_000);

  it('stopped with Ctrl+C the moment its Consumer App is made, before the answer comes, still deletes it', async () => {
    // Svix makes the app at once and its answer takes 1.5 s: Ctrl+C comes in between.
    let created: () => void = () => undefined;
    const creating = new Promise<void>((resolve) => (created = resolve));
    const account = new SvixEmulator({
      apiKey: SERVED_KEY,
      delayMs: ({ method, path }) => (method === 'POST' && path === '/api/v1/app' ? (created(), 1_500) : undefined),
    });
    const url = await account.start();
    try {
      const child = spawn('node', ['dist/tools/contract/cli.js'], {
        cwd: ROOT,
        env: { ...process.env, SVIX_API_KEY: SERVED_KEY, SVIX_SERVER_URL: url },
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
      const exited = once(child, 'exit');
      await creating;
      // The request has arrived; its body comes a moment later, and the app is made then.
      for (let turns = 0; turns < 10_000 && account.stats().apps === 0; turns += 1) await new Promise(setImmediate);
      expect(account.stats().apps).toBe(1);
      child.kill('SIGINT');
      const [code] = await exited;
      expect(out).toContain('deleting the Consumer App of this run');
      expect(code).toBe(130);
      expect(account.stats().apps).toBe(0);
    } finally {
      await account.stop();
    }
  }, 60_000);

  it('fails where the account and the emulator answer an open question differently, naming both answers', () => {
    const run = (findings: Record<string, string>): ContractRun => ({
      target: 'account',
      cases: [],
      findings,
      calls: [],
      ok: true,
    });
    const question = 'integration key: may list messages by time window';
    expect(differences(run({ [question]: 'no (refused the key)' }), run({ [question]: 'yes' }))).toEqual([
      `${question}: the account answered "no (refused the key)", the emulator "yes"`,
    ]);
    expect(differences(run({ [question]: 'yes' }), run({ [question]: 'yes' }))).toEqual([]);
    // What only Svix Cloud answers (its plan's pacing, say) is recorded, not compared with the open-source server.
    const pacing = "cloud: throttleRate 25 on this account's plan";
    expect(differences(run({ [pacing]: 'refused (403)' }), run({ [pacing]: 'accepted' }))).toEqual([]);
    // An answer of the account's whose wait ran out settles nothing; one that saw where the retry went does.
    const moved = "an attempt after a PATCH of the endpoint's url: where it goes";
    const unseen = 'not yet seen within 30 s: no attempt after the PATCH (the next retry due 300 s after the last)';
    const emulated = run({ [moved]: 'the next attempt went to the new URL' });
    expect(differences(run({ [moved]: unseen }), emulated)).toEqual([]);
    expect(differences(run({ [moved]: 'the next attempt went to the old URL' }), emulated)).toEqual([
      `${moved}: the account answered "the next attempt went to the old URL", the emulator "the next attempt went to the new URL"`,
    ]);
  });
});
