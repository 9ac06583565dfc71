import { Svix } from 'svix';
import { auctionStatusChangeEventType, EVENT_TYPE_NAME } from '../../src/svix/eventType';
import { SvixEmulator, type EmulatorOptions } from '../../src/tools/sandbox/emulator';
import { unusedPort } from '../../src/tools/sandbox/net';
import { SvixClient } from '../../src/tools/setup/client';
import { QuestionStopped } from '../../src/tools/cli/askHidden';
import { main, type CliIo } from '../../src/tools/setup/cli';
import { appUidFor, DEFAULT_APP_NAME, runSetup } from '../../src/tools/setup/setup';
import { scripts } from '../../package.json';

/** The consumer set-up (published interface §4) against the Svix emulator. */

const KEY = 'testsk_setupCommandKey42';
let emulator: SvixEmulator;
let url: string;

const start = async (options: Partial<EmulatorOptions> = {}) => {
  emulator = new SvixEmulator({ apiKey: KEY, ...options });
  url = await emulator.start();
};

afterEach(async () => {
  await emulator.stop();
});

const client = () => new SvixClient({ baseUrl: url, apiKey: KEY });

interface Captured {
  code: number;
  out: string;
  err: string;
}

const run = async (argv: string[], env: Record<string, string> = {}): Promise<Captured> => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (line) => out.push(line), err: (line) => err.push(line), env };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
};

describe('runSetup', () => {
  it('creates the app, the event type with the published schema and an endpoint; a second run changes nothing', async () => {
    await start();
    const first = await runSetup({
      client: client(),
      appName: 'Harbour Street Auctions',
      endpointUrl: 'http://127.0.0.1:9/in',
    });
    expect(first).toMatchObject({
      appCreated: true,
      eventType: 'created',
      endpointCreated: true,
      appName: 'Harbour Street Auctions',
    });
    const svix = new Svix(KEY, { serverUrl: url });
    const eventType = await svix.eventType.get(EVENT_TYPE_NAME);
    expect(eventType.schemas).toEqual(auctionStatusChangeEventType.schemas);
    expect(eventType.archived).toBe(false);
    expect((await svix.application.get(first.appId)).uid).toBe(appUidFor('Harbour Street Auctions'));

    const before = emulator.stats();
    const second = await runSetup({
      client: client(),
      appName: 'Harbour Street Auctions',
      endpointUrl: 'http://127.0.0.1:9/in',
    });
    expect(second).toEqual({ ...first, appCreated: false, eventType: 'unchanged', endpointCreated: false });
    const after = emulator.stats();
    expect({ apps: after.apps, endpoints: after.endpoints, eventTypes: after.eventTypes }).toEqual({
      apps: before.apps,
      endpoints: before.endpoints,
      eventTypes: before.eventTypes,
    });
    expect(after).toMatchObject({ apps: 1, endpoints: 1, eventTypes: 1 });
  });

  it('updates an event type whose schema differs, keeping its description', async () => {
    await start();
    const svix = new Svix(KEY, { serverUrl: url });
    await svix.eventType.create({
      name: EVENT_TYPE_NAME,
      description: 'Our own words',
      schemas: { '1': { type: 'object' } },
      archived: true,
    });
    const result = await runSetup({ client: client() });
    expect(result.eventType).toBe('updated');
    const eventType = await svix.eventType.get(EVENT_TYPE_NAME);
    expect(eventType).toMatchObject({
      description: 'Our own words',
      archived: false,
      schemas: auctionStatusChangeEventType.schemas,
    });
    expect((await runSetup({ client: client() })).eventType).toBe('unchanged');
  });

  it('uses a Consumer App made in the dashboard (--app-id), making none, and adds the integration key there', async () => {
    await start();
    const made = await new Svix(KEY, { serverUrl: url }).application.create({ name: 'Made By Hand' });
    const result = await run(['--server-url', url, '--app-id', made.id, '--integration-key'], { SVIX_API_KEY: KEY });
    expect(result.code).toBe(0);
    expect(result.out).toContain(`Using the Consumer App "Made By Hand" (${made.id}), given with --app-id.`);
    expect(result.out).toContain(`Consumer App ID: ${made.id}`);
    expect(emulator.stats().apps).toBe(1);
    const unknown = await run(['--server-url', url, '--app-id', 'app_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9'], {
      SVIX_API_KEY: KEY,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/Check the --app-id option/);
    const both = await run(['--app-id', made.id, '--app-name', 'X'], { SVIX_API_KEY: KEY });
    expect(both.code).toBe(2);
  });

  it('makes no endpoint unless asked', async () => {
    await start();
    const result = await runSetup({ client: client() });
    expect(result.endpointId).toBeUndefined();
    expect(emulator.stats().endpoints).toBe(0);
  });
});

describe('which Consumer App the set-up uses: never a second one unasked, and it says which', () => {
  const svix = () => new Svix(KEY, { serverUrl: url });

  it("uses the environment's only Consumer App without --app-id, makes none, and does not ask to send its ID again", async () => {
    await start();
    const existing = await svix().application.create({ name: 'Harbour Street Auctions' });
    const result = await run(['--server-url', url, '--integration-key'], { SVIX_API_KEY: KEY });
    expect(result.code).toBe(0);
    expect(result.out).toContain(
      `Using the Consumer App "Harbour Street Auctions" (${existing.id}), the only one in this environment.`,
    );
    expect(result.out).toContain(`Consumer App ID: ${existing.id}`);
    expect(result.out).not.toMatch(/Created the Consumer App/);
    expect(result.out).toMatch(/If the auction service does not send to this Consumer App yet, send its support team/);
    expect(emulator.stats().apps).toBe(1);
  });

  it('makes one, with the default name, only when the environment has none, and then asks to send its ID', async () => {
    await start();
    const result = await run(['--server-url', url], { SVIX_API_KEY: KEY });
    expect(result.code).toBe(0);
    expect(result.out).toMatch(
      /Created the Consumer App "Auction Status Webhooks" \(app_\w{27}\), as this environment had none \(--app-name names it\)\./,
    );
    expect(result.out).toMatch(/Next: send the auction service's support team two things/);
    expect(emulator.stats().apps).toBe(1);
    // Run again, it finds the same one.
    expect((await run(['--server-url', url], { SVIX_API_KEY: KEY })).out).toMatch(/the only one in this environment/);
    expect(emulator.stats().apps).toBe(1);
  });

  it('among several, stops without --app-id, listing them, and changes nothing', async () => {
    await start();
    const harbour = await svix().application.create({ name: 'Harbour Street Auctions' });
    const northgate = await svix().application.create({ name: 'Northgate Sales' });
    const result = await run(['--server-url', url, '--integration-key'], { SVIX_API_KEY: KEY });
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/^Run the set-up again with --app-id/);
    expect(result.err).toContain(`${harbour.id}  Harbour Street Auctions`);
    expect(result.err).toContain(`${northgate.id}  Northgate Sales`);
    expect(emulator.stats()).toMatchObject({ apps: 2, eventTypes: 0 });
    expect(await svix().integration.list(harbour.id)).toMatchObject({ data: [] });
  });

  it('among several, uses the one an earlier run made; --app-name makes another only when asked', async () => {
    await start();
    await svix().application.create({ name: 'Other Webhooks' });
    const made = await runSetup({ client: client(), appName: DEFAULT_APP_NAME });
    const again = await run(['--server-url', url], { SVIX_API_KEY: KEY });
    expect(again.code).toBe(0);
    expect(again.out).toContain(`Using the Consumer App "${DEFAULT_APP_NAME}" (${made.appId}), which an earlier run`);
    const asked = await run(['--server-url', url, '--app-name', 'Harbour Street Auctions'], { SVIX_API_KEY: KEY });
    expect(asked.out).toMatch(
      /Created the Consumer App "Harbour Street Auctions" \(app_\w{27}\), named with --app-name\./,
    );
    expect(emulator.stats().apps).toBe(3);
  });

  it('is run by npm without exec, which the shell of Windows does not have', () => {
    expect(scripts.setup).not.toMatch(/\bexec\b/);
    // Each step is a plain `node` command, which cmd.exe and sh both run.
    for (const step of scripts.setup.split('&&')) expect(step.trim()).toMatch(/^node [\w./-]+$/);
  });
});

describe('an integration key given to the set-up', () => {
  it('is named as the wrong kind of key, not a key of the wrong account, before any call', async () => {
    await start();
    const result = await run(['--server-url', url, '--rotate-integration-key'], {
      SVIX_API_KEY: 'integsk_aGivenIntegrationKeyForZapier',
    });
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/^Give the set-up an API Access Key/);
    expect(result.err).toMatch(/this is an integration key \(integsk_…\), the kind Zapier connects with/);
    expect(result.err).toMatch(/--rotate-integration-key/);
    expect(result.err).not.toMatch(/account that owns|another account|wrong account/);
    expect(`${result.out}${result.err}`).not.toContain('aGivenIntegrationKeyForZapier');
    expect(emulator.stats().requests).toBe(0);
  });

  it('a key Svix refuses to register the event type with is for the environment, not the account', async () => {
    await start({
      fault: ({ method, path }) =>
        method === 'POST' && path === '/api/v1/event-type'
          ? {
              kind: 'reply',
              status: 403,
              body: '{"code":"insufficient access","detail":"x"}',
              headers: { 'content-type': 'application/json' },
            }
          : undefined,
    });
    const result = await run(['--server-url', url], { SVIX_API_KEY: KEY });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^Set-up stopped: Run the set-up with an API Access Key from the API Access page/);
    expect(result.err).not.toMatch(/account that owns/);
  });
});

describe('npm run setup (the command)', () => {
  it('prints the Consumer App ID and what to send to support, never the key', async () => {
    await start();
    const result = await run(['--server-url', url, '--endpoint-url', 'http://127.0.0.1:9/in'], { SVIX_API_KEY: KEY });
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Consumer App ID: app_[A-Za-z0-9]{27}/);
    expect(result.out).toMatch(/Endpoint ID: ep_[A-Za-z0-9]{27}/);
    expect(result.out).toContain('support team');
    expect(result.out).toContain('API Access Key');
    expect(`${result.out}${result.err}`).not.toContain(KEY);
  });

  it('takes the key from PROVIDER_API_KEY too, and from --api-key, which scripts may still pass', async () => {
    await start();
    const result = await run(['--server-url', url], { PROVIDER_API_KEY: KEY });
    expect(result.code).toBe(0);
    expect(result.out).not.toContain(KEY);
    const given = await run(['--api-key', KEY, '--server-url', url]);
    expect(given.code).toBe(0);
    expect(`${given.out}${given.err}`).not.toContain(KEY);
  });

  it('asks for the key in a terminal when SVIX_API_KEY is not set, and uses the answer', async () => {
    await start();
    let asked = 0;
    const out: string[] = [];
    const io: CliIo = {
      out: (line) => out.push(line),
      err: (line) => out.push(line),
      env: {},
      askKey: async () => {
        asked += 1;
        return ` ${KEY}\n`;
      },
    };
    expect(await main(['--server-url', url], io)).toBe(0);
    expect(asked).toBe(1);
    expect(out.join('\n')).toMatch(/Consumer App ID: app_/);
    expect(out.join('\n')).not.toContain(KEY);
    // With the key in the environment, it does not ask.
    expect(await main(['--server-url', url], { ...io, env: { SVIX_API_KEY: KEY } })).toBe(0);
    expect(asked).toBe(1);
  });

  it('stops with exit code 2, changing nothing, when the question is stopped (Ctrl+C)', async () => {
    await start();
    const err: string[] = [];
    const io: CliIo = {
      out: () => undefined,
      err: (line) => err.push(line),
      env: {},
      askKey: () => Promise.reject(new QuestionStopped('stopped at the question')),
    };
    expect(await main(['--server-url', url], io)).toBe(2);
    expect(err.join('\n')).toMatch(/stopped before it was given a key/);
    expect(emulator.stats().requests).toBe(0);
  });

  it('without a terminal and without a key: exit code 2, saying to set SVIX_API_KEY, and --api-key shown nowhere', async () => {
    await start();
    const missing = await run(['--server-url', url]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/API Access Key is missing/);
    expect(missing.err).toContain('export SVIX_API_KEY=');
    expect(missing.err).not.toContain('--api-key');
    const help = await run(['--help']);
    expect(help.out).toContain('SVIX_API_KEY');
    expect(help.out).not.toContain('--api-key');
  });

  it('ends with exit code 1 and a plain message for a rejected key, without echoing it', async () => {
    await start();
    const result = await run(['--server-url', url], { SVIX_API_KEY: 'testsk_notTheRightOne' });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/Check that you copied the whole key.*then run the set-up again: Svix refused the key/);
    expect(result.err).not.toMatch(/Reconnect/);
    expect(result.err).not.toContain('testsk_notTheRightOne');
  });

  it('ends with exit code 1 when Svix cannot be reached', async () => {
    await start();
    const result = await run(['--server-url', `http://127.0.0.1:${await unusedPort()}`], { SVIX_API_KEY: KEY });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/Svix could not be reached/);
  });

  it("ends with exit code 1 and Svix's reason on a 4xx", async () => {
    await start({
      fault: ({ method, path }) =>
        method === 'POST' && path === '/api/v1/app'
          ? {
              kind: 'reply',
              status: 403,
              body: '{"code":"forbidden","detail":"Not allowed"}',
              headers: { 'content-type': 'application/json' },
            }
          : undefined,
    });
    const result = await run(['--server-url', url], { SVIX_API_KEY: KEY });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^Set-up stopped: /);
    expect(result.err).toMatch(/403/);
  });

  it('ends with exit code 2 and the usage when the key is missing or a flag is unknown', async () => {
    await start();
    const missing = await run([]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/API Access Key is missing/);
    const unknown = await run(['--colour', 'red'], { SVIX_API_KEY: KEY });
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/Usage: npm run setup/);
  });

  describe('never prints an argument it did not expect (it is usually the key)', () => {
    const STRAY = 'sk_live_strayKeyThatMustNeverBePrinted.eu';
    const printed = (result: Captured) => `${result.out}\n${result.err}`;
    const base = ['--server-url', 'http://127.0.0.1:9', '--app-name', 'Harbour', '--integration-key'];
    const everyPosition = Array.from({ length: base.length + 1 }, (_, at): [string, string[]] => [
      `at position ${at}`,
      [...base.slice(0, at), STRAY, ...base.slice(at)],
    ]);

    it.each<[string, string[]]>([
      ...everyPosition,
      ['alone', [STRAY]],
      ['as the value of a flag', [`--integration-key=${STRAY}`]],
      ['as an option', [`--${STRAY}`]],
      ['as short options', [`-${STRAY}`]],
      ['after an option that lacks its value', ['--api-key', '--integration-key', STRAY]],
    ])('the key %s', async (_where, argv) => {
      await start();
      const result = await run(argv, { npm_config_api_key: 'true' });
      expect(result.code).toBe(2);
      expect(printed(result)).not.toContain(STRAY);
      expect(printed(result)).not.toContain(STRAY.slice(8, 24));
      expect(result.err).toMatch(/Usage: npm run setup/);
    });

    it('says what to do for the common npm mistake: put -- before the options', async () => {
      await start();
      // `npm run setup --api-key sk_live_…`: npm keeps --api-key, and the key is left as an argument.
      const swallowed = await run([STRAY], { npm_config_api_key: 'true' });
      expect(swallowed.err).toMatch(/npm kept --api-key for itself/);
      // What was typed, not a fixed example (#61.3).
      expect(swallowed.err).toContain('as in `npm run setup -- --api-key`');
      // `npm run setup --api-key=sk_live_…`: npm keeps the whole option, value and all.
      const taken = await run([], { npm_config_api_key: STRAY });
      expect(taken.code).toBe(2);
      expect(taken.err).toMatch(/API Access Key is missing/);
      expect(taken.err).toContain('as in `npm run setup -- --api-key`');
      expect(printed(taken)).not.toContain(STRAY);
    });
  });

  it('refuses --integration-key together with --rotate-integration-key, saying what each does, and calls nothing', async () => {
    await start();
    const result = await run(['--server-url', url, '--integration-key', '--rotate-integration-key'], {
      SVIX_API_KEY: KEY,
    });
    expect(result.code).toBe(2);
    expect(result.err).toMatch(
      /--integration-key \(make the key for Zapier, once\) or --rotate-integration-key \(replace it\), not both/,
    );
    expect(emulator.stats().requests).toBe(0);
  });

  it('refuses a plain-http server URL that is not on this machine', async () => {
    await start();
    const result = await run(['--server-url', 'http://api.example.com'], { SVIX_API_KEY: KEY });
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/https/);
  });
});
