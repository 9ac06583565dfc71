import { createHash, randomBytes } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { ClientRequest } from 'node:http';
import { parseArgs } from 'node:util';
import { runCommand } from '../cli/runCommand';
import { createApp } from '../../index';
import { Runtime } from '../../delivery/runtime';
import { endpointKey } from '../../delivery/known';
import { connectionScope } from '../../svix/connection';
import { SvixClient } from '../setup/client';
import { runSetup } from '../setup/setup';
import { Random } from '../sim/random';
import { AuctionService } from './auctions';
import { SvixEmulator, type Fault, type FaultContext } from './emulator';
import { newId, newSecret } from './emulator/store';
import { FORGERIES, forge, isForgedBody, type Forgery } from './forgery';
import { HookRunner, performingFor, type Edit, type ZapRun } from './hookRunner';
import { claimKey } from '../../delivery/claim';
import { PlatformStandIn, type CacheCall, type RpcFault } from './platform';

/**
 * `npm run soak`: auction events through the whole sandbox (emulator → real
 * HTTP deliveries → the Zapier stand-in → perform, with z.cache on the
 * platform stand-in), counting what was lost, run twice or forged through.
 * Along the way: redeliveries that overlap the first delivery, forged
 * deliveries (among them some signed with a revoked secret), transient
 * failures at the endpoint, throttles and faults of the cache inside perform,
 * rotations of the endpoint's secret as soon as they are due (immediate and
 * with a grace period in turn) while deliveries signed with the old secret
 * still wait in Zapier's queue, and Svix errors and time-outs while
 * perform reads the rotated secret. Everything stays on loopback, and the run
 * ends after the given number of events.
 *
 * All of Zapier's side runs in this one process, which zapier-platform-core
 * stops once it holds 450 MB; `npm run soak` holds V8's heap to 256 MB, as a
 * Lambda of modest size does, so garbage is collected before it piles up
 * (the live data stays near 50 MB).
 */

export interface SoakOptions {
  events: number;
  /** Shares of events redelivered at once (overlapping the first delivery), forged, and failed once at the endpoint. */
  redeliveryRate?: number;
  forgeryRate?: number;
  failureRate?: number;
  /** Share of messages whose claim in z.cache meets a fault. */
  cacheFaultRate?: number;
  /** Every other z.cache call on a key that is no claim is throttled. */
  otherCacheFaults?: boolean;
  /**
   * Rotations of the endpoint's secret, spread evenly over the events and
   * made as soon as each is due: immediate and with a grace period in turn.
   */
  rotations?: number;
  /** Each the round trip time of the platform stand-in's cache, so overlapping deliveries really overlap. */
  cacheDelayMs?: number;
  /** How far Svix's signing clock is from this side's (negative: behind). */
  signingOffsetMs?: number;
  /** Junk deliveries sent at once right after each rotation (signed with no secret the endpoint had). */
  junkBursts?: number;
  /** The Zap is edited once half-way, deliveries in flight, in the order and at the URL the seed picks (default). */
  edit?: boolean;
  /**
   * The share of performs run each in a fresh process of its own, as Zapier's runtime (AWS Lambda) runs them: cold,
   * with nothing else holding the event loop, so an operation cut off unanswered shows (a silent exit is lost).
   */
  bareShare?: number;
  /**
   * Fixes the plan: which events are redelivered and forged, the order of the kinds of forgery, and
   * which messages fail once or meet a cache fault. Ids and timings come from real HTTP.
   */
  seed?: number;
  say?: (line: string) => void;
}

export interface SoakResult {
  seed: number;
  events: number;
  zapRuns: number;
  lost: number;
  doubled: number;
  forgedAccepted: number;
  forged: number;
  forgedRefused: number;
  /** Forgeries under a real message's id: they may run that message (its Svix copy), never their own body. */
  forgedReplays: number;
  /** Forgeries signed with a secret revoked by a rotation (and seen replaced by the integration). */
  forgedWithRevoked: number;
  /** Forgeries planned with a revoked secret and never sent: no process of the app learnt of a rotation. */
  revokedUnsent: number;
  redelivered: number;
  /** Performs that started while another perform of the same message was running. */
  overlapping: number;
  duplicatesDropped: number;
  transientFailures: number;
  svixRetries: number;
  /** Attempts the hook runner did not answer within Svix's timeout (a busy machine): each is retried too. */
  endpointUnanswered: number;
  /** Attempts to a hook that served no Zap at that moment (the edit's): Svix retries those it scheduled. */
  notServed: number;
  cacheFaults: number;
  /** Zap runs whose claim was never stored (the cache kept throttling): a redelivery could run them again. */
  unclaimed: number;
  rotations: number;
  /** The edit made half-way, if any: its order and whether the target URL stayed. */
  edit: string;
  secretReads: number;
  /** Reads of a message's record at Svix, for deliveries the current secret did not sign. */
  recordReads: number;
  secretReadFaults: number;
  /** Junk sent in bursts right after rotations, and the calls to Svix that performs of any junk made. */
  junkBurst: number;
  junkSvixCalls: number;
  /** z.cache calls on keys other than claims that were throttled (`--other-cache-faults`). */
  otherCacheFaults: number;
  failedRuns: number;
  /** Performs run in processes of their own, and those that ended without answering (counted as lost). */
  bareRuns: number;
  silentExits: number;
  /** For each lost event, its message id and what became of its deliveries. */
  lostDetail: string[];
  /** Each failed run: its message id, whether the delivery was forged, and the error it showed. */
  failedDetail: string[];
  peakRssMb: number;
  seconds: number;
}

export const soakLine = (result: SoakResult): string =>
  `soak: seed=${result.seed} events=${result.events} zap_runs=${result.zapRuns} lost=${result.lost} doubled=${result.doubled} ` +
  `forged_accepted=${result.forgedAccepted} forged=${result.forged} forged_refused=${result.forgedRefused} ` +
  `forged_replays=${result.forgedReplays} forged_with_revoked=${result.forgedWithRevoked} revoked_unsent=${result.revokedUnsent} ` +
  `redelivered=${result.redelivered} overlapping=${result.overlapping} ` +
  `transient_failures=${result.transientFailures} svix_retries=${result.svixRetries} ` +
  `endpoint_unanswered=${result.endpointUnanswered} not_served=${result.notServed} ` +
  `cache_faults=${result.cacheFaults} unclaimed=${result.unclaimed} rotations=${result.rotations} edit=${result.edit} ` +
  `secret_reads=${result.secretReads} secret_read_faults=${result.secretReadFaults} ` +
  `record_reads=${result.recordReads} other_cache_faults=${result.otherCacheFaults} junk_burst=${result.junkBurst} ` +
  `junk_svix_calls=${result.junkSvixCalls} svix_calls_per_junk=${perJunk(result)} failed_runs=${result.failedRuns} ` +
  `bare_runs=${result.bareRuns} silent_exits=${result.silentExits} ` +
  `peak_rss_mb=${result.peakRssMb} seconds=${result.seconds}`;

/** The command that runs a soak of the same plan again. */
export const soakReplay = (argv: readonly string[], seed: number): string =>
  `npm run soak -- ${[...argv.filter((arg, index) => arg !== '--seed' && argv[index - 1] !== '--seed' && !arg.startsWith('--seed=')), '--seed', String(seed)].join(' ')}`;

/** What Node's HTTP client publishes when a request starts: the request. */
const isClientRequest = (message: unknown): boolean =>
  typeof message === 'object' && message !== null && 'request' in message && message.request instanceof ClientRequest;

/** Svix calls that performs of forged and junk deliveries made, per such delivery. */
const perJunk = (result: SoakResult): string =>
  (result.junkSvixCalls / Math.max(1, result.forged + result.junkBurst)).toFixed(2);

/** The grace period of every other rotation: deliveries signed before it may still wait in the queue after it ends. */
const GRACE_SECONDS = 1;

/** Every `1 / rate`-th index, spread evenly from an offset the seed gives. */
const picked = (index: number, rate: number, offset: number): boolean =>
  rate > 0 && (index + offset) % Math.round(1 / rate) === 0;

/** A share `rate` of ids, picked by a hash of the id salted with the seed. */
const chosen = (id: string, rate: number, salt: string): boolean =>
  rate > 0 && createHash('sha256').update(`${salt}${id}`).digest().readUInt32BE(0) / 0x1_0000_0000 < rate;

/** The cache faults, in turn: a throttle (`null`, nothing stored), a 503 core retries, and a claim stored whose answer was lost. */
const CACHE_FAULTS: readonly RpcFault['kind'][] = ['throttle', 'unavailable', 'store-then-unavailable'];

/** Svix faults while perform reads a rotated secret, in turn: a 503 and a time-out, each followed by a retry. */
const READ_FAULTS: readonly Fault[] = [
  { kind: 'reply', status: 503, body: '' },
  { kind: 'hang' },
  { kind: 'reply', status: 502, body: '<html>Bad gateway</html>' },
];

export const runSoak = async (options: SoakOptions): Promise<SoakResult> => {
  const say = options.say ?? (() => undefined);
  const redeliveryRate = options.redeliveryRate ?? 0.01;
  const forgeryRate = options.forgeryRate ?? 0.01;
  const failureRate = options.failureRate ?? 0.01;
  const cacheFaultRate = options.cacheFaultRate ?? 0.01;
  const rotations = options.rotations ?? 3;
  const seed = options.seed ?? 1;
  const plan = new Random(seed);
  const offsets = { redelivery: plan.int(0, 9_999), forgery: plan.int(0, 9_999), kind: plan.int(0, 99) };
  const bareChoice = plan.fork();
  const editChoice = plan.fork();
  const edit: Edit | undefined =
    options.edit === false
      ? undefined
      : { order: editChoice.chance(0.5) ? 'subscribe-first' : 'unsubscribe-first', sameUrl: editChoice.chance(0.5) };
  const bareShare = options.bareShare ?? 0;
  const salt = `${seed}:`;
  const started = Date.now();
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 50);
  // Unref'd on purpose: the soak's own sampler must never be what holds its process open, or it would hide a wait of
  // the app's that fails to (src/index.ts never reaches this file: test/runtime/noUnref.test.ts).
  sampler.unref();

  // For every rotation, one read of the secret after it meets a Svix fault.
  let secretReads = 0;
  let secretReadFaults = 0;
  /** Reads still to fault: each rotation adds one, so rotations close together fault reads in a row. */
  let readsToFault = 0;
  let recordReads = 0;
  const readFault = ({ method, path }: FaultContext): Fault | undefined => {
    // Reads of a message by its id, to confirm a delivery the known secret did not sign.
    if (method === 'GET' && /\/msg\/[^/]+$/.test(path)) recordReads += 1;
    if (method !== 'GET' || !path.endsWith('/secret')) return undefined;
    secretReads += 1;
    if (readsToFault === 0) return undefined;
    readsToFault -= 1;
    const fault = READ_FAULTS[secretReadFaults % READ_FAULTS.length];
    secretReadFaults += 1;
    return fault;
  };
  const apiKey = `sk_soak_${randomBytes(12).toString('hex')}`;
  // Deliveries as fast as the emulator sends them, hundreds a second: beyond the 25 a second a Zap's endpoint is
  // paced at, and beyond Zapier's limit for one hook (which the stand-in then leaves off), so that the delivery path
  // meets backlogs, overlaps and busy windows of Svix's record.
  const emulator = new SvixEmulator({
    apiKey,
    paceDeliveries: false,
    limits: { maxMessagesPerApp: Math.max(20_000, options.events + 100) },
    fault: readFault,
    ...(options.signingOffsetMs === undefined ? {} : { signingOffsetMs: options.signingOffsetMs }),
  });
  // Every call to Svix a forged or junk delivery's perform makes, read off Node's HTTP client as it starts.
  let junkSvixCalls = 0;
  const countJunkCall = (message: unknown): void => {
    const performing = performingFor();
    if (performing && isForgedBody(performing.content) && isClientRequest(message)) junkSvixCalls += 1;
  };
  subscribe('http.client.request.start', countJunkCall);
  // Each claimed message meets at most one cache fault: core's client retries within the same call.
  const cacheFaulted = new Set<string>();
  let otherCalls = 0;
  let otherCacheFaults = 0;
  const cacheFault = (call: CacheCall): RpcFault | undefined => {
    // Every other call on a key that is no claim (Skip Outdated's record, the Zap's marks) throttled.
    if (options.otherCacheFaults && !call.key.startsWith('seen:') && (otherCalls += 1) % 2 === 0) {
      otherCacheFaults += 1;
      return { kind: 'throttle' };
    }
    if (call.method !== 'zcache_set' || !call.key.startsWith('seen:') || cacheFaulted.has(call.key)) return undefined;
    if (!chosen(call.key, cacheFaultRate, `${salt}cache`)) return undefined;
    cacheFaulted.add(call.key);
    const kind = CACHE_FAULTS[cacheFaulted.size % CACHE_FAULTS.length] ?? 'throttle';
    return { kind };
  };
  const platform = new PlatformStandIn({ delayMs: options.cacheDelayMs ?? 1, fault: cacheFault });
  const baseUrl = await emulator.start();
  await platform.start();
  const client = new SvixClient({ baseUrl, apiKey });
  // Which messages fail once at the endpoint is decided from the message id, so
  // the choice is made before its first attempt arrives. Half fail before the
  // Zap runs (503), half after Zapier took it (the answer is lost, so Svix retries).
  const faulted = new Set<string>();
  const forgedIds = new Set<string>();
  const revokedIds = new Set<string>();
  const replayedIds = new Set<string>();
  let transientFailures = 0;
  const authData = {
    ...{ apiKey, appId: (await runSetup({ client, appName: 'Soak Auction House' })).appId, serverUrl: baseUrl },
  };
  // The app with a runtime of its own, so that the soak can see what its process knows of the endpoint's secrets.
  const runtime = new Runtime();
  const runner = new HookRunner({
    app: createApp(runtime),
    platform,
    hookLimit: false,
    // A forgery signed with a revoked secret runs in this process, which has read the new one (knownRevoked): a fresh
    // process trusts the subscribe's secret for up to 10 minutes (SECRET_TRUSTED_MS), as promised.
    inBareProcess: (messageId) => !revokedIds.has(messageId ?? '') && bareChoice.chance(bareShare),
    // Calls made in a process of its own are counted there.
    onBareAnswer: (content, svixCalls) => void (isForgedBody(content) && (junkSvixCalls += svixCalls)),
    authData,
    fault: (messageId) => {
      // Only Svix's own deliveries fail: a forgery must always reach perform.
      if (!messageId || forgedIds.has(messageId) || faulted.has(messageId) || !chosen(messageId, failureRate, salt))
        return undefined;
      faulted.add(messageId);
      transientFailures += 1;
      return transientFailures % 2 === 1 ? 'unavailable' : 'answer-lost';
    },
  });
  let redelivered = 0;
  let junkBurst = 0;
  let rotated = 0;
  let forgeries = 0;
  let forgedWithRevoked = 0;
  try {
    const appId = runner.appId;
    await runner.start();
    let zap = await runner.turnOn('Every status change');
    const editAt = edit ? Math.floor(options.events / 2) : -1;
    const auctionService = new AuctionService(client, appId);
    const rotateEvery = rotations > 0 ? Math.floor(options.events / (rotations + 1)) : 0;
    let secret = zap.subscribeData.secret;
    /** Secrets replaced by a rotation, newest first. */
    const replaced: string[] = [];
    /**
     * The newest secret this process has seen replaced (it read the new one), if any. Revocation is promised from
     * that moment in this process (in every process 10 minutes after the rotation); before it, the old secret may
     * still be the newest one it knows.
     */
    const knownRevoked = (): string | undefined => {
      const known = runtime.endpoints.peek(endpointKey(connectionScope(authData), zap.subscribeData.id));
      return replaced.find((old) => known?.replaced.includes(old) === true);
    };
    /** Forgeries signed with a revoked secret wait until there is one; then they go, the oldest first. */
    const heldBack: Array<{ kind: Forgery; id: string }> = [];
    const sendHeldBack = async (): Promise<void> => {
      // Nothing to send, or no secret replaced yet (knownRevoked could only answer undefined).
      if (heldBack.length === 0 || replaced.length === 0) return;
      const revoked = knownRevoked();
      if (!revoked) return;
      for (const { kind, id } of heldBack.splice(0)) {
        forgedWithRevoked += 1;
        revokedIds.add(id);
        await forge(zap, kind, id, { revokedSecret: revoked });
      }
    };
    const sendForgery = async (kind: Forgery, realId: string | undefined): Promise<void> => {
      forgeries += 1;
      const id = kind === 'replayed-id-other-body' && realId ? realId : newId('msg');
      (id === realId ? replayedIds : forgedIds).add(id);
      if (kind === 'revoked-secret' || kind === 'replayed-id-other-body') {
        heldBack.push({ kind, id });
        await sendHeldBack();
      } else {
        await forge(zap, kind, id);
      }
    };

    for (let index = 0; index < options.events; index += 1) {
      if (edit && index === editAt) {
        // Edited while deliveries are in flight: a new endpoint and secret, runs claimed under the same Zap.
        zap = await runner.edit(zap, edit);
        secret = zap.subscribeData.secret;
        replaced.length = 0;
      }
      if (rotateEvery > 0 && rotated < rotations && index >= rotateEvery * (rotated + 1)) {
        // Due: made at once, whatever is still waiting in the queue. Immediate and with a grace
        // period in turn; the new key is given, so the soak knows which secret was revoked.
        const key = newSecret();
        await client.call({
          method: 'POST',
          path: `/api/v1/app/${appId}/endpoint/${zap.subscribeData.id}/secret/rotate`,
          body: { key, gracePeriodSeconds: rotated % 2 === 0 ? 0 : GRACE_SECONDS },
          action: 'rotating the endpoint secret',
        });
        replaced.unshift(secret);
        secret = key;
        rotated += 1;
        readsToFault += 1;
        // Junk right after the rotation: signed with no secret the endpoint had, under made-up ids.
        const burst = Array.from({ length: options.junkBursts ?? 0 }, () => newId('msg'));
        for (const id of burst) forgedIds.add(id);
        junkBurst += burst.length;
        await Promise.all(burst.map((id) => forge(zap, 'wrong-secret', id)));
      }
      await auctionService.emitNext(3);
      const event = auctionService.emitted[auctionService.emitted.length - 1];
      if (event && picked(index, redeliveryRate, offsets.redelivery)) {
        // Sent again at once, while the first delivery is on its way: the two overlap.
        emulator.resend(appId, event.messageId, zap.subscribeData.id);
        redelivered += 1;
      }
      if (picked(index, forgeryRate, offsets.forgery)) {
        await sendForgery(FORGERIES[(forgeries + offsets.kind) % FORGERIES.length] ?? 'wrong-secret', event?.messageId);
      } else {
        await sendHeldBack();
      }
      if ((index + 1) % 1_000 === 0) say(`soak: ${index + 1}/${options.events} events sent`);
    }
    // Deliveries that failed at the endpoint come back on Svix's (compressed) schedule.
    // Forgeries still held back go once the integration has seen a rotation.
    for (let settled = 1; settled <= 3; settled += 1) {
      const began = Date.now();
      await emulator.idle();
      const svixIdle = Date.now();
      await runner.idle();
      const runnerIdle = Date.now();
      const held = heldBack.length;
      await sendHeldBack();
      say(
        `soak: settle ${settled}/3: Svix's queue ${((svixIdle - began) / 1000).toFixed(1)} s, the Zaps' runs ` +
          `${((runnerIdle - svixIdle) / 1000).toFixed(1)} s, ${held - heldBack.length} of ${held} forgeries signed ` +
          `with a revoked secret sent in ${((Date.now() - runnerIdle) / 1000).toFixed(1)} s`,
      );
    }
    await runner.turnOff(zap);

    const runsPerMessage = new Map<string, number>();
    for (const run of runner.runs) {
      if (run.outcome === 'ran' && run.messageId)
        runsPerMessage.set(run.messageId, (runsPerMessage.get(run.messageId) ?? 0) + 1);
    }
    const real = auctionService.emitted.map((event) => event.messageId);
    const lostIds = real.filter((id) => !runsPerMessage.has(id));
    const lostDetail = lostIds.map((id) => {
      const outcomes = runner.runs
        .filter((run) => run.messageId === id)
        .map((run) => (run.message ? `${run.outcome}: ${run.message}` : run.outcome));
      return `${id}: ${outcomes.length > 0 ? outcomes.join(' | ') : 'never reached perform'}`;
    });
    // A run is the event only if it carries what the auction service sent under that id: a forged
    // body that reached a Zap (under a made-up or a real id) is a forgery accepted.
    const sent = new Map(auctionService.emitted.map((event) => [event.messageId, event]));
    const carriesForgery = (run: ZapRun): boolean => {
      const event = run.messageId ? sent.get(run.messageId) : undefined;
      return run.items.some((item) => !event || item.auctionUuid !== event.auctionUuid || item.status !== event.status);
    };
    const kindOf = (id: string | undefined): string =>
      id === undefined || forgedIds.has(id) ? 'forged' : replayedIds.has(id) ? 'a real id, maybe replayed' : 'genuine';
    const failedDetail = runner.runs
      .filter((run) => run.outcome === 'failed')
      .map((run) => `${run.messageId ?? '?'} (${kindOf(run.messageId)}): ${run.message ?? ''}`);
    const stats = emulator.stats();
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    const ran = [...runsPerMessage.keys()].filter((id) => sent.has(id));
    return {
      seed,
      events: real.length,
      zapRuns: real.reduce((total, id) => total + (runsPerMessage.get(id) ?? 0), 0),
      lost: lostIds.length,
      doubled: real.reduce((total, id) => total + Math.max(0, (runsPerMessage.get(id) ?? 0) - 1), 0),
      forgedAccepted: runner.runs.filter((run) => run.outcome === 'ran' && carriesForgery(run)).length,
      forged: forgeries,
      forgedRefused: runner.runs.filter(
        (run) => run.messageId && forgedIds.has(run.messageId) && run.outcome === 'refused',
      ).length,
      forgedReplays: replayedIds.size,
      forgedWithRevoked,
      revokedUnsent: heldBack.length,
      redelivered,
      overlapping: runner.runs.filter((run) => run.overlapped).length,
      duplicatesDropped: runner.runs.filter(
        (run) => run.outcome === 'no-items' && run.messageId !== undefined && runsPerMessage.has(run.messageId),
      ).length,
      transientFailures,
      svixRetries: stats.deliveries.retriesScheduled,
      endpointUnanswered: stats.deliveries.unanswered,
      notServed: runner.notServedAnswers,
      cacheFaults: platform.calls.filter((call) => call.fault !== undefined).length,
      unclaimed: ran.filter((id) => platform.peek(runner.identity, claimKey(zap.subscribeData.zap, id)) === undefined)
        .length,
      rotations: rotated,
      edit: edit ? `${edit.order}/${edit.sameUrl ? 'same-url' : 'new-url'}` : 'none',
      secretReads,
      secretReadFaults,
      recordReads,
      junkBurst,
      junkSvixCalls,
      otherCacheFaults,
      failedRuns: runner.runs.filter((run) => run.outcome === 'failed').length,
      bareRuns: runner.runs.filter((run) => run.bare).length,
      silentExits: runner.runs.filter((run) => run.outcome === 'silent').length,
      lostDetail,
      failedDetail,
      peakRssMb: Math.round(peakRss / (1024 * 1024)),
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
  } finally {
    unsubscribe('http.client.request.start', countJunkCall);
    clearInterval(sampler);
    await runner.stop();
    await emulator.stop();
    await platform.stop();
  }
};

const USAGE = `Usage: npm run soak [-- --events N] [--share S] [--rotations R] [--other-cache-faults]
                     [--svix-clock-behind SECONDS] [--junk-bursts N] [--bare S] [--seed N] [--json]

  --events N      auction events to send (default 10000, at most 100000)
  --share S       the share of events redelivered, forged, failed once and meeting a cache fault
                  (default 0.01)
  --rotations R   rotations of the endpoint's secret, each made as soon as it is due,
                  immediate and with a 1-second grace period in turn (default 3, at most 15)
  --other-cache-faults
                  throttle every other z.cache call that is not a claim (Skip Outdated's record,
                  the Zap's marks); --history-faults, its old name, does the same
  --svix-clock-behind SECONDS
                  Svix signs with a clock this many seconds behind this side's (at most 240)
  --junk-bursts N junk deliveries sent at once right after each rotation (at most 100)
  --bare S        the share of performs run each in a fresh process of its own, as Zapier's
                  runtime runs them; one that ends without answering counts as lost (default 0.01)
  --seed N        the plan's seed: which events are redelivered, forged, failed once and
                  faulted, and how the Zap is edited (default: one from the clock, printed)
  --no-edit       leave the Zap as it is (by default it is edited half-way, events in flight)
  --json          end with the result as one line of JSON instead of the summary line`;

/** A whole number from `min` to `max`, or NaN. */
const wholeNumber = (text: string | undefined, fallback: number, min: number, max: number): number => {
  const value = text === undefined ? fallback : Number(text);
  return Number.isInteger(value) && value >= min && value <= max ? value : Number.NaN;
};

export const main = async (argv: string[]): Promise<number> => {
  let values: {
    events?: string;
    share?: string;
    rotations?: string;
    'other-cache-faults'?: boolean;
    'history-faults'?: boolean;
    'svix-clock-behind'?: string;
    'junk-bursts'?: string;
    seed?: string;
    bare?: string;
    'no-edit'?: boolean;
    json?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        events: { type: 'string' },
        share: { type: 'string' },
        rotations: { type: 'string' },
        'other-cache-faults': { type: 'boolean' },
        'history-faults': { type: 'boolean' },
        'svix-clock-behind': { type: 'string' },
        'junk-bursts': { type: 'string' },
        seed: { type: 'string' },
        bare: { type: 'string' },
        'no-edit': { type: 'boolean' },
        json: { type: 'boolean' },
      },
    }));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    return 2;
  }
  const events = wholeNumber(values.events, 10_000, 1, 100_000);
  const share = values.share === undefined ? 0.01 : Number(values.share);
  const rotations = wholeNumber(values.rotations, 3, 0, 15);
  const behind = wholeNumber(values['svix-clock-behind'], 0, 0, 240);
  const junkBursts = wholeNumber(values['junk-bursts'], 0, 0, 100);
  const seed = wholeNumber(values.seed, Date.now() % 2 ** 31, 0, 2 ** 31 - 1);
  const bare = values.bare === undefined ? 0.01 : Number(values.bare);
  if (
    [events, rotations, behind, junkBursts, seed].some(Number.isNaN) ||
    !(share >= 0 && share <= 0.2) ||
    !(bare >= 0 && bare <= 1)
  ) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const result = await runSoak({
    events,
    redeliveryRate: share,
    forgeryRate: share,
    failureRate: share,
    cacheFaultRate: share,
    rotations,
    otherCacheFaults: values['other-cache-faults'] === true || values['history-faults'] === true,
    signingOffsetMs: -behind * 1000,
    junkBursts,
    bareShare: bare,
    edit: values['no-edit'] !== true,
    seed,
    say: (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(`${values.json ? JSON.stringify(result) : soakLine(result)}\n`);
  if (!values.json) process.stdout.write(`soak: replay with ${soakReplay(argv, seed)}\n`);
  if (!values.json) {
    for (const line of result.lostDetail) process.stdout.write(`lost: ${line}\n`);
    for (const line of result.failedDetail) process.stdout.write(`failed: ${line}\n`);
  }
  // A run that planned forgeries signed with a revoked secret and sent none has not tested revocation.
  if (result.forgedWithRevoked === 0 && result.revokedUnsent > 0 && result.rotations > 0)
    process.stdout.write('soak: failed: no forgery signed with a revoked secret was sent\n');
  const revocationTested = result.forgedWithRevoked > 0 || result.revokedUnsent === 0 || result.rotations === 0;
  return result.lost === 0 && result.doubled === 0 && result.forgedAccepted === 0 && revocationTested ? 0 : 1;
};

if (require.main === module) runCommand(() => main(process.argv.slice(2)), 'The soak stopped');
