import app from '../../src';
import { PlatformStandIn, platformInvoker, type Identity, type PlatformOptions } from '../../src/sandbox/platform';
import { TRIGGER_KEY } from '../../src/triggers/auctionStatusChanged';
import { forgetProbedNx } from '../../src/triggers/claim';
import { forgetKnownSecrets } from '../../src/triggers/verify';

/**
 * The app's operations run as Zapier runs them: through core's handler, with
 * z.cache going over core's own RPC client to the platform stand-in (which
 * honours `nx` as Zapier's cache does), not the local tester's mock.
 */

export const IDENTITY: Identity = { authId: 'auth-under-test', userId: 'user-under-test' };

export interface PlatformUnderTest {
  platform: PlatformStandIn;
  invoke: (method: string, bundle: object) => Promise<unknown>;
  perform: (bundle: object) => Promise<unknown>;
  performList: (bundle: object) => Promise<unknown>;
  subscribe: (bundle: object) => Promise<unknown>;
  unsubscribe: (bundle: object) => Promise<unknown>;
  /** The cache calls made so far, oldest first. */
  calls: () => PlatformStandIn['calls'];
  /** As if this were a new process: what the app keeps in memory is forgotten. */
  coldStart: () => void;
}

const operation = (name: string) => `triggers.${TRIGGER_KEY}.operation.${name}`;

/** As if this were a new process: what the app keeps in memory (secrets, what it learnt of the cache) is forgotten. */
const newProcess = (): void => {
  forgetKnownSecrets();
  forgetProbedNx();
};

/**
 * One platform stand-in for a test file (core's log stream keeps the address
 * it first saw), emptied before each test, with the app's memory cleared.
 */
export const usePlatform = (options: PlatformOptions = {}): (() => PlatformUnderTest) => {
  let current: PlatformUnderTest | undefined;
  beforeAll(async () => {
    const platform = new PlatformStandIn(options);
    await platform.start();
    const invoke = platformInvoker({ app, platform, identity: IDENTITY });
    current = {
      platform,
      invoke,
      perform: (bundle) => invoke(operation('perform'), bundle),
      performList: (bundle) => invoke(operation('performList'), bundle),
      subscribe: (bundle) => invoke(operation('performSubscribe'), bundle),
      unsubscribe: (bundle) => invoke(operation('performUnsubscribe'), bundle),
      calls: () => platform.calls,
      coldStart: newProcess,
    };
  });
  beforeEach(() => {
    newProcess();
    current?.platform.clear();
    current?.platform.resetCalls();
  });
  afterAll(async () => {
    await current?.platform.stop();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('usePlatform: only inside a test');
    return current;
  };
};

/** One Zapier process as a test drives it: its perform, through its own copy of core. */
export interface ZapierProcess {
  perform: (bundle: object) => Promise<unknown>;
}

/**
 * Another Zapier process: the app and zapier-platform-core loaded afresh in an
 * isolated module registry, so it shares nothing with the test's own process
 * (no memory of secrets, its own core), only the platform stand-in behind
 * z.cache, as two of Zapier's processes do.
 */
export const anotherProcess = async (
  platform: PlatformStandIn,
  identity: Identity = IDENTITY,
): Promise<ZapierProcess> => {
  let invoke: ((method: string, bundle: object) => Promise<unknown>) | undefined;
  await jest.isolateModulesAsync(async () => {
    const { default: isolatedApp } = await import('../../src');
    const { platformInvoker: isolatedInvoker } = await import('../../src/sandbox/platform');
    invoke = isolatedInvoker({ app: isolatedApp, platform, identity });
  });
  const loaded = invoke;
  if (!loaded) throw new Error('anotherProcess: the app did not load');
  return { perform: (bundle) => loaded(operation('perform'), bundle) };
};
