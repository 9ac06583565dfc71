import { randomBytes } from 'node:crypto';
import app from '../../src';
import { ApplicationOut, EndpointSecretOut } from '../../src/svix/codecs';
import { AuctionService } from '../../src/tools/sandbox/auctions';
import { SvixEmulator } from '../../src/tools/sandbox/emulator';
import { HookRunner } from '../../src/tools/sandbox/hookRunner';
import { PlatformStandIn, platformInvoker } from '../../src/tools/sandbox/platform';
import { SvixClient } from '../../src/tools/setup/client';
import { ensureIntegrationKey } from '../../src/tools/setup/integrationKey';
import { runSetup } from '../../src/tools/setup/setup';
import { errorDetails } from '../helpers/fixtures';

/**
 * A whole Zap's life connected with an app-scoped integration key, made by
 * the set-up, against the Svix emulator (which enforces the scope): the
 * connection test, the dropdowns, Test trigger, turning the Zap on, deliveries,
 * a rotated endpoint secret read back, and turning it off.
 */

const ACCOUNT_KEY = `testsk_${randomBytes(8).toString('hex')}`;
let emulator: SvixEmulator;
let platform: PlatformStandIn;
let serverUrl: string;
let account: SvixClient;

beforeEach(async () => {
  emulator = new SvixEmulator({ apiKey: ACCOUNT_KEY });
  platform = new PlatformStandIn();
  serverUrl = await emulator.start();
  await platform.start();
  account = new SvixClient({ baseUrl: serverUrl, apiKey: ACCOUNT_KEY });
});
afterEach(async () => {
  await emulator.stop();
  await platform.stop();
});

const integrationKeyFor = async (appName: string): Promise<{ appId: string; key: string }> => {
  const setup = await runSetup({ client: account, appName, integrationKey: 'ensure' });
  const outcome = setup.integrationKey;
  if (outcome?.kind !== 'created') throw new Error('the set-up made no integration key');
  return { appId: setup.appId, key: outcome.key };
};

const IDENTITY = { authId: 'integration', userId: 'someone' };
const invoker = () => platformInvoker({ app, platform, identity: IDENTITY });

describe('a Zap connected with an integration key', () => {
  it('lives its whole life with a key that works inside its own Consumer App only', async () => {
    const { appId, key } = await integrationKeyFor('Integration Key House');
    expect(key).toMatch(/^integsk_/);
    const authData = { apiKey: key, appId, serverUrl };
    const invoke = invoker();

    await expect(invoke('authentication.test', { authData })).resolves.toEqual(
      expect.objectContaining({ id: appId, name: 'Integration Key House' }),
    );

    // The Zap runs on the connection the test checked, as in Zapier.
    const runner = new HookRunner({ app, platform, authData, identity: IDENTITY });
    await runner.start();
    try {
      const requestsBefore = emulator.stats().requests;
      const zap = await runner.turnOn('Every status change');
      // The event type exists (the set-up registered it): the endpoint made, and the endpoints listed to check the
      // pace, each allowed for the key.
      expect(emulator.stats().requests - requestsBefore).toBe(2);

      const auctionService = new AuctionService(account, appId);
      for (let index = 0; index < 4; index += 1) await auctionService.emitNext(2);
      await emulator.idle();
      await runner.idle();
      expect(runner.runs.filter((run) => run.outcome === 'ran')).toHaveLength(4);

      // The endpoint's secret is rotated at once: perform reads it back with the integration key.
      const path = `/api/v1/app/${appId}/endpoint/${zap.subscribeData.id}/secret`;
      await account.call({ method: 'POST', path: `${path}/rotate`, body: { gracePeriodSeconds: 0 }, action: 'rotate' });
      const rotated = account.decode(
        EndpointSecretOut,
        (await account.call({ method: 'GET', path, action: 'read' })).body,
        'read',
      ).key;
      expect(rotated).not.toBe(zap.subscribeData.secret);
      await auctionService.emitNext(2);
      await emulator.idle();
      await runner.idle();
      expect(runner.runs.filter((run) => run.outcome === 'ran')).toHaveLength(5);

      const listed = await invoke('triggers.auction_status_changed.operation.performList', { authData, inputData: {} });
      expect(Array.isArray(listed) ? listed.length : 0).toBe(5);
      const statuses = await invoke('triggers.recent_statuses.operation.perform', { authData, inputData: {} });
      expect(Array.isArray(statuses) ? statuses.length : 0).toBeGreaterThan(0);
      const auctioneers = await invoke('triggers.recent_auctioneers.operation.perform', { authData, inputData: {} });
      expect(Array.isArray(auctioneers) ? auctioneers.length : 0).toBeGreaterThan(0);

      // Parked, not deleted: Svix holds what it sends meanwhile, for the Zap turned on again (src/zap/policy.ts).
      await expect(runner.turnOff(zap)).resolves.toEqual({ removed: true });
      const left = await account.call({ method: 'GET', path: `/api/v1/app/${appId}/endpoint`, action: 'x' });
      expect(JSON.stringify(left.body)).toContain('.invalid/');
    } finally {
      await runner.stop();
    }
  });

  it('says whom to ask when the event type is missing, since the key may not register it', async () => {
    // A Consumer App made by hand, without the set-up: no event type is registered.
    const created = await account.call({ method: 'POST', path: '/api/v1/app', body: { name: 'By Hand' }, action: 'x' });
    const appId = account.decode(ApplicationOut, created.body, 'x').id;
    const outcome = await ensureIntegrationKey(account, appId, { rotate: false });
    if (outcome.kind !== 'created') throw new Error('no integration key was made');
    const error = await invoker()('triggers.auction_status_changed.operation.performSubscribe', {
      authData: { apiKey: outcome.key, appId, serverUrl },
      targetUrl: 'http://127.0.0.1:9/hooks/standard/x/',
      inputData: {},
    }).catch((caught: unknown) => caught);
    const details = errorDetails(error);
    expect(details.code).toBe('EventTypeMissing');
    expect(details.message).toMatch(/this connection's key may not register it/);
    expect(details.message).toMatch(
      /^Ask whoever set up your Consumer App to register the AUCTION_STATUS_CHANGE event type in Svix/,
    );
    expect(emulator.stats().endpoints).toBe(0);
  });

  it("names the app id and the key's scope when the key belongs to another Consumer App, never the key", async () => {
    const first = await integrationKeyFor('First House');
    const second = await integrationKeyFor('Second House');
    const error = await invoker()('authentication.test', {
      authData: { apiKey: first.key, appId: second.appId, serverUrl },
    }).catch((caught: unknown) => caught);
    const details = errorDetails(error);
    expect(details.code).toBe('SvixNotFound');
    expect(details.message).toContain(second.appId);
    expect(details.message).toMatch(/the one given to you with the integration key \(it works only in that app\)/);
    expect(details.message).not.toContain(first.key);
  });

  describe('the connection test checks what a Zap will need', () => {
    it("passes for the account's API Access Key and for the set-up's integration key", async () => {
      const { appId, key } = await integrationKeyFor('Both Keys House');
      for (const apiKey of [ACCOUNT_KEY, key]) {
        await expect(invoker()('authentication.test', { authData: { apiKey, appId, serverUrl } })).resolves.toEqual(
          expect.objectContaining({ id: appId, name: 'Both Keys House' }),
        );
      }
    });

    it('refuses, naming the permission, a key that can read the Consumer App but not its messages', async () => {
      // This key's limits, as Svix would answer them: the app reads, its messages do not.
      const limited = new SvixEmulator({
        apiKey: ACCOUNT_KEY,
        fault: ({ method, path }) =>
          method === 'GET' && path.endsWith('/msg')
            ? { kind: 'reply', status: 403, body: JSON.stringify({ code: 'forbidden', detail: 'Not allowed.' }) }
            : undefined,
      });
      const limitedUrl = await limited.start();
      try {
        const setup = await runSetup({
          client: new SvixClient({ baseUrl: limitedUrl, apiKey: ACCOUNT_KEY }),
          appName: 'No Messages House',
          integrationKey: 'ensure',
        });
        const made = setup.integrationKey;
        if (made?.kind !== 'created') throw new Error('the set-up made no integration key');
        const error = await invoker()('authentication.test', {
          authData: { apiKey: made.key, appId: setup.appId, serverUrl: limitedUrl },
        }).catch((caught: unknown) => caught);
        const details = errorDetails(error);
        expect(details.code).toBe('KeyMayNotDoThis');
        expect(details.message).toMatch(/integration key that may read messages:.*Svix does not let this key/);
        expect(details.message).not.toContain(made.key);
      } finally {
        await limited.stop();
      }
    });

    it('refuses an integration key when the event type is missing, saying whom to ask', async () => {
      const created = await account.call({ method: 'POST', path: '/api/v1/app', body: { name: 'Bare' }, action: 'x' });
      const appId = account.decode(ApplicationOut, created.body, 'x').id;
      const outcome = await ensureIntegrationKey(account, appId, { rotate: false });
      if (outcome.kind !== 'created') throw new Error('no integration key was made');
      const error = await invoker()('authentication.test', {
        authData: { apiKey: outcome.key, appId, serverUrl },
      }).catch((caught: unknown) => caught);
      expect(errorDetails(error).message).toMatch(
        /^Ask whoever set up your Consumer App to register the AUCTION_STATUS_CHANGE event type.*not registered/,
      );
      // The account's own key passes: turning a Zap on registers the event type.
      await expect(
        invoker()('authentication.test', { authData: { apiKey: ACCOUNT_KEY, appId, serverUrl } }),
      ).resolves.toEqual(expect.objectContaining({ id: appId }));
    });
  });
});
