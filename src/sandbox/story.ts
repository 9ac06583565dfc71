import { randomBytes } from 'node:crypto';
import app from '../index';
import { ProviderClient } from '../setup/client';
import { runSetup } from '../setup/setup';
import { AuctionBackEnd } from './auctions';
import { ProviderEmulator } from './emulator';
import { newId } from './emulator/store';
import { forge } from './forgery';
import { HookRunner, type ZapRun } from './hookRunner';

/**
 * `npm start`: the whole story on this machine, with no account and no network.
 * The provider emulator, the set-up, a Zap turned on through the trigger's
 * performSubscribe, auctions whose status changes travel as signed HTTP
 * deliveries into the trigger's perform, one forged delivery, one redelivery,
 * and the Zap turned off again.
 */

export interface StoryOptions {
  events: number;
  say: (line: string) => void;
}

export interface StorySummary {
  emitted: number;
  delivered: number;
  zapRuns: number;
  filtered: number;
  rejected: number;
  /** Redeliveries perform dropped because the Zap had already run for them. */
  duplicates: number;
  /** Messages the Zap ran more than once: must be 0. */
  doubled: number;
  failed: number;
  endpointsLeft: number;
}

export const ZAP_STATUSES = ['OPEN_FOR_BIDDING', 'LOTS_SOLD'];

/** The fields a Zap step can use, in the order the Zap editor lists them. */
const FIELD_ORDER = ['auctionUuid', 'auctioneerUuid', 'status', 'statusLabel', 'eventType', 'occurredAt'] as const;

const describeRun = (run: ZapRun, runNumber: number): string => {
  const item = run.items[0];
  switch (run.outcome) {
    case 'ran':
      return item
        ? [
            `  ▶ Zap run ${runNumber} for ${item.id}, fields:`,
            ...FIELD_ORDER.map((key) => `        ${key.padEnd(14)} ${item[key]}`),
          ].join('\n')
        : '  ▶ Zap run';
    case 'filtered':
      return `  · filtered ${run.messageId ?? '?'}  (status not chosen in this Zap)`;
    case 'duplicate':
      return `  = dropped  ${run.messageId ?? '?'}  (delivered again; this Zap already ran for it)`;
    case 'refused':
      return `  ✖ refused  ${run.messageId ?? '?'}  ${run.message ?? ''}`;
    case 'failed':
      return `  ! failed   ${run.messageId ?? '?'}  ${run.message ?? ''}`;
  }
};

export const summaryLine = (summary: StorySummary): string =>
  `summary: emitted=${summary.emitted} delivered=${summary.delivered} zap_runs=${summary.zapRuns} ` +
  `filtered=${summary.filtered} rejected=${summary.rejected} duplicates=${summary.duplicates} doubled=${summary.doubled} ` +
  `failed=${summary.failed} endpoints_left=${summary.endpointsLeft}`;

export const runStory = async ({ events, say }: StoryOptions): Promise<StorySummary> => {
  const apiKey = `sk_sandbox_${randomBytes(12).toString('hex')}`;
  const emulator = new ProviderEmulator({ apiKey });
  const baseUrl = await emulator.start();
  let runner: HookRunner | undefined;
  try {
    say(`[1/7] Provider emulator listening at ${baseUrl} (sandbox key, nothing leaves this machine).`);

    const client = new ProviderClient({ baseUrl, apiKey });
    say('[2/7] Set-up (what `npm run setup` does against the real provider):');
    const setup = await runSetup({ client, appName: 'Sandbox Auction House', say: (line) => say(`      ${line}`) });

    const authData = { apiKey, appId: setup.appId, serverUrl: baseUrl };
    let runs = 0;
    runner = new HookRunner({
      app,
      authData,
      onRun: (run) => say(describeRun(run, run.outcome === 'ran' ? ++runs : runs)),
    });
    const runnerUrl = await runner.start();
    const zap = await runner.turnOn('Email bidders when an auction opens or sells', { statuses: ZAP_STATUSES });
    say(`[3/7] Zapier stand-in at ${runnerUrl}. Turned a Zap on (only statuses ${ZAP_STATUSES.join(', ')}):`);
    say(`      performSubscribe created endpoint ${zap.subscribeData.id} for ${zap.targetUrl}`);

    say(`[4/7] The auction back-end emits ${events} events (creation, then each status change):`);
    const backEnd = new AuctionBackEnd(client, setup.appId);
    // Alternate: open a new auction, then move the oldest open one on a step.
    while (backEnd.emitted.length < events) await backEnd.emitNext(2);
    await emulator.idle();
    await runner.idle();

    say("[5/7] A forged delivery, signed with a secret that is not the endpoint's:");
    const forgedId = newId('msg');
    await forge(zap, 'wrong-secret', forgedId);
    await runner.idle();

    const redelivered =
      [...backEnd.emitted].reverse().find((event) => ZAP_STATUSES.includes(event.status)) ?? backEnd.emitted[0];
    if (redelivered) {
      say(`[6/7] The provider delivers ${redelivered.messageId} a second time (at-least-once delivery):`);
      emulator.resend(setup.appId, redelivered.messageId, zap.subscribeData.id);
      await emulator.idle();
      await runner.idle();
    }

    const off: unknown = await runner.turnOff(zap);
    const endpoints = await client.call({
      method: 'GET',
      path: `/api/v1/app/${setup.appId}/endpoint`,
      action: 'listing endpoints',
    });
    const endpointsLeft =
      typeof endpoints.body === 'object' &&
      endpoints.body !== null &&
      'data' in endpoints.body &&
      Array.isArray(endpoints.body.data)
        ? endpoints.body.data.length
        : -1;
    say(
      `[7/7] Turned the Zap off: performUnsubscribe ${JSON.stringify(off)}; endpoints left in the Consumer App: ${endpointsLeft}.`,
    );

    const fromProvider = runner.runs.filter((run) => run.messageId !== forgedId);
    const ran = runner.runs.filter((run) => run.outcome === 'ran');
    const ranIds = ran.map((run) => run.messageId);
    const summary: StorySummary = {
      emitted: backEnd.emitted.filter((event) => event.messageId !== undefined).length,
      delivered: fromProvider.length,
      zapRuns: ran.length,
      filtered: runner.runs.filter((run) => run.outcome === 'filtered').length,
      rejected: runner.runs.filter((run) => run.outcome === 'refused').length,
      duplicates: runner.runs.filter((run) => run.outcome === 'duplicate').length,
      doubled: ranIds.length - new Set(ranIds).size,
      failed: runner.runs.filter((run) => run.outcome === 'failed').length,
      endpointsLeft,
    };
    return summary;
  } finally {
    await runner?.stop();
    await emulator.stop();
  }
};
