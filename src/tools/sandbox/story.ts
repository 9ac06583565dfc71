import { randomBytes } from 'node:crypto';
import { inWords, SWEEP_PARKED_AFTER_MS } from '../../limits';
import { auctionStatusChangedOutputFields } from '../../fields/auctionStatusChanged';
import app from '../../index';
import { SvixClient } from '../setup/client';
import { runSetup, type SetupResult } from '../setup/setup';
import { EventTypeOut } from '../../svix/codecs';
import { EVENT_TYPE_NAME } from '../../svix/eventType';
import { errorDetails } from './errorDetails';
import { AuctionService } from './auctions';
import { SvixEmulator } from './emulator';
import { newId } from './emulator/store';
import { forge } from './forgery';
import { HookRunner, type ZapRun } from './hookRunner';
import { PlatformStandIn } from './platform';

/**
 * `npm start`: the whole story on this machine, with no account and no network.
 * The Svix emulator, the set-up, a Zap turned on through the trigger's
 * performSubscribe, auctions whose status changes travel as signed HTTP
 * deliveries into the trigger's perform, one forged delivery, one redelivery,
 * and the Zap turned off again.
 */

export interface StoryOptions {
  events: number;
  say: (line: string) => void;
  /**
   * AUCTION_STATUS_CHANGE archived after the set-up (as its owner may do in Svix's dashboard), before the Zap is
   * turned on: first with an integration key, which may not un-archive it (the story prints what the person reads),
   * then with the API Access Key, whose subscribe un-archives it.
   */
  archived?: boolean;
}

export interface StorySummary {
  emitted: number;
  delivered: number;
  zapRuns: number;
  /** Deliveries perform returned no items for, whose status this Zap does not want. */
  filtered: number;
  rejected: number;
  /** Deliveries perform returned no items for, of messages it had run already. */
  duplicates: number;
  /** Messages the Zap ran more than once: must be 0. */
  doubled: number;
  failed: number;
  /** Events with a status this Zap wants that never ran it: must be 0. */
  lost: number;
  endpointsLeft: number;
}

export const ZAP_STATUSES = ['OPEN_FOR_BIDDING', 'LOTS_SOLD'];

/** The fields a Zap step can use, by the labels the Zap editor shows, in its order (the event ID heads each run). */
const FIELDS = auctionStatusChangedOutputFields.filter((field) => field.key !== 'id');
const LABEL_WIDTH = Math.max(...FIELDS.map((field) => field.label.length)) + 1;

/**
 * Why perform returned no items, judged from what the story itself knows (the
 * statuses it emitted and the runs so far), not from perform's insides.
 */
type Explanation = 'filtered' | 'duplicate' | 'unexplained';

export const summaryLine = (summary: StorySummary): string =>
  `summary: emitted=${summary.emitted} delivered=${summary.delivered} zap_runs=${summary.zapRuns} ` +
  `filtered=${summary.filtered} rejected=${summary.rejected} duplicates=${summary.duplicates} doubled=${summary.doubled} ` +
  `failed=${summary.failed} lost=${summary.lost} endpoints_left=${summary.endpointsLeft}`;

/** What a refused operation told the person, as Zapier shows it. */
const messageOf = (error: unknown): string => errorDetails(error).message;

const isArchived = async (client: SvixClient): Promise<boolean> => {
  const read = await client.call({
    method: 'GET',
    path: `/api/v1/event-type/${EVENT_TYPE_NAME}`,
    action: 'reading it',
  });
  return client.decode(EventTypeOut, read.body, 'reading it').archived === true;
};

/**
 * `--archived`: AUCTION_STATUS_CHANGE archived in Svix's dashboard after the set-up. A Zap connected with the
 * integration key cannot be turned on (the key may not un-archive it): the story prints the message the person
 * reads. The Zap connected with the API Access Key is turned on next, and its subscribe un-archives it.
 */
const archivedFirst = async (
  client: SvixClient,
  platform: PlatformStandIn,
  setup: SetupResult,
  baseUrl: string,
  say: (line: string) => void,
): Promise<void> => {
  await client.call({ method: 'DELETE', path: `/api/v1/event-type/${EVENT_TYPE_NAME}`, action: 'archiving it' });
  say(`      ${EVENT_TYPE_NAME} archived in Svix's dashboard (archived: ${String(await isArchived(client))}).`);
  const key = setup.integrationKey?.kind === 'created' ? setup.integrationKey.key : undefined;
  if (key === undefined) throw new Error('the set-up made no integration key');
  const withKey = new HookRunner({ app, platform, authData: { apiKey: key, appId: setup.appId, serverUrl: baseUrl } });
  await withKey.start();
  try {
    const refused = await withKey.turnOn('Connected with the integration key').then(
      () => undefined,
      (error: unknown) => messageOf(error),
    );
    if (refused === undefined)
      throw new Error('a Zap with the integration key was turned on while the type is archived');
    say(`      Turning a Zap on with the integration key stops; the person reads (${refused.length} characters):`);
    say(`        "${refused}"`);
  } finally {
    await withKey.stop();
  }
  say('      Turning the Zap on with the API Access Key instead:');
};

export const runStory = async ({ events, say, archived = false }: StoryOptions): Promise<StorySummary> => {
  const apiKey = `sk_sandbox_${randomBytes(12).toString('hex')}`;
  const emulator = new SvixEmulator({ apiKey });
  const platform = new PlatformStandIn();
  const baseUrl = await emulator.start();
  const platformUrl = await platform.start();
  let runner: HookRunner | undefined;
  // What the app logs (Zapier's log of the Zap), which core also prints here: indented, under the step it belongs to.
  const print = console.log;
  console.log = (...parts: unknown[]) => say(`      (the app's log) ${parts.map(String).join(' ')}`);
  try {
    say(`[1/7] Svix emulator listening at ${baseUrl} (sandbox key, nothing leaves this machine).`);

    const client = new SvixClient({ baseUrl, apiKey });
    say('[2/7] Set-up (what `npm run setup` does against Svix):');
    const setup = await runSetup({
      client,
      appName: 'Sandbox Auction House',
      say: (line) => say(`      ${line}`),
      ...(archived ? { integrationKey: 'ensure' as const } : {}),
    });

    const authData = { apiKey, appId: setup.appId, serverUrl: baseUrl };
    const auctionService = new AuctionService(client, setup.appId);
    const statusOf = (messageId: string | undefined) =>
      auctionService.emitted.find((event) => event.messageId === messageId)?.status;
    /** The auction an event is about, by the start of its UUID: each line names its own. */
    const auctionOf = (messageId: string | undefined) =>
      auctionService.emitted.find((event) => event.messageId === messageId)?.auctionUuid.slice(0, 8) ?? '?';
    const ranBefore = new Set<string>();
    const explanations: Explanation[] = [];
    const explain = (run: ZapRun): Explanation => {
      const status = statusOf(run.messageId);
      if (status !== undefined && !ZAP_STATUSES.includes(status)) return 'filtered';
      return run.messageId !== undefined && ranBefore.has(run.messageId) ? 'duplicate' : 'unexplained';
    };
    let runNumber = 0;
    const describe = (run: ZapRun): string => {
      const item = run.items[0];
      switch (run.outcome) {
        case 'ran':
          runNumber += 1;
          return [
            `  ▶ Zap run ${runNumber} for ${item?.id ?? '?'}, fields:`,
            ...FIELDS.map(({ key, label }) => `        ${label.padEnd(LABEL_WIDTH)} ${item ? item[key] : ''}`),
          ].join('\n');
        case 'no-items': {
          const why = explain(run);
          explanations.push(why);
          return why === 'filtered'
            ? `  · filtered ${run.messageId ?? '?'}  (auction ${auctionOf(run.messageId)} is now ${statusOf(run.messageId) ?? '?'}: a status not chosen in this Zap)`
            : why === 'duplicate'
              ? `  = dropped  ${run.messageId ?? '?'}  (delivered again; this Zap already ran for it)`
              : `  ? no run   ${run.messageId ?? '?'}  (the Zap should have run for it)`;
        }
        case 'refused':
          return `  ✖ refused  ${run.messageId ?? '?'}  ${run.message ?? ''}`;
        case 'failed':
          return `  ! failed   ${run.messageId ?? '?'}  ${run.message ?? ''}`;
        case 'silent':
          return `  ✖ lost     ${run.messageId ?? '?'}  (${run.message ?? 'no answer'})`;
      }
    };
    runner = new HookRunner({
      app,
      authData,
      platform,
      onRun: (run) => {
        say(describe(run));
        if (run.outcome === 'ran' && run.messageId !== undefined) ranBefore.add(run.messageId);
      },
    });
    const runnerUrl = await runner.start();
    if (archived) await archivedFirst(client, platform, setup, baseUrl, say);
    const zap = await runner.turnOn('Email bidders when an auction opens or sells', { statuses: ZAP_STATUSES });
    say(
      `[3/7] Zapier stand-in at ${runnerUrl}, with Zapier's store for the app (where each event's run is claimed, so it runs once) at ${platformUrl}. Turned a Zap on (only statuses ${ZAP_STATUSES.join(', ')}):`,
    );
    say(`      Turning it on made its endpoint in Svix, ${zap.subscribeData.id}, sending to ${zap.targetUrl}`);
    if (archived)
      say(
        `      ${EVENT_TYPE_NAME} is ${(await isArchived(client)) ? 'still archived' : 'live again'}: the Zap is on.`,
      );

    say(`[4/7] The auction service emits ${events} events (creation, then each status change):`);
    // Alternate: open a new auction, then move the oldest open one on a step.
    while (auctionService.emitted.length < events) await auctionService.emitNext(2);
    await emulator.idle();
    await runner.idle();

    say("[5/7] A forged delivery, signed with a secret that is not the endpoint's:");
    const forgedId = newId('msg');
    await forge(zap, 'wrong-secret', forgedId);
    await runner.idle();

    const redelivered =
      [...auctionService.emitted].reverse().find((event) => ZAP_STATUSES.includes(event.status)) ??
      auctionService.emitted[0];
    if (redelivered) {
      say(`[6/7] Svix delivers ${redelivered.messageId} a second time (at-least-once delivery):`);
      emulator.resend(setup.appId, redelivered.messageId, zap.subscribeData.id);
      await emulator.idle();
      await runner.idle();
    }

    await runner.turnOff(zap);
    // Its endpoint is parked: none is left that Svix delivers to Zapier.
    const endpointsLeft = emulator.reachableEndpoints(setup.appId);
    say(
      `[7/7] Turned the Zap off: its endpoint in Svix is parked (it points at parked.invalid, failing on purpose) and goes ${inWords(SWEEP_PARKED_AFTER_MS)} later, at the next thing the integration does there; endpoints Svix still delivers to Zapier: ${endpointsLeft}.`,
    );

    const fromSvix = runner.runs.filter((run) => run.messageId !== forgedId);
    const ranIds = runner.runs.filter((run) => run.outcome === 'ran').map((run) => run.messageId);
    const wanted = auctionService.emitted.filter((event) => ZAP_STATUSES.includes(event.status));
    return {
      emitted: auctionService.emitted.length,
      delivered: fromSvix.length,
      zapRuns: ranIds.length,
      filtered: explanations.filter((why) => why === 'filtered').length,
      rejected: runner.runs.filter((run) => run.outcome === 'refused').length,
      duplicates: explanations.filter((why) => why === 'duplicate').length,
      doubled: ranIds.length - new Set(ranIds).size,
      failed: runner.runs.filter((run) => run.outcome === 'failed').length,
      lost: wanted.filter((event) => !ranIds.includes(event.messageId)).length,
      endpointsLeft,
    };
  } finally {
    console.log = print;
    await runner?.stop();
    await emulator.stop();
    await platform.stop();
  }
};
