import { Webhook } from 'standardwebhooks';
import { EndpointSecretOut } from '../../src/svix/codecs';
import { runBare, type BareOutcome } from '../../src/tools/sandbox/bareProcess';
import { SvixEmulator, type Fault, type FaultContext } from '../../src/tools/sandbox/emulator';
import { zapierHeaders } from '../../src/tools/sandbox/hookRunner';
import { PlatformStandIn, type CacheCall, type RpcFault } from '../../src/tools/sandbox/platform';
import { newId, newSecret } from '../../src/tools/sandbox/emulator/store';
import { SvixClient } from '../../src/tools/setup/client';
import { runSetup } from '../../src/tools/setup/setup';
import { SubscribeData } from '../../src/models/inbound';
import { startReceiver, type Receiver } from '../helpers/receiver';

/**
 * Every operation that can wait, each in a fresh Node process as Zapier's
 * runtime (AWS Lambda) runs it: core's handler, z.cache over core's RPC
 * client to the platform stand-in, Svix the emulator (both served from this
 * test's process), and nothing else on the child's event loop. Lambda ends
 * an invocation when the loop drains, answered or not, so each must answer
 * (ran, halted or a plain error), never exit silent; and once it has
 * answered, no timer of its own may still hold the process.
 */

const KEY = 'testsk_bareProcessAccountKey';
const TRIGGER = 'triggers.auction_status_changed.operation';
const IDENTITY = { authId: 'bare-process', userId: 'someone' };

let emulator: SvixEmulator;
let platform: PlatformStandIn;
let receiver: Receiver;
let client: SvixClient;
let authData: { apiKey: string; appId: string; serverUrl: string };
let zap: SubscribeData;

/** One-off faults: the first call each matches meets it, once. */
const svixFaults: Array<{ method: string; path: RegExp; fault: Fault }> = [];
const cacheFaults: Array<{ method: CacheCall['method']; key: RegExp; fault: RpcFault }> = [];

const takeSvixFault = ({ method, path }: FaultContext): Fault | undefined => {
  const at = svixFaults.findIndex((entry) => entry.method === method && entry.path.test(path));
  return at < 0 ? undefined : svixFaults.splice(at, 1)[0]?.fault;
};
const takeCacheFault = ({ method, key }: CacheCall): RpcFault | undefined => {
  const at = cacheFaults.findIndex((entry) => entry.method === method && entry.key.test(key));
  return at < 0 ? undefined : cacheFaults.splice(at, 1)[0]?.fault;
};

const UNAVAILABLE: Fault = { kind: 'reply', status: 503, body: '' };
const THROTTLED: Fault = {
  kind: 'reply',
  status: 429,
  body: '{"code":"rate_limited","detail":"Too many requests"}',
  headers: { 'content-type': 'application/json', 'retry-after': '1' },
};

/** One operation, in a process of its own. */
/** The built app (dist/index.js), or another build's entry in BARE_APP_ENTRY, to compare a commit with this one. */
const entry = process.env.BARE_APP_ENTRY;
const run = (method: string, bundle: object): Promise<BareOutcome> =>
  runBare(
    { command: 'execute', method, bundle: { authData, ...bundle }, ...platform.eventFor(IDENTITY) },
    entry === undefined ? {} : { entry },
  );

/** A delivery as Zapier hands it to perform. */
const deliveryBundle = (headers: Record<string, string>, content: string) => ({
  subscribeData: zap,
  inputData: {},
  targetUrl: receiver.url,
  rawRequest: { method: 'POST', querystring: '', headers, content },
});

/** Sends an auction event through Svix and takes its delivery as Zapier hands it to perform. */
const emit = async (status: string) => {
  const before = receiver.received.length;
  await client.call({
    method: 'POST',
    path: `/api/v1/app/${authData.appId}/msg`,
    body: { eventType: 'AUCTION_STATUS_CHANGE', payload: { auctioneerUuid: 'a-1', auctionUuid: 'u-1', status } },
    action: 'sending an event',
  });
  await emulator.idle();
  const delivery = receiver.received[before];
  if (!delivery) throw new Error('the receiver got no delivery');
  const headers = zapierHeaders(delivery.headers);
  return { messageId: headers['Http-Svix-Id'] ?? '', headers, bundle: deliveryBundle(headers, delivery.body) };
};

/** Rotates the endpoint's secret at once (no grace): deliveries signed before it carry only the old one. */
const rotate = async (): Promise<string> => {
  const path = `/api/v1/app/${authData.appId}/endpoint/${zap.id}/secret`;
  await client.call({ method: 'POST', path: `${path}/rotate`, body: { gracePeriodSeconds: 0 }, action: 'rotating' });
  return client.decode(EndpointSecretOut, (await client.call({ method: 'GET', path, action: 'reading' })).body, 'x')
    .key;
};

/** Core's logger races the log server's answer with a 200 ms timer it never clears: the platform's, not the app's. */
const CORE_LOGGER = /\/zapier-platform-core\/src\/tools\/create-logger\.js$/;

/** An answer, and nothing of the operation's own left waiting once it had answered. */
const expectAnswered = (outcome: BareOutcome): Extract<BareOutcome, { kind: 'answered' }> => {
  if (outcome.kind !== 'answered')
    throw new Error(`the process exited without answering (${outcome.code}): ${outcome.stderr}`);
  expect(outcome.pending.filter((timer) => !CORE_LOGGER.test(timer.setBy))).toEqual([]);
  return outcome;
};
const expectRan = (outcome: BareOutcome, messageId: string): void => {
  const answered = expectAnswered(outcome);
  expect(answered.ok ? answered.results : answered.message).toEqual([expect.objectContaining({ id: messageId })]);
};
const expectPlainError = (outcome: BareOutcome, name = 'AppError'): void => {
  const answered = expectAnswered(outcome);
  expect(answered).toEqual(expect.objectContaining({ ok: false, name }));
};

beforeAll(async () => {
  emulator = new SvixEmulator({ apiKey: KEY, fault: takeSvixFault });
  platform = new PlatformStandIn({ delayMs: 1, fault: takeCacheFault });
  const serverUrl = await emulator.start();
  await platform.start();
  receiver = await startReceiver();
  client = new SvixClient({ baseUrl: serverUrl, apiKey: KEY });
  const { appId } = await runSetup({ client, appName: 'Bare Process House' });
  authData = { apiKey: KEY, appId, serverUrl };
});

afterEach(() => {
  // A fault a situation set up but never met is a situation that did not happen.
  expect({ svixFaults, cacheFaults }).toEqual({ svixFaults: [], cacheFaults: [] });
});

afterAll(async () => {
  await receiver?.close();
  await emulator?.stop();
  await platform?.stop();
});

describe('each operation that waits, alone in a process as Zapier runs it', () => {
  it('subscribe failed by Svix on every try answers with a plain error; after one 5xx, waits, tries again and turns the Zap on', async () => {
    // #59.6: 71c7dce did not try the first call again.
    for (let tries = 0; tries < 3; tries += 1)
      svixFaults.push({ method: 'POST', path: /\/endpoint$/, fault: UNAVAILABLE });
    expectPlainError(await run(`${TRIGGER}.performSubscribe`, { targetUrl: receiver.url, inputData: {} }));
    svixFaults.push({ method: 'POST', path: /\/endpoint$/, fault: UNAVAILABLE });
    const subscribed = expectAnswered(
      await run(`${TRIGGER}.performSubscribe`, { targetUrl: receiver.url, inputData: {} }),
    );
    const decoded = SubscribeData.decode(subscribed.results);
    if (decoded._tag !== 'Right') throw new Error(`subscribe returned no endpoint: ${subscribed.message ?? ''}`);
    zap = decoded.right;
  });

  it('the connection test after a 429 answers that Svix is limiting requests', async () => {
    svixFaults.push({ method: 'GET', path: /^\/api\/v1\/app\/app_[^/]+$/, fault: THROTTLED });
    expectPlainError(await run('authentication.test', {}), 'ThrottledError');
  });

  it('performList after a 5xx answers with a plain error', async () => {
    svixFaults.push({ method: 'GET', path: /\/msg$/, fault: UNAVAILABLE });
    expectPlainError(await run(`${TRIGGER}.performList`, { inputData: {} }));
  });

  it('a cold process learns a new secret from a delivery it signed, and runs it', async () => {
    await rotate();
    const { messageId, bundle } = await emit('OPEN_FOR_BIDDING');
    expectRan(await run(`${TRIGGER}.perform`, bundle), messageId);
  });

  it('the same when Svix first answers the read with 429 and Retry-After', async () => {
    await rotate();
    svixFaults.push({ method: 'GET', path: /\/secret$/, fault: THROTTLED });
    const { messageId, bundle } = await emit('CLOSED');
    expectRan(await run(`${TRIGGER}.perform`, bundle), messageId);
  });

  it('the same when the first read fails (503) and is made again', async () => {
    await rotate();
    svixFaults.push({ method: 'GET', path: /\/secret$/, fault: UNAVAILABLE });
    const { messageId, bundle } = await emit('LOTS_SOLD');
    expectRan(await run(`${TRIGGER}.perform`, bundle), messageId);
  });

  it('the same when Svix first fails the confirmation of its message (503), made again', async () => {
    await rotate();
    svixFaults.push({ method: 'GET', path: /\/msg\/msg_[^/]+$/, fault: UNAVAILABLE });
    const { messageId, bundle } = await emit('CREATED');
    expectRan(await run(`${TRIGGER}.perform`, bundle), messageId);
  });

  it('a claim throttled once is made again, and the Zap runs', async () => {
    cacheFaults.push({ method: 'zcache_set', key: /^seen:/, fault: { kind: 'throttle' } });
    const { messageId, bundle } = await emit('OPEN_FOR_BIDDING');
    expectRan(await run(`${TRIGGER}.perform`, bundle), messageId);
  });

  it('a delivery signed before a rotation runs in a fresh process, which trusts the subscribe’s read 9.5 minutes', async () => {
    const queued = await emit('CLOSED');
    await rotate();
    expectRan(await run(`${TRIGGER}.perform`, queued.bundle), queued.messageId);
  });

  it("a forged delivery halts once Svix's record refutes it", async () => {
    const id = newId('msg');
    const body = JSON.stringify({ auctioneerUuid: 'a-1', auctionUuid: 'u-1', status: 'SOLD' });
    const now = new Date();
    const headers = {
      'Http-Svix-Id': id,
      'Http-Svix-Timestamp': String(Math.floor(now.getTime() / 1000)),
      'Http-Svix-Signature': new Webhook(newSecret().replace(/^whsec_/, '')).sign(id, now, body),
    };
    expectPlainError(await run(`${TRIGGER}.perform`, deliveryBundle(headers, body)), 'HaltedError');
  });
});
