import app from '../../index';
import { SvixClient } from '../setup/client';
import { runSetup } from '../setup/setup';
import { AuctionService } from './auctions';
import { SvixEmulator } from './emulator';
import { HOOK_LIMIT, HookRunner } from './hookRunner';
import { PlatformStandIn } from './platform';

/**
 * A burst, as when a sale of hundreds of lots closes at once: `events` auction
 * events sent together to a Consumer App with `zaps` Zaps on it, through the
 * emulator (Svix's retry schedule compressed a thousand times) to the Zapier
 * stand-in, which refuses deliveries past Zapier's limits (30 a second for one
 * hook, 10,000 in 5 minutes for one person) with 429. The Zaps' endpoints are
 * paced (throttleRates adding up to 25) as Svix Cloud paces them, or not
 * (`paced: false`), as the open-source server's worker, which stores the rate
 * but does not enforce it. Everything stays on loopback.
 */

export interface BurstResult {
  events: number;
  zaps: number;
  /** Whether Svix paced the Zap's endpoint. */
  paced: boolean;
  /** Deliveries Zapier's stand-in answered 429 (past its limits). */
  hookLimitAnswers: number;
  zapRuns: number;
  /** Events that ran more than once in a Zap, and events that never ran in one, counted per Zap. */
  doubled: number;
  lost: number;
  seconds: number;
}

export const burstLine = (result: BurstResult): string =>
  `burst: events=${result.events} zaps=${result.zaps} paced=${result.paced} zapier_429=${result.hookLimitAnswers} ` +
  `zap_runs=${result.zapRuns} doubled=${result.doubled} lost=${result.lost} seconds=${result.seconds}`;

export const runBurst = async (options: {
  events: number;
  paced: boolean;
  /** Zaps on the Consumer App, each running every event (1 by default). */
  zaps?: number;
  /** Zapier's limit for one hook, as the stand-in applies it (HOOK_LIMIT by default). */
  hookLimit?: typeof HOOK_LIMIT;
  /** Svix's retries after a refused delivery (the sandbox's compressed schedule by default). */
  retryScheduleMs?: readonly number[];
  /** Told how far the burst has got, every `sayEveryMs` (5 s by default). */
  say?: (line: string) => void;
  sayEveryMs?: number;
}): Promise<BurstResult> => {
  const apiKey = 'testsk_burst';
  const emulator = new SvixEmulator({
    apiKey,
    paceDeliveries: options.paced,
    concurrency: 64,
    ...(options.retryScheduleMs ? { retryScheduleMs: options.retryScheduleMs } : {}),
  });
  const platform = new PlatformStandIn();
  const baseUrl = await emulator.start();
  await platform.start();
  const client = new SvixClient({ baseUrl, apiKey });
  const { appId } = await runSetup({ client, appName: 'Burst Auction House' });
  const runner = new HookRunner({
    app,
    platform,
    authData: { apiKey, appId, serverUrl: baseUrl },
    hookLimit: options.hookLimit ?? HOOK_LIMIT,
  });
  const started = Date.now();
  try {
    await runner.start();
    const zaps = [];
    for (let index = 0; index < (options.zaps ?? 1); index += 1) zaps.push(await runner.turnOn(`Zap ${index + 1}`));
    const auctions = new AuctionService(client, appId);
    const auctioneer = auctions.auctioneers[0];
    if (!auctioneer) throw new Error('the auction service has no auctioneer');
    // Every event made first, then all sent together: a burst, however fast this machine makes them.
    const release = emulator.holdDeliveries();
    await Promise.all(Array.from({ length: options.events }, () => auctions.createAuction(auctioneer)));
    release();
    // Svix retries what Zapier refused, on its (compressed) schedule; the runs finish. Long work says how far it got.
    const expected = options.events * zaps.length;
    const progress = setInterval(() => {
      const ran = runner.runs.filter((run) => run.outcome === 'ran').length;
      const refused = runner.hookLimitAnswers;
      options.say?.(
        `      ${ran} of ${expected} Zap runs so far, ${Math.round((Date.now() - started) / 1000)} s in; Zapier refused ${refused}.`,
      );
    }, options.sayEveryMs ?? 5_000);
    try {
      for (let settled = 0; settled < 2; settled += 1) {
        await emulator.idle();
        await runner.idle();
      }
    } finally {
      clearInterval(progress);
    }
    for (const zap of zaps) await runner.turnOff(zap);
    const runs = new Map<string, number>();
    for (const run of runner.runs) {
      const key = `${run.zapId} ${run.messageId ?? ''}`;
      if (run.outcome === 'ran') runs.set(key, (runs.get(key) ?? 0) + 1);
    }
    const sent = zaps.flatMap((zap) => auctions.emitted.map((event) => runs.get(`${zap.id} ${event.messageId}`) ?? 0));
    return {
      events: auctions.emitted.length,
      zaps: zaps.length,
      paced: options.paced,
      hookLimitAnswers: runner.hookLimitAnswers,
      zapRuns: sent.reduce((total, count) => total + count, 0),
      doubled: sent.filter((count) => count > 1).length,
      lost: sent.filter((count) => count === 0).length,
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
  } finally {
    await runner.stop();
    await emulator.stop();
    await platform.stop();
  }
};
