import { randomBytes } from 'node:crypto';
import app from '../../src';
import { missedMessage, RECORD_REFUSALS } from '../../src/messages';
import { ListResponseEndpointOut } from '../../src/svix/codecs';
import { encodeKsuidMs } from '../../src/svix/ksuid';
import { CATCH_UP, catchUpOf, offKey, onAtSvix, shareOf, zapScopeOf } from '../../src/zap/policy';
import { AuctionService } from '../../src/tools/sandbox/auctions';
import { ProviderEmulator, type EmulatorOptions } from '../../src/tools/sandbox/emulator';
import { HookRunner, type Edit, type Zap } from '../../src/tools/sandbox/hookRunner';
import { PlatformStandIn, platformInvoker, type Identity } from '../../src/tools/sandbox/platform';
import { ProviderClient } from '../../src/tools/setup/client';
import { runSetup } from '../../src/tools/setup/setup';
import { failure, newSecret, payload, signedRequest } from '../helpers/fixtures';

/**
 * A Zap's life as people live it (src/zap/life.ts), against the emulator, through core's handler with
 * z.cache on the platform stand-in: edited while on (in either order, with the same target URL or a new one, with
 * deliveries in flight), several Zaps on one Consumer App, turned off and on again with and without catching up,
 * and subscribed with no Zap named.
 */

const KEY = `testsk_${randomBytes(8).toString('hex')}`;
const IDENTITY: Identity = { authId: 'zap-life', userId: 'someone' };
let emulator: ProviderEmulator;
let platform: PlatformStandIn;
let runner: HookRunner;
let auctions: AuctionService;
let authData: Record<string, string>;
let appId: string;
let account: ProviderClient;

/** What the test started, stopped after it, the last started first (a test that started nothing stops nothing). */
const started: Array<{ stop: () => Promise<void> }> = [];

const start = async (options: Partial<EmulatorOptions> = {}): Promise<void> => {
  emulator = new ProviderEmulator({ apiKey: KEY, ...options });
  platform = new PlatformStandIn();
  const serverUrl = await emulator.start();
  started.push(emulator);
  await platform.start();
  started.push(platform);
  account = new ProviderClient({ baseUrl: serverUrl, apiKey: KEY });
  appId = (await runSetup({ client: account, appName: 'Zap Life House' })).appId;
  authData = { apiKey: KEY, appId, serverUrl };
  runner = new HookRunner({ app, platform, authData, identity: IDENTITY });
  await runner.start();
  started.push(runner);
  auctions = new AuctionService(account, appId);
};
afterEach(async () => {
  for (const running of started.splice(0).reverse()) await running.stop();
});

const invoke = (operation: string, bundle: Record<string, unknown>) =>
  platformInvoker({ app, platform, identity: IDENTITY, quiet: true })(operation, bundle);

/** `count` auction events sent now. */
const send = async (count: number): Promise<void> => {
  for (let index = 0; index < count; index += 1) await auctions.emitNext(2);
};
/** Every delivery made and every perform run, retries included. */
const settle = async (): Promise<void> => {
  for (let round = 0; round < 2; round += 1) {
    await emulator.idle();
    await runner.idle();
  }
};
/** How often each event sent so far ran in this Zap (by its id, the same across its edits). */
const runsOf = (zap: Zap): number[] =>
  auctions.emitted.map(
    ({ messageId }) =>
      runner.runs.filter((run) => run.zapId === zap.id && run.outcome === 'ran' && run.messageId === messageId).length,
  );

const endpoints = async () =>
  account.decode(
    ListResponseEndpointOut,
    (await account.call({ method: 'GET', path: `/api/v1/app/${appId}/endpoint`, action: 'x' })).body,
    'x',
  ).data;

describe('a Zap edited while it is on', () => {
  const edits: Array<Omit<Edit, 'between'>> = [
    { order: 'subscribe-first', sameUrl: true },
    { order: 'subscribe-first', sameUrl: false },
    { order: 'unsubscribe-first', sameUrl: true },
    { order: 'unsubscribe-first', sameUrl: false },
  ];

  it.each(edits)(
    'runs every event once, those in flight and those sent between the calls included (%j)',
    async (edit) => {
      await start();
      const zap = await runner.turnOn('Email bidders');
      await send(3);
      await settle();
      // Sent before the edit, delivered after it; then sent between its two calls; then after it.
      const release = emulator.holdDeliveries();
      await send(3);
      const edited = await runner.edit(zap, { ...edit, between: () => send(2) });
      release();
      await send(3);
      await settle();
      expect(runsOf(zap)).toEqual(Array<number>(11).fill(1));
      // One endpoint left, the edited subscription's, paced alone at 25 a second.
      expect((await endpoints()).map(({ id, throttleRate }) => ({ id, throttleRate }))).toEqual([
        { id: edited.subscribeData.id, throttleRate: 25 },
      ]);
    },
  );

  it('asks Svix again for the catch-up it failed for a moment: an edit still runs every event once (#53.3)', async () => {
    // 962d0e2 skipped the catch-up in silence after one 502: the events in flight were lost.
    await start({
      fault: ({ path, seen }) =>
        path.endsWith('/replay-missing') && seen === 0
          ? { kind: 'reply', status: 502, body: '<html>Bad gateway</html>' }
          : undefined,
    });
    const zap = await runner.turnOn('Email bidders');
    await send(2);
    await settle();
    const release = emulator.holdDeliveries();
    await send(3);
    await runner.edit(zap, { order: 'subscribe-first', sameUrl: false });
    release();
    await settle();
    expect(runsOf(zap)).toEqual(Array<number>(5).fill(1));
  });

  it('with its options widened, does not run what they skipped before the edit (its catch-up sends it again)', async () => {
    await start();
    const zap = await runner.turnOn('Open auctions', { statuses: ['OPEN_FOR_BIDDING'] });
    const [auctioneer] = auctions.auctioneers;
    if (!auctioneer) throw new Error('the sandbox has no auctioneer');
    const auction = await auctions.createAuction(auctioneer, 'DRAFT');
    await auctions.changeStatus(auction, 'OPEN_FOR_BIDDING');
    await settle();
    // What the edit's catch-up sends is performed once the new version is on (as the edits above).
    const release = emulator.holdDeliveries();
    await runner.edit(zap, {
      order: 'subscribe-first',
      sameUrl: false,
      inputData: { statuses: ['DRAFT', 'OPEN_FOR_BIDDING'] },
    });
    release();
    await settle();
    await auctions.createAuction(auctioneer, 'DRAFT');
    await settle();
    // The first DRAFT was skipped by the Zap as it was; the one after the edit runs.
    expect(runsOf(zap)).toEqual([0, 1, 1]);
    // The catch-up did send it again, and its claim kept it from running.
    const first = auctions.emitted[0]?.messageId;
    const outcomes = runner.runs.filter((run) => run.messageId === first).map((run) => run.outcome);
    expect(outcomes).toEqual(['no-items', 'no-items']);
  });

  it('moved to another connection of the same person, runs nothing it ran again', async () => {
    await start();
    const zap = await runner.turnOn('Email bidders');
    await send(3);
    await settle();
    // Edited to use another connection to the same Consumer App: the new version subscribes there, then the old goes.
    const other = new HookRunner({ app, platform, authData, identity: { ...IDENTITY, authId: 'zap-life-2' } });
    await other.start();
    try {
      await other.turnOn(zap.name, zap.inputData, zap.id);
      await runner.turnOff(zap);
      await send(2);
      for (let round = 0; round < 2; round += 1) {
        await emulator.idle();
        await Promise.all([runner.idle(), other.idle()]);
      }
      const runs = [...runner.runs, ...other.runs].filter((run) => run.zapId === zap.id && run.outcome === 'ran');
      expect(auctions.emitted.map(({ messageId }) => runs.filter((run) => run.messageId === messageId).length)).toEqual(
        [1, 1, 1, 1, 1],
      );
      // The new version's catch-up sent it events the old one ran, and the claims, the person's, kept them from running.
      const ranBefore = new Set(runner.runs.map((run) => run.messageId));
      const resent = other.runs.filter((run) => ranBefore.has(run.messageId)).map((run) => run.outcome);
      expect(resent.length).toBeGreaterThan(0);
      expect(new Set(resent)).toEqual(new Set(['no-items']));
    } finally {
      await other.stop();
    }
  });

  it("turned off, leaves another Zap's endpoint at the same target URL (#53.10)", async () => {
    // 962d0e2 took the other Zap's older endpoint at that URL for a lost subscribe answer's, and deleted it.
    await start();
    const first = await runner.turnOn('Email bidders');
    const second = await runner.turnOn('Update the website', {}, undefined, { hook: first.hook });
    await runner.turnOff(second);
    expect((await endpoints()).map(({ id }) => id)).toEqual([first.subscribeData.id]);
  });

  it("moved to a connection of another Consumer App, catches up on none of that app's past events", async () => {
    // #53.5: the off record was keyed by the Zap alone, and the other app's catch-up ran 3 of its events.
    await start();
    const zap = await runner.turnOn('Email bidders');
    const otherApp = (await runSetup({ client: account, appName: 'Another House' })).appId;
    const elsewhere = new AuctionService(account, otherApp);
    for (let index = 0; index < 3; index += 1) await elsewhere.emitNext(2);
    await settle();
    await runner.turnOff(zap);
    const other = new HookRunner({ app, platform, authData: { ...authData, appId: otherApp }, identity: IDENTITY });
    await other.start();
    try {
      const moved = await other.turnOn(zap.name, { catchUp: true }, zap.id);
      for (let round = 0; round < 2; round += 1) {
        await emulator.idle();
        await other.idle();
      }
      expect(other.runs.filter((run) => run.zapId === moved.id && run.outcome === 'ran')).toEqual([]);
    } finally {
      await other.stop();
    }
  });

  it("keeps the new version's endpoint when the old version's unsubscribe is handed its subscription (same URL)", async () => {
    await start();
    const zap = await runner.turnOn('Email bidders');
    await send(2);
    await settle();
    // The new version subscribed first at the same target URL; the old one's unsubscribe then gets what Zapier now
    // keeps for that URL: the new subscription.
    const edited = await runner.turnOn(zap.name, zap.inputData, zap.id, { hook: zap.hook });
    await invoke('triggers.auction_status_changed.operation.performUnsubscribe', {
      ...{ authData, subscribeData: edited.subscribeData, targetUrl: zap.targetUrl },
      meta: { zap: { id: zap.id, name: zap.name } },
    });
    expect((await endpoints()).map(({ id }) => id)).toEqual([edited.subscribeData.id]);
    await send(2);
    await settle();
    expect(runsOf(zap)).toEqual([1, 1, 1, 1]);
  });

  it('asked to catch up after Svix disabled its endpoint, runs what Svix held back since, once each', async () => {
    await start();
    const zap = await runner.turnOn('Email bidders');
    await send(2);
    await settle();
    // Svix gave up on the endpoint: what is sent now never reaches the Zap.
    await account.call({
      method: 'PATCH',
      path: `/api/v1/app/${appId}/endpoint/${zap.subscribeData.id}`,
      body: { disabled: true },
      action: 'x',
    });
    await send(3);
    await settle();
    expect(runsOf(zap)).toEqual([1, 1, 0, 0, 0]);
    // As Test trigger says: the option set to Yes, published (an edit), the Zap runs each once.
    const release = emulator.holdDeliveries();
    await runner.edit(zap, { order: 'subscribe-first', sameUrl: true, inputData: { catchUp: true } });
    release();
    await settle();
    expect(runsOf(zap)).toEqual([1, 1, 1, 1, 1]);
  });

  it("where Svix will not resend what an edit's old version missed, the Zap says nothing of it (nobody asked)", async () => {
    await start({ withoutReplayMissing: true });
    const zap = await runner.turnOn('Email bidders');
    const edited = await runner.edit(zap, { order: 'subscribe-first', sameUrl: false });
    expect(edited.subscribeData.missed).toBeUndefined();
  });

  it('halts a delivery still queued for the endpoint the edit removed, never fails it (errors can turn a Zap off)', async () => {
    await start();
    const zap = await runner.turnOn('Email bidders');
    await send(1);
    await settle();
    await runner.edit(zap, { order: 'subscribe-first', sameUrl: true });
    // Queued over a second (a read begun a second before a delivery arrived would settle its signature).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    // Signed with a secret the old version never read (a rotation's, say): it reads the secret of an endpoint now gone.
    const messageId = auctions.emitted[0]?.messageId;
    const rawRequest = signedRequest(JSON.stringify(payload), { msgId: messageId, secrets: [newSecret()] });
    const bundle = { authData, inputData: {}, subscribeData: zap.subscribeData, targetUrl: zap.targetUrl, rawRequest };
    const halted = await failure(invoke('triggers.auction_status_changed.operation.perform', bundle));
    expect(halted).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.endpointGone });
    expect(halted.message.length).toBeLessThanOrEqual(250);
  });
});

describe('several Zaps on one Consumer App', () => {
  it('paces their endpoints to 25 a second together as Zaps come and go, in one Svix call when nothing else needs it', async () => {
    await start();
    // The connection test lists the endpoints and keeps them in z.cache: the first Zap then makes one call.
    await invoke('authentication.test', { authData });
    const before = emulator.stats().requests;
    const first = await runner.turnOn('Email bidders');
    expect(emulator.stats().requests - before).toBe(1);
    const second = await runner.turnOn('Update the website');
    const third = await runner.turnOn('Sync the CRM');
    const rates = async () => (await endpoints()).map((endpoint) => endpoint.throttleRate).sort();
    expect(await rates()).toEqual([8, 8, 8]);
    await runner.turnOff(second);
    expect(await rates()).toEqual([12, 12]);
    await send(4);
    await settle();
    expect([runsOf(first), runsOf(third)]).toEqual([
      [1, 1, 1, 1],
      [1, 1, 1, 1],
    ]);
  });

  it('shares 25 a second, at least 1 each', () => {
    expect([1, 2, 3, 25, 26, 100].map(shareOf)).toEqual([25, 12, 8, 1, 1, 1]);
  });
});

describe('a Zap turned off and on again', () => {
  /** A Zap on, two events run, turned off, three events sent while it is off; then on again. */
  const offAndOn = async (inputData: Record<string, unknown>, options: Partial<EmulatorOptions> = {}) => {
    await start(options);
    const zap = await runner.turnOn('Email bidders', inputData);
    await send(2);
    await settle();
    await runner.turnOff(zap);
    await send(3);
    await settle();
    return zap;
  };

  it('with "Run Events Missed While Off": runs each event it missed once, and none it ran before again', async () => {
    const zap = await offAndOn({ catchUp: true });
    const again = await runner.turnOn(zap.name, zap.inputData, zap.id);
    await settle();
    expect(runsOf(zap)).toEqual([1, 1, 1, 1, 1]);
    expect(again.subscribeData.missed).toBeUndefined();
  });

  it('without it, more than 2 minutes after it was turned off: only new events run, as Zapier does', async () => {
    const zap = await offAndOn({});
    // The Zap went off 3 minutes ago (what its unsubscribe kept, moved back).
    const scope = zapScopeOf({ id: zap.id }, zap.targetUrl);
    const off = platform.peek(IDENTITY, offKey({ appId, baseUrl: authData.serverUrl ?? '' }, scope));
    expect(off).toEqual(expect.objectContaining({ claims: scope }));
    platform.poke(IDENTITY, offKey({ appId, baseUrl: authData.serverUrl ?? '' }, scope), {
      ...Object(off),
      at: Date.now() - 3 * 60_000,
    });
    await runner.turnOn(zap.name, zap.inputData, zap.id);
    await send(1);
    await settle();
    expect(runsOf(zap)).toEqual([1, 1, 0, 0, 0, 1]);
  });

  it('where Svix will not send them again: the Zap still turns on, and Test trigger says why, in 250 characters', async () => {
    const zap = await offAndOn({ catchUp: true }, { withoutReplayMissing: true });
    const again = await runner.turnOn(zap.name, zap.inputData, zap.id);
    expect(again.subscribeData.missed).toBe('refused');
    const tested = await failure(
      invoke('triggers.auction_status_changed.operation.performList', {
        ...{ authData, inputData: again.inputData, subscribeData: again.subscribeData, targetUrl: again.targetUrl },
      }),
    );
    expect(tested).toMatchObject({ message: missedMessage('refused'), code: 'MissedEventsNotSent' });
    expect(tested.message.length).toBeLessThanOrEqual(250);
    await send(1);
    await settle();
    expect(runsOf(zap)).toEqual([1, 1, 0, 0, 0, 1]);
  });

  it("counts the Zap on from when Svix made its endpoint, on Svix's clock, where that is earlier", () => {
    const now = 1_800_000_000_000;
    const idMadeAt = (at: number) => `ep_${encodeKsuidMs(at, new Uint8Array(15))}`;
    // Svix's clock 6 minutes behind this one: `since` is read on Svix's.
    expect(onAtSvix(now, idMadeAt(now - 360_000))).toBe(now - 360_000);
    expect(onAtSvix(now, idMadeAt(now + 60_000))).toBe(now);
    expect(onAtSvix(now, 'ep_not-an-id')).toBe(now);
  });

  it('decides how far back to catch up from what the last unsubscribe kept, never before the Zap was on', () => {
    const now = 1_800_000_000_000;
    const [hour, day] = [3_600_000, 24 * 3_600_000];
    const scope = 'zap-a';
    /** Turned off `ago`, on since `on` (ms before now). */
    const off = (ago: number, on = 3 * day, since = now - ago - CATCH_UP.inFlightMs) => ({
      ...{ at: now - ago, claims: scope, since, on: now - on },
    });
    const at = { now, scope, asked: false, earlier: undefined };
    // Svix may still be sending a message 33 hours after it was made (its retries, their jitter included).
    expect(CATCH_UP.inFlightMs).toBe(Math.ceil((5 + 300 + 1_800 + 7_200 + 18_000 + 36_000 + 36_000) * 1_200));
    // Nothing kept: on from now, nothing caught up.
    expect(catchUpOf({ ...at, off: undefined })).toEqual({ on: now });
    // An edit whose new version subscribed first, the Zap on for 3 days: what Svix may still be sending.
    expect(catchUpOf({ ...at, earlier: now - 3 * day, off: undefined })).toEqual({
      since: now - CATCH_UP.inFlightMs,
      on: now - 3 * day,
    });
    // The same for a Zap on for an hour: from when it was turned on (5 minutes before: Svix's clock may differ).
    const clocks = 5 * 60_000;
    expect(catchUpOf({ ...at, earlier: now - hour, off: undefined })).toEqual({
      since: now - hour - clocks,
      on: now - hour,
    });
    // Off a minute ago (an edit), asked or not.
    const edit = now - 60_000 - CATCH_UP.inFlightMs;
    expect(catchUpOf({ ...at, off: off(60_000) })).toEqual({ since: edit, on: edit });
    // Off an hour ago: only when asked.
    expect(catchUpOf({ ...at, off: off(hour) })).toEqual({ on: now });
    expect(catchUpOf({ ...at, asked: true, off: off(hour) }).since).toBe(now - hour - CATCH_UP.inFlightMs);
    // Its endpoint disabled when it went off: as far back as runs are remembered, but not before it was on.
    expect(catchUpOf({ ...at, asked: true, off: off(hour, 30 * day, 0) }).since).toBe(now - CATCH_UP.maxMs);
    // A day inside the 7 days runs are remembered: a long catch-up takes hours to arrive at the Zap's pace.
    expect(CATCH_UP.maxMs).toBe(6 * day);
    expect(catchUpOf({ ...at, asked: true, off: off(hour, 2 * day, 0) })).toEqual({
      since: now - 2 * day - clocks,
      on: now - 2 * day,
    });
    // Off longer than runs are remembered, or its runs claimed under another scope (a subscription from before
    // scopes): nothing, or it would run again what it ran.
    expect(catchUpOf({ ...at, asked: true, off: off(CATCH_UP.maxMs + 1) })).toEqual({ on: now });
    expect(catchUpOf({ ...at, asked: true, off: { ...off(60_000), claims: 'ep_old' } })).toEqual({ on: now });
  });
});

describe('a trigger subscribed with no Zap named (Trigger Inbox)', () => {
  it('turns on, paced, runs each event once, and catches up by its target URL when subscribed there again', async () => {
    await start();
    const inbox = await runner.turnOn('Inbox', {}, undefined, { named: false });
    expect(inbox.subscribeData.zap).toBe(zapScopeOf(undefined, inbox.targetUrl));
    const [endpoint] = await endpoints();
    expect(endpoint?.description).toMatch(/^Zapier: Auction Status Changed\. Added when/);
    expect(endpoint?.throttleRate).toBe(25);
    await send(2);
    await settle();
    await runner.turnOff(inbox);
    await send(2);
    // Subscribed again at the same address within 2 minutes: what was sent meanwhile is sent to it, each once.
    await runner.turnOn('Inbox', {}, inbox.id, { named: false, hook: inbox.hook });
    await send(1);
    await settle();
    expect(runsOf(inbox)).toEqual([1, 1, 1, 1, 1]);
  });
});
