import { createHash, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { runCommand } from '../cli/runCommand';
import app from '../index';
import { ProviderClient } from '../setup/client';
import { runSetup } from '../setup/setup';
import { AuctionBackEnd } from './auctions';
import { ProviderEmulator } from './emulator';
import { newId } from './emulator/store';
import { FORGERIES, forge } from './forgery';
import { HookRunner } from './hookRunner';

/**
 * `npm run soak`: auction events through the whole sandbox (emulator → real
 * HTTP deliveries → the Zapier stand-in → perform), with a share of
 * redeliveries, forged deliveries and transient endpoint failures, counting
 * what was lost, run twice or forged through. Everything stays on loopback,
 * and the run ends after the given number of events.
 */

export interface SoakOptions {
  events: number;
  /** Share of events redelivered, forged, and failed once at the endpoint (each 0.01 by default). */
  redeliveryRate?: number;
  forgeryRate?: number;
  failureRate?: number;
  batchSize?: number;
  say?: (line: string) => void;
}

export interface SoakResult {
  events: number;
  zapRuns: number;
  lost: number;
  doubled: number;
  forgedAccepted: number;
  forged: number;
  forgedRefused: number;
  redelivered: number;
  duplicatesDropped: number;
  transientFailures: number;
  providerRetries: number;
  failedRuns: number;
  peakRssMb: number;
  seconds: number;
}

export const soakLine = (result: SoakResult): string =>
  `soak: events=${result.events} zap_runs=${result.zapRuns} lost=${result.lost} doubled=${result.doubled} ` +
  `forged_accepted=${result.forgedAccepted} forged=${result.forged} forged_refused=${result.forgedRefused} redelivered=${result.redelivered} ` +
  `transient_failures=${result.transientFailures} provider_retries=${result.providerRetries} ` +
  `failed_runs=${result.failedRuns} peak_rss_mb=${result.peakRssMb} seconds=${result.seconds}`;

/** Every `1 / rate`-th index, spread evenly: deterministic, so a run can be repeated. */
const picked = (index: number, rate: number, offset: number): boolean =>
  rate > 0 && (index + offset) % Math.round(1 / rate) === 0;

/** A share `rate` of message ids, picked by a hash of the id. */
const chosen = (messageId: string, rate: number): boolean =>
  rate > 0 && createHash('sha256').update(messageId).digest().readUInt32BE(0) / 0x1_0000_0000 < rate;

export const runSoak = async (options: SoakOptions): Promise<SoakResult> => {
  const say = options.say ?? (() => undefined);
  const redeliveryRate = options.redeliveryRate ?? 0.01;
  const forgeryRate = options.forgeryRate ?? 0.01;
  const failureRate = options.failureRate ?? 0.01;
  const batchSize = options.batchSize ?? 500;
  const started = Date.now();
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 50);
  sampler.unref();

  const apiKey = `sk_soak_${randomBytes(12).toString('hex')}`;
  const emulator = new ProviderEmulator({
    apiKey,
    limits: { maxMessagesPerApp: Math.max(20_000, options.events + 100) },
  });
  const baseUrl = await emulator.start();
  const client = new ProviderClient({ baseUrl, apiKey });
  // Which messages fail once at the endpoint is decided from the message id, so
  // the choice is made before its first attempt arrives. Half fail before the
  // Zap runs (503), half after it ran (the answer is lost, so the provider retries).
  const faulted = new Set<string>();
  const forgedIds = new Set<string>();
  let transientFailures = 0;
  const runner = new HookRunner({
    app,
    authData: { apiKey, appId: (await runSetup({ client, appName: 'Soak Auction House' })).appId, serverUrl: baseUrl },
    fault: (messageId) => {
      // Only the provider's own deliveries fail: a forgery must always reach perform.
      if (!messageId || forgedIds.has(messageId) || faulted.has(messageId) || !chosen(messageId, failureRate))
        return undefined;
      faulted.add(messageId);
      transientFailures += 1;
      return transientFailures % 2 === 1 ? 'unavailable' : 'answer-lost';
    },
  });
  let redelivered = 0;
  try {
    const appId = runner.appId;
    await runner.start();
    const zap = await runner.turnOn('Every status change');
    const backEnd = new AuctionBackEnd(client, appId);

    for (let batchStart = 0; batchStart < options.events; batchStart += batchSize) {
      const batchEnd = Math.min(options.events, batchStart + batchSize);
      for (let index = batchStart; index < batchEnd; index += 1) {
        await backEnd.emitNext(3);
        if (picked(index, forgeryRate, 37)) {
          const kind = FORGERIES[forgedIds.size % FORGERIES.length] ?? 'wrong-secret';
          const id = newId('msg');
          forgedIds.add(id);
          await forge(zap, kind, id);
        }
      }
      await emulator.idle();
      await runner.idle();
      // Redeliver a share of this batch, as the provider does after a lost answer or a manual resend.
      for (let index = batchStart; index < batchEnd; index += 1) {
        const event = backEnd.emitted[index];
        if (event && picked(index, redeliveryRate, 53)) {
          emulator.resend(appId, event.messageId, zap.subscribeData.id);
          redelivered += 1;
        }
      }
      await emulator.idle();
      await runner.idle();
      say(
        `soak: ${batchEnd}/${options.events} events, ${runner.runs.filter((run) => run.outcome === 'ran').length} Zap runs`,
      );
    }
    await runner.turnOff(zap);

    const runsPerMessage = new Map<string, number>();
    for (const run of runner.runs) {
      if (run.outcome === 'ran' && run.messageId)
        runsPerMessage.set(run.messageId, (runsPerMessage.get(run.messageId) ?? 0) + 1);
    }
    const real = backEnd.emitted.map((event) => event.messageId);
    const stats = emulator.stats();
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    return {
      events: real.length,
      zapRuns: real.reduce((total, id) => total + (runsPerMessage.get(id) ?? 0), 0),
      lost: real.filter((id) => !runsPerMessage.has(id)).length,
      doubled: real.reduce((total, id) => total + Math.max(0, (runsPerMessage.get(id) ?? 0) - 1), 0),
      forgedAccepted: [...forgedIds].filter((id) => runsPerMessage.has(id)).length,
      forged: forgedIds.size,
      forgedRefused: runner.runs.filter(
        (run) => run.messageId && forgedIds.has(run.messageId) && run.outcome === 'refused',
      ).length,
      redelivered,
      duplicatesDropped: runner.runs.filter((run) => run.outcome === 'duplicate').length,
      transientFailures,
      providerRetries: stats.deliveries.retriesScheduled,
      failedRuns: runner.runs.filter((run) => run.outcome === 'failed').length,
      peakRssMb: Math.round(peakRss / (1024 * 1024)),
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
  } finally {
    clearInterval(sampler);
    await runner.stop();
    await emulator.stop();
  }
};

export const main = async (argv: string[]): Promise<number> => {
  const { values } = parseArgs({ args: argv, options: { events: { type: 'string' } } });
  const events = values.events === undefined ? 10_000 : Number(values.events);
  if (!Number.isInteger(events) || events < 1 || events > 100_000) {
    process.stderr.write('--events takes a whole number from 1 to 100000.\n');
    return 2;
  }
  const result = await runSoak({ events, say: (line) => process.stdout.write(`${line}\n`) });
  process.stdout.write(`${soakLine(result)}\n`);
  return result.lost === 0 && result.doubled === 0 && result.forgedAccepted === 0 ? 0 : 1;
};

if (require.main === module) runCommand(() => main(process.argv.slice(2)), 'The soak stopped');
