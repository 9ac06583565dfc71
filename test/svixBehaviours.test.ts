import { randomBytes } from 'node:crypto';
import * as t from 'io-ts';
import app from '../src';
import { THIS_ZAP_DISABLED } from '../src/zap/endpoint';
import { EndpointOut, EventTypeOut } from '../src/svix/codecs';
import { EVENT_TYPE_NAME } from '../src/svix/eventType';
import { EVENT_TYPE_ARCHIVED } from '../src/zap/endpoint';
import { AuctionService } from '../src/tools/sandbox/auctions';
import { SvixEmulator, type EmulatorOptions } from '../src/tools/sandbox/emulator';
import { HookRunner } from '../src/tools/sandbox/hookRunner';
import { PlatformStandIn, platformInvoker } from '../src/tools/sandbox/platform';
import { SvixClient } from '../src/tools/setup/client';
import { runSetup } from '../src/tools/setup/setup';
import { errorDetails } from './helpers/fixtures';

/**
 * The app meets what Svix's server does where a person feels it, against the emulator that follows the server
 * (test/sandbox/emulator.fidelity.test.ts): an archived AUCTION_STATUS_CHANGE, and a Zap's endpoint that Svix
 * disabled after its deliveries failed for days.
 */

const ACCOUNT_KEY = `testsk_${randomBytes(8).toString('hex')}`;
let emulator: SvixEmulator;
let platform: PlatformStandIn;
let serverUrl: string;
let account: SvixClient;
let runner: HookRunner | undefined;

const start = async (options: Partial<EmulatorOptions> = {}): Promise<void> => {
  emulator = new SvixEmulator({ apiKey: ACCOUNT_KEY, ...options });
  platform = new PlatformStandIn();
  serverUrl = await emulator.start();
  await platform.start();
  account = new SvixClient({ baseUrl: serverUrl, apiKey: ACCOUNT_KEY });
};
afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await emulator.stop();
  await platform.stop();
});

const invoke = (operation: string, bundle: Record<string, unknown>) =>
  platformInvoker({ app, platform, identity: { authId: 'behaviours', userId: 'someone' }, quiet: true })(
    operation,
    bundle,
  );
const refusal = (operation: string, bundle: Record<string, unknown>) =>
  invoke(operation, bundle).then(
    () => {
      throw new Error(`${operation} succeeded`);
    },
    (error: unknown) => errorDetails(error),
  );

/** The set-up's Consumer App, AUCTION_STATUS_CHANGE then archived in Svix's dashboard; an integration key for it. */
const archivedAfterSetup = async () => {
  const setup = await runSetup({ client: account, appName: 'Archived House', integrationKey: 'ensure' });
  if (setup.integrationKey?.kind !== 'created') throw new Error('the set-up made no integration key');
  await account.call({ method: 'DELETE', path: `/api/v1/event-type/${EVENT_TYPE_NAME}`, action: 'archiving' });
  return { appId: setup.appId, integrationKey: setup.integrationKey.key };
};
const eventTypeArchived = async (): Promise<boolean | null | undefined> => {
  const read = await account.call({ method: 'GET', path: `/api/v1/event-type/${EVENT_TYPE_NAME}`, action: 'x' });
  return account.decode(EventTypeOut, read.body, 'x').archived;
};

describe('an archived AUCTION_STATUS_CHANGE', () => {
  it('with an API Access Key: the connection test passes, and turning the Zap on un-archives it; events run', async () => {
    await start();
    const { appId } = await archivedAfterSetup();
    const authData = { apiKey: ACCOUNT_KEY, appId, serverUrl };
    await expect(invoke('authentication.test', { authData })).resolves.toEqual(expect.objectContaining({ id: appId }));
    runner = new HookRunner({ app, platform, authData });
    await runner.start();
    await runner.turnOn('Every status change');
    expect(await eventTypeArchived()).toBe(false);
    const auctions = new AuctionService(account, appId);
    await auctions.emitNext(2);
    await emulator.idle();
    await runner.idle();
    expect(runner.runs.filter((run) => run.outcome === 'ran')).toHaveLength(1);
  });

  it('with an integration key: the connection test and turning a Zap on say who does what; nothing blames pacing', async () => {
    await start();
    const { appId, integrationKey } = await archivedAfterSetup();
    const authData = { apiKey: integrationKey, appId, serverUrl };
    const tested = await refusal('authentication.test', { authData });
    expect(tested.message).toBe(EVENT_TYPE_ARCHIVED);
    const subscribed = await refusal('triggers.auction_status_changed.operation.performSubscribe', {
      authData,
      targetUrl: 'http://127.0.0.1:9/hooks/standard/archived/',
      inputData: {},
    });
    expect(subscribed).toMatchObject({ message: EVENT_TYPE_ARCHIVED, code: 'EventTypeArchived' });
    expect(subscribed.message.length).toBeLessThanOrEqual(250);
    expect(JSON.stringify(platform.logLines)).not.toMatch(/without pacing|plan without/i);
    expect(await eventTypeArchived()).toBe(true);
  });
});

describe("a Zap's endpoint that Svix disabled after its deliveries failed for days", () => {
  const EndpointList = t.type({ data: t.array(EndpointOut) });

  /**
   * A Zap on, whose deliveries Zapier refused until Svix disabled its endpoint: its 120 h compressed to 200 ms, so a
   * second message that uses up its retries 250 ms after the first did (within twice that, before the record of the
   * first lapses) disables it.
   */
  const disabledZap = async () => {
    let zapierDown = true;
    await start({ retryScheduleMs: [5], disableAfterMs: 200 });
    const setup = await runSetup({ client: account, appName: 'Disabled House' });
    const authData = { apiKey: ACCOUNT_KEY, appId: setup.appId, serverUrl };
    runner = new HookRunner({ app, platform, authData, fault: () => (zapierDown ? 'unavailable' : undefined) });
    await runner.start();
    const zap = await runner.turnOn('Email bidders');
    const auctions = new AuctionService(account, setup.appId);
    await auctions.emitNext(1);
    await emulator.idle();
    await new Promise((resolve) => setTimeout(resolve, 250));
    await auctions.emitNext(1);
    await emulator.idle();
    zapierDown = false;
    const endpoint = await account.call({
      method: 'GET',
      path: `/api/v1/app/${setup.appId}/endpoint/${zap.subscribeData.id}`,
      action: 'x',
    });
    expect(account.decode(EndpointOut, endpoint.body, 'x').disabled).toBe(true);
    return { authData, zap, auctions, appId: setup.appId, running: runner };
  };

  it('Test trigger says so in plain words; the connection test passes (the Zap may be off or gone)', async () => {
    const { authData, zap } = await disabledZap();
    const listed = await refusal('triggers.auction_status_changed.operation.performList', {
      authData,
      inputData: {},
      subscribeData: zap.subscribeData,
      targetUrl: zap.targetUrl,
    });
    expect(listed).toMatchObject({ message: THIS_ZAP_DISABLED, code: 'EndpointDisabled' });
    await expect(invoke('authentication.test', { authData })).resolves.toEqual(expect.anything());
  });

  it('turning the Zap off and on brings it back: events run again', async () => {
    const { authData, zap, auctions, running } = await disabledZap();
    await running.turnOff(zap);
    await running.turnOn('Email bidders');
    await expect(invoke('authentication.test', { authData })).resolves.toEqual(expect.anything());
    const before = running.runs.filter((run) => run.outcome === 'ran').length;
    await auctions.emitNext(1);
    await emulator.idle();
    await running.idle();
    expect(running.runs.filter((run) => run.outcome === 'ran').length).toBe(before + 1);
  });

  it('turning it on again while the endpoint stayed (its unsubscribe lost) enables that endpoint: one, live', async () => {
    const { authData, zap, appId } = await disabledZap();
    const again = await invoke('triggers.auction_status_changed.operation.performSubscribe', {
      authData,
      targetUrl: zap.targetUrl,
      inputData: {},
      meta: { zap: { id: zap.id, name: zap.name } },
    });
    expect(JSON.stringify(again)).toContain(zap.subscribeData.id);
    const listed = await account.call({ method: 'GET', path: `/api/v1/app/${appId}/endpoint`, action: 'x' });
    expect(account.decode(EndpointList, listed.body, 'x').data.map((endpoint) => endpoint.disabled)).toEqual([false]);
    await expect(invoke('authentication.test', { authData })).resolves.toEqual(expect.anything());
  });
});
