import { randomBytes, randomUUID } from 'node:crypto';
import { isRight } from 'fp-ts/Either';
import { MessageOut } from '../../src/provider/codecs';
import { EVENT_TYPE_NAME } from '../../src/provider/eventType';
import { requestSettings } from '../../src/provider/request';
import { ProviderEmulator, type Fault, type FaultContext } from '../../src/sandbox/emulator';
import { newId, newSecret } from '../../src/sandbox/emulator/store';
import type { CacheCall, RpcFault } from '../../src/sandbox/platform';
import { ProviderClient } from '../../src/setup/client';
import { runSetup } from '../../src/setup/setup';
import { SubscribeData } from '../../src/triggers/delivery';
import { RULES } from '../../src/triggers/rules';
import { SecretHistory } from '../../src/triggers/secrets';
import { clock } from '../../src/clock';
import { secretHistoryKey } from '../../src/triggers/verify';
import { failure, signedRequest } from './fixtures';
import { IDENTITY, usePlatform, type PlatformUnderTest, type ZapierProcess } from './platform';

/**
 * The world the signature-check suites run in: Zapier as it runs the app
 * (core's handler, z.cache on the platform stand-in) and the provider
 * emulator, with a Consumer App set up and a Zap turned on before each test.
 * The suites are split across files because zapier-platform-core stops a
 * process past 250 invocations once it holds 450 MB, as a test worker that
 * loads several cores comes to.
 */

export interface AuctionEvent {
  id: string;
  payload: { auctioneerUuid: string; auctionUuid: string; status: string };
  /** The body the provider delivers. */
  body: string;
}

/** The provider for a moment unavailable: an empty 503. */
export const UNAVAILABLE: Fault = { kind: 'reply', status: 503, body: '' };

const isSecretRead = ({ method, path }: FaultContext) => method === 'GET' && path.endsWith('/secret');
/** A listing of the Consumer App's messages: how the delivery path reads Svix's record (a window at a time). */
const isRecordRead = ({ method, path }: FaultContext) => method === 'GET' && path.endsWith('/msg');
const realNow = Date.now.bind(Date);

class SecretWorld {
  readonly key = `testsk_${randomBytes(8).toString('hex')}`;
  emulator!: ProviderEmulator;
  client!: ProviderClient;
  authData!: { apiKey: string; appId: string; serverUrl: string };
  /** The Zap turned on before each test. */
  zap!: SubscribeData;
  /** Moves the emulator's clock for payload retention. */
  emulatorClockShift = 0;
  /** A hook each test may set, called for every cache call the platform stand-in answers. */
  zapierFault: ((call: CacheCall) => RpcFault | undefined | void) | undefined;
  /** Provider calls the emulator answered: reads of the endpoint's secret, and listings of the record. */
  readonly calls = { secret: 0, record: 0 };
  /** Faults to answer the next such calls with. */
  readonly faults: { secret: Fault[]; record: Array<Fault | undefined> } = { secret: [], record: [] };

  constructor(readonly zapier: () => PlatformUnderTest) {}

  readonly main: ZapierProcess = { perform: (bundle) => this.zapier().perform(bundle) };

  readonly turnOn = async (targetUrl: string): Promise<SubscribeData> => {
    const subscribed = SubscribeData.decode(
      await this.zapier().subscribe({ authData: this.authData, targetUrl, inputData: {} }),
    );
    if (!isRight(subscribed)) throw new Error('subscribe returned no endpoint');
    return subscribed.right;
  };

  readonly start = async (): Promise<void> => {
    this.calls.secret = 0;
    this.calls.record = 0;
    this.faults.secret = [];
    this.faults.record = [];
    this.emulatorClockShift = 0;
    this.emulator = new ProviderEmulator({
      apiKey: this.key,
      clock: () => Date.now() + this.emulatorClockShift,
      fault: (context) => {
        if (isSecretRead(context)) {
          this.calls.secret += 1;
          return this.faults.secret.shift();
        }
        if (isRecordRead(context)) {
          this.calls.record += 1;
          return this.faults.record.shift();
        }
        return undefined;
      },
      // A read takes a moment, so reads that could overlap would.
      delayMs: (context) => (isSecretRead(context) || isRecordRead(context) ? 20 : undefined),
    });
    const serverUrl = await this.emulator.start();
    this.client = new ProviderClient({ baseUrl: serverUrl, apiKey: this.key });
    const { appId } = await runSetup({ client: this.client });
    this.authData = { apiKey: this.key, appId, serverUrl };
    this.zap = await this.turnOn('http://127.0.0.1:9/hooks/standard/1/');
  };

  /** From now on this side's clock (Date.now, in every process of the test) reads `ms` later. */
  readonly later = (ms: number): void => {
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
  };

  /**
   * The rules' waits pass at once: each moves this side's clock on by what it
   * waits, so a test of what waiting for the allowance costs takes no real time
   * and cannot be hurried or slowed by a busy machine. The clock it returns
   * reads how far it has moved.
   */
  readonly virtualWaits = (): (() => number) => {
    let moved = 0;
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + moved);
    clock.sleep = async (ms: number) => {
      moved += Math.max(0, ms);
      await new Promise((resolve) => setImmediate(resolve));
    };
    return () => moved;
  };

  /** A real auction event in the Consumer App, as the auction service sends it. */
  readonly send = async (extra: Record<string, unknown> = {}): Promise<AuctionEvent> => {
    const payload = { auctioneerUuid: randomUUID(), auctionUuid: randomUUID(), status: 'OPEN_FOR_BIDDING' };
    const answer = await this.client.call({
      method: 'POST',
      path: `/api/v1/app/${this.authData.appId}/msg`,
      body: { eventType: EVENT_TYPE_NAME, payload, ...extra },
      action: 'sending an auction event',
    });
    const { id } = this.client.decode(MessageOut, answer.body, 'sending an auction event');
    return { id, payload, body: JSON.stringify(payload) };
  };

  /** What nobody sent: a made-up message id and a body of a made-up auction. */
  readonly junk = (): AuctionEvent => {
    const payload = { auctioneerUuid: 'forged-auctioneer', auctionUuid: 'forged-auction', status: 'LOTS_SOLD' };
    return { id: newId('msg'), payload, body: JSON.stringify(payload) };
  };

  /** The bundle of a delivery of the event to the Zap, signed now with these secrets (as Zapier queues it). */
  readonly delivery = (event: AuctionEvent, secrets: string[], subscribeData: SubscribeData = this.zap) => ({
    authData: this.authData,
    subscribeData,
    rawRequest: signedRequest(event.body, { msgId: event.id, secrets }),
    inputData: {},
  });

  /** A rotation of the endpoint's secret to a key given here, so the test knows it without reading it. */
  readonly rotate = async (gracePeriodSeconds: number, endpointId = this.zap.id): Promise<string> => {
    const key = newSecret();
    await this.client.call({
      method: 'POST',
      path: `/api/v1/app/${this.authData.appId}/endpoint/${endpointId}/secret/rotate`,
      body: { key, gracePeriodSeconds },
      action: 'rotating the secret',
    });
    return key;
  };

  /** The items a Zap run received for the event: the event's own fields. */
  readonly ranWith = (event: AuctionEvent) => [
    expect.objectContaining({
      id: event.id,
      auctionUuid: event.payload.auctionUuid,
      auctioneerUuid: event.payload.auctioneerUuid,
      status: event.payload.status,
    }),
  ];

  /** An immediate rotation, and a genuine delivery signed with the new secret that teaches it to this process. */
  readonly rotateAndTeach = async (process: ZapierProcess = this.main): Promise<string> => {
    const rotated = await this.rotate(0);
    const taught = await this.send();
    await expect(process.perform(this.delivery(taught, [rotated]))).resolves.toEqual(this.ranWith(taught));
    return rotated;
  };

  /** What the Zap's processes share in z.cache of its endpoint's secrets; a test fails when nothing is there. */
  readonly sharedHistory = (): SecretHistory => {
    const kept = SecretHistory.decode(this.zapier().platform.peek(IDENTITY, secretHistoryKey(this.zap.id)));
    if (!isRight(kept)) throw new Error('no history in z.cache');
    return kept.right;
  };

  /** The cache calls made so far on that shared history, oldest first: all of them, or those of one method. */
  readonly historyCalls = (method?: CacheCall['method']): CacheCall[] =>
    this.zapier()
      .calls()
      .filter((call) => call.key === secretHistoryKey(this.zap.id) && (method === undefined || call.method === method));

  /** Runs the bundles `at` a time, as Zapier's workers take them from its queue; each outcome in order. */
  readonly inBatches = async (bundles: object[], at: number, process: ZapierProcess = this.main) => {
    const outcomes: Array<{ items?: unknown; error?: string }> = [];
    for (let index = 0; index < bundles.length; index += at) {
      const batch = bundles.slice(index, index + at).map((bundle) =>
        process.perform(bundle).then(
          (items) => ({ items }),
          async (error: unknown) => ({ error: (await failure(Promise.reject(error))).name }),
        ),
      );
      outcomes.push(...(await Promise.all(batch)));
    }
    return outcomes;
  };
}

export type { SecretWorld };

/** The world for a test file: set up afresh before each test, and every setting restored after it. */
export const useSecretWorld = (): SecretWorld => {
  // The hook is read when a cache call is answered, after the world exists.
  const zapier = usePlatform({ delayMs: 1, fault: (call) => world.zapierFault?.(call) ?? undefined });
  const world = new SecretWorld(zapier);
  // Some tests wait for the allowance of calls on purpose (seconds each).
  jest.setTimeout(60_000);
  const rulesDefaults = { ...RULES, reads: { ...RULES.reads }, listings: { ...RULES.listings } };
  const clockDefaults = { ...clock };
  const requestDefaults = { ...requestSettings };
  beforeEach(world.start);
  afterEach(async () => {
    world.zapierFault = undefined;
    Object.assign(RULES, {
      ...rulesDefaults,
      reads: { ...rulesDefaults.reads },
      listings: { ...rulesDefaults.listings },
    });
    Object.assign(clock, clockDefaults);
    Object.assign(requestSettings, requestDefaults);
    jest.restoreAllMocks();
    await world.emulator.stop();
  });
  return world;
};
