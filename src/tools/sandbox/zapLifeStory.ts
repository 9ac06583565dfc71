import app from '../../index';
import { EDIT_GRACE_MS, inWords, SWEEP_PARKED_AFTER_MS } from '../../limits';
import { SvixClient } from '../setup/client';
import { runSetup } from '../setup/setup';
import { AuctionService } from './auctions';
import { SvixEmulator } from './emulator';
import { HookRunner, type Edit, type Zap } from './hookRunner';
import { PlatformStandIn } from './platform';

/**
 * `npm start -- --edits`: a Zap's life as people live it, on this machine, deliveries never held back: Zapier
 * serves each new subscription 300 ms after its subscribe returns. A Zap is edited while auction events flow, once
 * in each order Zapier may run an edit (the new version subscribed first with the same target URL; the old one
 * unsubscribed first, the new one at a new URL), with events sent before and between the two calls; then it is
 * turned off, events are sent, and it is turned on again with "Run Events Missed While Off": each missed event runs
 * once, and none it ran before runs again.
 */

export interface ZapLifeSummary {
  emitted: number;
  zapRuns: number;
  /** Events that ran more than once, and events that never ran: both must be 0. */
  doubled: number;
  lost: number;
  /** Endpoints Svix still delivers to once the Zap is off (its own is parked, holding nothing for Zapier): 0. */
  endpointsLeft: number;
}

export const zapLifeLine = (summary: ZapLifeSummary): string =>
  `zap life: events=${summary.emitted} zap_runs=${summary.zapRuns} doubled=${summary.doubled} ` +
  `lost=${summary.lost} endpoints_left=${summary.endpointsLeft}`;

/** How long after a subscribe returns Zapier serves it here: no source says it is served sooner. */
const SERVE_LAG_MS = 300;

const EDITS: Array<{ edit: Omit<Edit, 'between'>; words: string }> = [
  { edit: { order: 'subscribe-first', sameUrl: true }, words: 'new version turned on first, at the same address' },
  { edit: { order: 'unsubscribe-first', sameUrl: false }, words: 'old version turned off first, new address' },
];

export const runZapLife = async (say: (line: string) => void): Promise<ZapLifeSummary> => {
  const apiKey = 'testsk_zaplife';
  const emulator = new SvixEmulator({ apiKey });
  const platform = new PlatformStandIn();
  const baseUrl = await emulator.start();
  await platform.start();
  const client = new SvixClient({ baseUrl, apiKey });
  const { appId } = await runSetup({ client, appName: 'Zap Life Auction House' });
  const authData = { apiKey, appId, serverUrl: baseUrl };
  const runner = new HookRunner({ app, platform, authData, serveLagMs: SERVE_LAG_MS });
  const auctions = new AuctionService(client, appId);
  const send = async (count: number) => {
    for (let index = 0; index < count; index += 1) await auctions.emitNext(2);
  };
  const settle = async () => {
    for (let round = 0; round < 2; round += 1) {
      await emulator.idle();
      await runner.idle();
    }
  };
  /** Where the Zap's endpoint is, as Svix has it: live (pointed at Zapier), parked, or removed. */
  const where = async (zap: Zap): Promise<string> => {
    const path = `/api/v1/app/${appId}/endpoint/${zap.subscribeData.id}`;
    const found = await client.call({ method: 'GET', path, action: 'reading the endpoint', accept: [404] });
    if (found.status === 404) return 'removed';
    const url = typeof found.body === 'object' && found.body !== null ? Reflect.get(found.body, 'url') : undefined;
    return typeof url === 'string' && url.includes('parked.invalid')
      ? 'parked (at parked.invalid)'
      : 'live (pointed at Zapier)';
  };
  const ranOf = (zap: Zap) => (messageId: string) =>
    runner.runs.filter((run) => run.zapId === zap.id && run.outcome === 'ran' && run.messageId === messageId).length;
  try {
    await runner.start();
    let zap = await runner.turnOn('Email bidders', { catchUp: true });
    await send(4);
    await settle();
    say(`[1/4] Turned the Zap "${zap.name}" on, with "Run Events Missed While Off" set to Yes, and sent 4 events.`);
    for (const [index, { edit, words }] of EDITS.entries()) {
      // Sent just before the edit, then between its two calls, then after it.
      await send(3);
      zap = await runner.edit(zap, { ...edit, between: () => send(2) });
      await send(2);
      await settle();
      say(
        `[${index + 2}/4] Edited the Zap while events flowed (${words}): 7 events sent across the edit; what Svix held meanwhile came at its next retry (within about 6 minutes on Svix's real schedule, a thousand times faster here).`,
      );
    }
    await runner.turnOff(zap);
    say(`      Turned the Zap off: its endpoint is ${await where(zap)}.`);
    await send(3);
    zap = await runner.turnOn(zap.name, zap.inputData, zap.id);
    await settle();
    say(
      `[4/4] Sent 3 events and turned the Zap on again: its endpoint is ${await where(zap)}, and Svix's retries brought what it held. Off for under ${inWords(EDIT_GRACE_MS)}, they run as an edit's do (within about 6 minutes on Svix's real schedule); after a longer off, only with "Run Events Missed While Off", over the following hours.`,
    );
    const ran = auctions.emitted.map(({ messageId }) => ranOf(zap)(messageId));
    await runner.turnOff(zap);
    say(
      `      Turned it off for good: its endpoint is ${await where(zap)}, kept for "Run Events Missed While Off" until Svix disables it; a Zap without that option loses its endpoint ${inWords(SWEEP_PARKED_AFTER_MS)} after, at the next thing the integration does there.`,
    );
    const endpoints = emulator.reachableEndpoints(appId);
    return {
      emitted: ran.length,
      zapRuns: ran.reduce((total, count) => total + count, 0),
      doubled: ran.filter((count) => count > 1).length,
      lost: ran.filter((count) => count === 0).length,
      endpointsLeft: endpoints,
    };
  } finally {
    await runner.stop();
    await emulator.stop();
    await platform.stop();
  }
};
