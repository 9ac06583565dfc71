import { createApp } from '../../src';
import { Runtime } from '../../src/delivery/runtime';
import {
  PlatformStandIn,
  platformInvoker,
  type Identity,
  type PlatformOptions,
} from '../../src/tools/sandbox/platform';
import { TRIGGER_KEY } from '../../src/triggers/auctionStatusChanged';
import { virtualClock } from './clock';

/**
 * The app's operations run as Zapier runs them: through core's handler, with z.cache going over core's own RPC
 * client to the platform stand-in (which honours `nx` as Zapier's cache does), not the local tester's mock. Each
 * process of the app is its own runtime, on a virtual clock (test/helpers/clock.ts).
 */

export const IDENTITY: Identity = { authId: 'auth-under-test', userId: 'user-under-test' };

/** One Zapier process as a test drives it, through core's handler. */
export interface ZapierProcess {
  runtime: Runtime;
  clock: ReturnType<typeof virtualClock>;
  invoke: (method: string, bundle: object) => Promise<unknown>;
  perform: (bundle: object) => Promise<unknown>;
  performList: (bundle: object) => Promise<unknown>;
  subscribe: (bundle: object) => Promise<unknown>;
  unsubscribe: (bundle: object) => Promise<unknown>;
}

export interface PlatformUnderTest extends ZapierProcess {
  platform: PlatformStandIn;
  /** The cache calls made so far, oldest first. */
  calls: () => PlatformStandIn['calls'];
  /** As if this were a new process: a runtime that knows nothing yet. */
  coldStart: () => void;
  /** Another process beside this one, sharing only the platform's cache. */
  anotherProcess: () => ZapierProcess;
}

const operation = (name: string) => `triggers.${TRIGGER_KEY}.operation.${name}`;

/** A process of the app on the stand-in: its own runtime (and so its own memory and clock). */
export const processOn = (platform: PlatformStandIn, identity = IDENTITY): ZapierProcess => {
  const clock = virtualClock();
  const runtime = new Runtime(clock);
  const invoke = platformInvoker({ app: createApp(runtime), platform, identity });
  return {
    runtime,
    clock,
    invoke,
    perform: (bundle) => invoke(operation('perform'), bundle),
    performList: (bundle) => invoke(operation('performList'), bundle),
    subscribe: (bundle) => invoke(operation('performSubscribe'), bundle),
    unsubscribe: (bundle) => invoke(operation('performUnsubscribe'), bundle),
  };
};

/** One platform stand-in for a test file (core's log stream keeps the address it first saw), emptied before each test. */
export const usePlatform = (options: PlatformOptions = {}): (() => PlatformUnderTest) => {
  let platform: PlatformStandIn | undefined;
  let current: PlatformUnderTest | undefined;
  const fresh = (stand: PlatformStandIn): PlatformUnderTest => ({
    ...processOn(stand),
    platform: stand,
    calls: () => stand.calls,
    coldStart: () => void (current = fresh(stand)),
    anotherProcess: () => processOn(stand),
  });
  beforeAll(async () => {
    platform = new PlatformStandIn(options);
    await platform.start();
  });
  beforeEach(() => {
    if (!platform) return;
    platform.clear();
    platform.resetCalls();
    current = fresh(platform);
  });
  afterAll(async () => {
    await platform?.stop();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('usePlatform: only inside a test');
    return current;
  };
};
