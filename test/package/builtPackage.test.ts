import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import { Webhook } from 'standardwebhooks';
import { EndpointOut, EndpointSecretOut } from '../../src/svix/codecs';
import { timeOfSvixId } from '../../src/svix/ksuid';
import { runBare } from '../../src/tools/sandbox/bareProcess';
import { SvixEmulator } from '../../src/tools/sandbox/emulator';
import { newId } from '../../src/tools/sandbox/emulator/store';
import { zapierHeaders } from '../../src/tools/sandbox/hookRunner';
import { PlatformStandIn } from '../../src/tools/sandbox/platform';
import { SvixClient } from '../../src/tools/setup/client';
import { runSetup } from '../../src/tools/setup/setup';
import { SubscribeData } from '../../src/models/inbound';
import { startReceiver, type Receiver } from '../helpers/receiver';

/**
 * The zip Zapier would run (build/build.zip, made by npm run package), as
 * Zapier runs it: unpacked, under Node 22, every invocation through its own
 * zapierwrapper.js handler, with z.cache over core's RPC client to the
 * platform stand-in and the Svix emulator on loopback. One Zap's life.
 */

const ROOT = resolve(__dirname, '../..');
const ZIP = join(ROOT, 'build', 'build.zip');
const TRIGGER = 'triggers.auction_status_changed.operation';
const KEY = 'testsk_builtPackageAccountKey';

/** What the harness answers each event with (see harness.cjs). */
const Answer = t.union([
  t.type({ seq: t.number, ok: t.literal(true), results: t.unknown }),
  t.type({ seq: t.number, ok: t.literal(false), name: t.string, message: t.string }),
]);
type Answer = t.TypeOf<typeof Answer>;
const Ready = t.type({ ready: t.literal(true), node: t.string, dir: t.string });

let child: ChildProcess;
/** The Node 22 binary, and the folder the harness unpacked the zip into. */
let node22 = '';
let unpacked = '';
let emulator: SvixEmulator;
let platform: PlatformStandIn;
let receiver: Receiver;
let client: SvixClient;
let authData: { apiKey: string; appId: string; serverUrl: string };
let zap: SubscribeData;
const secrets: string[] = [];
const waiting = new Map<number, (answer: Answer) => void>();
let seq = 0;

/** The endpoints Svix holds for the Consumer App (one page is plenty here). */
const EndpointList = t.type({ data: t.array(EndpointOut) }, 'ListResponse_EndpointOut_');

/** One invocation of the zip's handler, as the platform makes it. */
const execute = (method: string, bundle: object): Promise<Answer> => {
  const event = {
    command: 'execute',
    method,
    bundle: { authData, ...bundle },
    ...platform.eventFor({ authId: 'built-package', userId: 'someone' }),
  };
  return ask(event);
};

/** Sends one event to the harness and waits for its answer. */
const ask = (event: object): Promise<Answer> => {
  seq += 1;
  const answered = new Promise<Answer>((done) => waiting.set(seq, done));
  child.send({ seq, event });
  return answered;
};

/** The endpoints the emulator holds, read over its HTTP API. */
const endpoints = async (): Promise<EndpointOut[]> =>
  client.decode(
    EndpointList,
    (await client.call({ method: 'GET', path: `/api/v1/app/${authData.appId}/endpoint`, action: 'listing endpoints' }))
      .body,
    'listing endpoints',
  ).data;

const results = async (method: string, bundle: object): Promise<unknown> => {
  const answer = await execute(method, bundle);
  if (!answer.ok) throw new Error(`${answer.name}: ${answer.message}`);
  return answer.results;
};

/** Sends an event through Svix and takes the delivery the receiver got, as Zapier hands it to perform. */
const emit = async (status: string, auctionUuid = 'auction-1'): Promise<{ messageId: string; bundle: object }> => {
  const before = receiver.received.length;
  await client.call({
    method: 'POST',
    path: `/api/v1/app/${authData.appId}/msg`,
    body: {
      eventType: 'AUCTION_STATUS_CHANGE',
      payload: { auctioneerUuid: 'auctioneer-1', auctionUuid, status },
    },
    action: 'sending an event',
  });
  await emulator.idle();
  const delivery = receiver.received[before];
  if (!delivery) throw new Error('the receiver got no delivery');
  const headers = zapierHeaders(delivery.headers);
  const messageId = headers['Http-Svix-Id'] ?? '';
  return { messageId, bundle: deliveryBundle(headers, delivery.body) };
};

const deliveryBundle = (headers: Record<string, string>, content: string) => ({
  subscribeData: zap,
  inputData: {},
  targetUrl: receiver.url,
  rawRequest: { method: 'POST', querystring: '', headers, content },
  cleanedRequest: JSON.parse(content),
});

const countItems = (value: unknown): number => (Array.isArray(value) ? value.length : -1);

beforeAll(async () => {
  if (!existsSync(ZIP)) throw new Error('build/build.zip is missing: run npm run package (npm run test:package does).');
  node22 =
    execFileSync('npx', ['-y', '-p', 'node@22', '--', 'node', '-p', 'process.execPath'], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop() ?? '';
  if (!node22) throw new Error('no Node 22 from the npm registry');
  child = spawn(node22, [join(__dirname, 'harness.cjs'), ZIP], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise<void>((ready, failed) => {
    child.once('message', (message: unknown) => {
      const hello = Ready.decode(message);
      const node = isRight(hello) ? hello.right.node : 'an unknown version';
      if (isRight(hello)) unpacked = hello.right.dir;
      if (node.startsWith('v22.')) ready();
      else failed(new Error(`the harness runs on ${node}, not Node 22`));
    });
    child.once('exit', (code) => failed(new Error(`the harness exited (${code})`)));
  });
  child.on('message', (message: unknown) => {
    const answer = Answer.decode(message);
    if (!isRight(answer)) return;
    waiting.get(answer.right.seq)?.(answer.right);
    waiting.delete(answer.right.seq);
  });
  // A harness that dies answers every waiting invocation, so no test waits for its time-out.
  child.on('exit', (code, signal) => {
    for (const [pending, done] of waiting) {
      done({ seq: pending, ok: false, name: 'HarnessExited', message: `the harness exited (${code ?? signal})` });
    }
    waiting.clear();
  });

  emulator = new SvixEmulator({ apiKey: KEY });
  platform = new PlatformStandIn({ delayMs: 2 });
  const serverUrl = await emulator.start();
  await platform.start();
  receiver = await startReceiver();
  client = new SvixClient({ baseUrl: serverUrl, apiKey: KEY });
  const { appId } = await runSetup({ client, appName: 'Built Package House' });
  authData = { apiKey: KEY, appId, serverUrl };
}, 240_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    // The harness exits when the channel closes; a stuck one is killed.
    if (child.connected) child.disconnect();
    const stuck = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(stuck);
  }
  await receiver?.close();
  await emulator?.stop();
  await platform?.stop();
});

describe('the built package, as Zapier runs it', () => {
  it('answers the definition command with the trigger', async () => {
    const answer = await ask({ command: 'definition' });
    expect(answer.ok).toBe(true);
    expect(JSON.stringify(answer.ok ? answer.results : {})).toContain('"auction_status_changed"');
  });

  it('tests the connection', async () => {
    await expect(results('authentication.test', {})).resolves.toEqual({
      id: authData.appId,
      name: 'Built Package House',
      label: `Built Package House (app_…${authData.appId.slice(-4)})`,
    });
  });

  it('subscribes with two Svix calls (its endpoint, a listing that checks the pace), and learns the cache honours nx', async () => {
    const before = emulator.stats().requests;
    const subscribed = SubscribeData.decode(
      await results(`${TRIGGER}.performSubscribe`, { targetUrl: receiver.url, inputData: {} }),
    );
    if (subscribed._tag !== 'Right') throw new Error('subscribe returned no endpoint');
    zap = subscribed.right;
    // With the event type registered: the endpoint made (the secret is made here), and one listing.
    expect(emulator.stats().requests - before).toBe(2);
    expect(zap).toEqual(
      expect.objectContaining({ id: expect.stringMatching(/^ep_/), secret: expect.stringMatching(/^whsec_/) }),
    );
    expect(zap.zap).toEqual(expect.any(String));
    secrets.push(zap.secret);
    const held = await endpoints();
    expect(held.map(({ id, url }) => ({ id, url }))).toEqual([{ id: zap.id, url: receiver.url }]);
    expect(held[0]?.eventTypes).toEqual(['AUCTION_STATUS_CHANGE']);
  });

  let first: { messageId: string; bundle: object };

  it('runs a signed delivery, with the time of the event', async () => {
    first = await emit('OPEN_FOR_BIDDING');
    const items = await results(`${TRIGGER}.perform`, first.bundle);
    expect(items).toEqual([
      expect.objectContaining({ id: first.messageId, auctionUuid: 'auction-1', status: 'OPEN_FOR_BIDDING' }),
    ]);
    const createdAt = timeOfSvixId(first.messageId) ?? 0;
    expect(items).toEqual([
      expect.objectContaining({
        occurredAt: new Date(Math.floor(createdAt / 1000) * 1000).toISOString().replace('.000Z', '+00:00'),
      }),
    ]);
  });

  it('keeps an integer beyond 2^53 exact (lossless-json is in the package)', async () => {
    const messageId = newId('msg');
    const body = `{"auctioneerUuid":"auctioneer-1","auctionUuid":"auction-3","status":"DRAFT","lotId":1234567890123456789}`;
    const now = new Date();
    const signature = new Webhook(zap.secret.replace(/^whsec_/, '')).sign(messageId, now, body);
    const headers = {
      'Http-Svix-Id': messageId,
      'Http-Svix-Timestamp': String(Math.floor(now.getTime() / 1000)),
      'Http-Svix-Signature': signature,
    };
    await expect(results(`${TRIGGER}.perform`, deliveryBundle(headers, body))).resolves.toEqual([
      expect.objectContaining({ id: messageId, lotId: '1234567890123456789' }),
    ]);
  });

  it('does not run a redelivery', async () => {
    await expect(results(`${TRIGGER}.perform`, first.bundle)).resolves.toEqual([]);
  });

  it('runs 12 simultaneous deliveries of one message exactly once', async () => {
    const { bundle } = await emit('BIDDING_CLOSED');
    const all = await Promise.all(Array.from({ length: 12 }, () => results(`${TRIGGER}.perform`, bundle)));
    expect(all.map(countItems).sort()).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
  });

  it('after an immediate rotation, runs deliveries signed with the new secret and refuses the old one', async () => {
    // Delivered before the rotation, and still waiting in Zapier's queue when it happens.
    const queued = await emit('OPEN_FOR_BIDDING', 'auction-2');
    const path = `/api/v1/app/${authData.appId}/endpoint/${zap.id}/secret`;
    await client.call({ method: 'POST', path: `${path}/rotate`, body: { gracePeriodSeconds: 0 }, action: 'x' });
    secrets.push(
      client.decode(EndpointSecretOut, (await client.call({ method: 'GET', path, action: 'x' })).body, 'x').key,
    );
    const fresh = await emit('LOTS_SOLD');
    await expect(results(`${TRIGGER}.perform`, fresh.bundle)).resolves.toHaveLength(1);

    const messageId = newId('msg');
    const body = JSON.stringify({ auctioneerUuid: 'auctioneer-1', auctionUuid: 'auction-1', status: 'LOTS_SOLD' });
    const now = new Date();
    const signature = new Webhook(zap.secret.replace(/^whsec_/, '')).sign(messageId, now, body);
    const old = deliveryBundle(
      {
        'Http-Svix-Id': messageId,
        'Http-Svix-Timestamp': String(Math.floor(now.getTime() / 1000)),
        'Http-Svix-Signature': signature,
      },
      body,
    );
    const refused = await execute(`${TRIGGER}.perform`, old);
    expect(refused.ok).toBe(false);
    expect(refused.ok ? '' : refused.name).toBe('HaltedError');
    // The queued delivery is genuine: Svix's record confirms it, and it runs.
    await expect(results(`${TRIGGER}.perform`, queued.bundle)).resolves.toEqual([
      expect.objectContaining({ id: queued.messageId, auctionUuid: 'auction-2', status: 'OPEN_FOR_BIDDING' }),
    ]);
  });

  it("in a process of its own, as Zapier's runtime runs it, a cold process learns a new secret and runs the delivery", async () => {
    const path = `/api/v1/app/${authData.appId}/endpoint/${zap.id}/secret`;
    await client.call({ method: 'POST', path: `${path}/rotate`, body: { gracePeriodSeconds: 0 }, action: 'x' });
    const fresh = await emit('CLOSED', 'auction-4');
    const event = {
      command: 'execute',
      method: `${TRIGGER}.perform`,
      bundle: { authData, ...fresh.bundle },
      ...platform.eventFor({ authId: 'built-package', userId: 'someone' }),
    };
    const outcome = await runBare(event, { entry: join(unpacked, 'zapierwrapper.js'), node: node22 });
    expect(outcome).toEqual(
      expect.objectContaining({
        kind: 'answered',
        ok: true,
        results: [expect.objectContaining({ id: fresh.messageId })],
      }),
    );
  });

  it('lists recent events for Test trigger, newest first, and answers as it when run with no delivery', async () => {
    const listed = await results(`${TRIGGER}.performList`, { inputData: {} });
    expect(Array.isArray(listed) ? listed.map((item: unknown) => Reflect.get(Object(item), 'status')) : []).toEqual([
      'CLOSED',
      'LOTS_SOLD',
      'OPEN_FOR_BIDDING',
      'BIDDING_CLOSED',
      'OPEN_FOR_BIDDING',
    ]);
    await expect(results(`${TRIGGER}.perform`, { inputData: {} })).resolves.toEqual(listed);
  });

  it('unsubscribes, leaving its endpoint parked where nothing answers, none Svix delivers to', async () => {
    await expect(
      results(`${TRIGGER}.performUnsubscribe`, { subscribeData: zap, targetUrl: receiver.url, inputData: {} }),
    ).resolves.toEqual({ removed: true });
    const left = await endpoints();
    expect(left.map(({ id, url }) => ({ id, parked: url.startsWith('https://parked.invalid/') }))).toEqual([
      { id: zap.id, parked: true },
    ]);
  });

  it("sent nothing secret to the platform's logs", () => {
    expect(platform.logLines.length).toBeGreaterThan(0);
    const logged = JSON.stringify(platform.logLines);
    for (const secret of [KEY, ...secrets, ...secrets.map((value) => value.replace(/^whsec_/, ''))]) {
      expect(logged).not.toContain(secret);
    }
  });
});
