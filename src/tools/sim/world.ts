import { errors } from 'zapier-platform-core';
import { SECRET_TRUSTED_MS, SVIX_CLOCK_ALLOWANCE_MS, SWEEP_PARKED_AFTER_MS } from '../../limits';
import { sweep } from '../../zap/life';
import { callerOf } from '../../svix/client';
import { Runtime } from '../../delivery/runtime';
import { clockOf } from '../../zapier/clock';
import type { Io } from '../../zapier/io';
import { operationsFor } from '../../triggers/auctionStatusChanged';
import { SimCache, type CacheCall } from './cache';
import { judge } from './oracle';
import { FORGERIES, PROCESS_SKEW, T0 } from './vocabulary';
import type { Deliver, Kind, Life, PerformRecord, Process, SimDelivery } from './vocabulary';
import { Random } from './random';
import { EventLoop, Scheduler } from './scheduler';
import type { Setting } from './settings';
import { SimSvix, type SimMessage, type SvixCall } from './svix';
import { retryDelayMs, RETRY_SCHEDULE_MS, type FailedAttempt } from '../svix/rules';
import type { SubscribeData } from '../../models/inbound';
import { encodeMetadata, shareOf, zapScopeOf, zapUidOf } from '../../zap/policy';
import { SimZaps, type Subscribed } from './zaps';

/** One simulated run: auction events from a simulated Svix through Zapier's queue to 1–4 processes, each a Runtime of
 * the app's real delivery code on its own virtual clock and simulated ports (z.cache, Svix), adversity in every part.
 * Everything random comes from one seed; the oracle (oracle.ts) judges the run. */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** Grace periods of rotations (s). */
const GRACES = [1, 30, 600];
const STATUSES = ['CREATED', 'OPEN_FOR_BIDDING', 'CLOSED', 'LOTS_SOLD', 'CANCELLED'];
/** How far Svix's clock may step from where it began, and the furthest ahead it may go: past 5 minutes ahead, every
 * receiver refuses its signatures. */
const CLOCK_STEP_MS = SVIX_CLOCK_ALLOWANCE_MS;
const CLOCK_AHEAD_MS = 290 * SECOND;

/** For the oracle's own tests: what a process's timers do (none holding the loop, say), and its delivery (broken). */
type Timers = Pick<EventLoop, 'setTimeout' | 'clearTimeout'>;
export type Variation = {
  timers?: (loop: EventLoop) => Timers;
  deliver?: (deliver: Deliver) => Deliver;
  /** Each delivery Zapier takes, as it takes it, with the subscription its perform is handed. */
  received?: (delivery: SimDelivery, subscription: SubscribeData) => void;
};

const headersOf = ({ id, signedAt, signature }: SimDelivery) => ({
  ...{ 'Http-Svix-Id': id, 'Http-Svix-Timestamp': String(signedAt / SECOND), 'Http-Content-Type': 'application/json' },
  ...(signature === undefined ? {} : { 'Http-Svix-Signature': signature }),
});

/** A duration of up to `max` ms, heavy-tailed: most short, a few near `max`. */
const heavy = (random: Random, least: number, max: number): number => least + (max - least) * random.between() ** 4;

export const simulate = async (setting: Setting, seed: number, vary: Variation = {}) => {
  const { share } = setting;
  const root = new Random(seed);
  const [plan, zapierRandom, faultRandom] = [root.fork(), root.fork(), root.fork()];
  const scheduler = new Scheduler(T0);
  const svixRandom = root.fork();
  const faults = { random: faultRandom, share };
  const svix = new SimSvix(svixRandom, scheduler, setting.svixClockSeconds * SECOND, faults, setting.endpoints);
  const commits = root.fork(); // how long Svix's transaction writing a message takes
  const retries = root.fork(); // the jitter of Svix's retries
  const editing = root.fork(); // the Zaps' edits
  const flooding = root.fork(); // forgers flooding junk after an immediate rotation, then using the replaced secret
  const reading = plan.chance(0.5) ? 'zapier' : 'redis';
  const cacheOptions = {
    reading,
    share,
    slowMs: setting.cacheLatencyMs,
    throttledSet: setting.throttledSetAnswer === 'false' ? false : null,
  } as const;
  const cache = new SimCache(scheduler, faultRandom.fork(), cacheOptions);
  const performs: PerformRecord[] = [];
  /** The Svix and z.cache calls of turning Zaps on and off, and whether the last to end checked the pace. */
  const operationCalls: SvixCall[] = [];
  const operationCacheCalls: CacheCall[] = [];
  let paceChecked = true;
  const busy = new Set<Life>(); // the lives with performs running

  /** A process starts (or goes cold): a new runtime, as Zapier starts a new process, on a loop of its own. */
  const newLife = (process: Process): Life => {
    const loop = new EventLoop(scheduler);
    const { setTimeout, clearTimeout } = vary.timers?.(loop) ?? loop;
    const clock = clockOf({ now: () => scheduler.now + process.skew, setTimeout, clearTimeout });
    const runtime = new Runtime(clock);
    const made = operationsFor(runtime).deliver;
    const deliver = vary.deliver?.(made) ?? made;
    process.lives.push({ process, number: process.lives.length, runtime, loop, deliver, running: new Set() });
    return lifeOf(process);
  };
  const lifeOf = (process: Process): Life => process.lives[process.lives.length - 1] ?? newLife(process);
  const processes = Array.from({ length: setting.processes }, (_, index) => {
    const process: Process = { index, skew: index === 0 ? 0 : plan.int(-PROCESS_SKEW, PROCESS_SKEW), lives: [] };
    return newLife(process).process;
  });
  /** The Zaps on at the start, each subscribed before the run at a hook of its own (its endpoint made then, paced
   * with the others), as the app's subscribe stores it: its id and first secret, whether it learnt the cache honours
   * nx, its Zap's scope, generation and since when it runs events. */
  const zaps = new SimZaps();
  const metaOf = (zap: number) => (setting.noMeta ? undefined : { zap: { id: `zap-${zap}` } });
  svix.endpoints.forEach((endpoint, index) => {
    const hook = zaps.newHook();
    const scope = zapScopeOf(metaOf(index)?.zap, hook);
    const metadata = encodeMetadata({ zap: scope, gen: 1, on: scheduler.now });
    Object.assign(endpoint.record, {
      uid: zapUidOf(scope),
      url: hook,
      metadata,
      throttleRate: shareOf(setting.endpoints),
    });
    endpoint.urls.push({ at: scheduler.now, url: hook });
    const data: SubscribeData = {
      ...{ id: endpoint.id, secret: endpoint.current.key, checkedAt: scheduler.now },
      ...{ zap: scope, on: scheduler.now, gen: 1 },
    };
    zaps.subscribed(index, hook, data, scheduler.now)();
  });
  const authData = { apiKey: 'testsk_simulated', appId: svix.appId, serverUrl: 'http://127.0.0.1:9' };

  /** The ports a perform's calls go through; every call holds its process's event loop until answered. */
  const ioFor = ({ loop }: Life, record: Pick<PerformRecord, 'calls' | 'cacheCalls'>, learns = true): Io => ({
    send: (options) => loop.call(() => svix.request(options, record.calls, learns)),
    cache: {
      get: (key) => loop.call(() => cache.get(key, record.cacheCalls)).then((value) => value ?? undefined),
      set: (key, value, ttl, nx) => loop.call(() => cache.set(key, value, ttl, nx, record.cacheCalls)),
    },
    ...{ errors, log: () => undefined },
  });

  /** Ports whose every Svix call Svix answers 503. */
  const svixFailing = (io: Io): Io => ({
    ...io,
    send: (options) => io.send(options, false).then(() => ({ status: 503, content: '' })),
  });

  /**
   * Zapier's runtime, AWS Lambda, runs one invocation per process at a time: a perform starts in the process the
   * delivery went to if it is idle, else in another that is, else in a new process (Lambda scales out); where every
   * delivery goes to a fresh process, in a new life of its own.
   */
  const idleLife = (preferred: Process): Life => {
    if (setting.cold) return newLife(preferred);
    const order = [...processes.slice(preferred.index), ...processes.slice(0, preferred.index)];
    const idle = order.map(lifeOf).find((life) => life.running.size === 0);
    if (idle) return idle;
    const process: Process = {
      index: processes.length,
      skew: zapierRandom.int(-PROCESS_SKEW, PROCESS_SKEW),
      lives: [],
    };
    processes.push(process);
    return newLife(process);
  };
  /** Zapier's queue: a delivery waits, then its perform starts (idleLife). */
  const receive = (delivery: SimDelivery, subscription: SubscribeData): void => {
    vary.received?.(delivery, subscription);
    const waited = zapierRandom.chance(share) ? zapierRandom.between(SECOND, 5 * MINUTE) : zapierRandom.between(5, 300);
    const process = zapierRandom.pick(processes);
    const start = () => startPerform(idleLife(process), delivery, subscription);
    const wait = setting.backlogSeconds * SECOND + waited;
    // Held in Zapier's queue until its perform: a long off of its Zap meanwhile may drop it (off means off).
    if (delivery.message) (delivery.message.held ??= []).push({ from: scheduler.now, until: scheduler.now + wait });
    scheduler.after(wait, start);
  };

  const startPerform = (life: Life, delivery: SimDelivery, subscribeData: SubscribeData): void => {
    const record: PerformRecord = {
      ...{ delivery, process: life.process.index, life: life.number, start: scheduler.now, end: scheduler.now },
      ...{ outcome: 'running', message: '', items: [], calls: [], cacheCalls: [] },
    };
    performs.push(record);
    life.running.add(record);
    busy.add(life);
    const rawRequest = { content: delivery.body, headers: headersOf(delivery) };
    const settle = (outcome: PerformRecord['outcome'], message: string, items: PerformRecord['items'] = []) => {
      if (record.outcome === 'cut') return;
      Object.assign(record, { outcome, message, items: items.map((item) => ({ ...item })), end: scheduler.now });
      life.running.delete(record);
    };
    Promise.resolve()
      .then(() => life.deliver(ioFor(life, record), { authData, subscribeData, inputData: {}, rawRequest }))
      .then(
        (items) => settle(items.length > 0 ? 'ran' : 'no-items', '', items),
        (error: unknown) => {
          if (!(error instanceof Error)) return settle('failed', String(error));
          settle(error.name === 'HaltedError' ? 'halted' : 'failed', error.message);
        },
      );
  };

  /** Zapier's runtime: between timers, the performs of a life whose loop holds nothing are cut off, events lost. */
  const runtimeRule = (): void => {
    for (const life of busy) {
      if (life.running.size === 0) busy.delete(life);
      if (life.running.size === 0 || life.loop.held) continue;
      for (const record of life.running)
        Object.assign(record, { outcome: 'cut', end: scheduler.now, message: 'nothing held the loop' });
      life.running.clear();
    }
  };

  /**
   * Svix attempts a message on an endpoint, at the URL its workers read (up to 30 s stale after a change), while the
   * endpoint is there and enabled. Zapier takes it where that URL serves a subscription: it may fail for a moment,
   * refuse it (429, with a Retry-After Svix holds to 1–2× its wait), or lose its answer; where nothing is served (a
   * parked endpoint, a hook not yet or no longer served) it fails. Each failure is retried on Svix's schedule.
   */
  const attempt = (message: SimMessage, endpointId: string, number: number): void => {
    const endpoint = svix.find(endpointId);
    if (!endpoint || endpoint.record.disabled) return;
    const stale = zapierRandom.chance(share) ? zapierRandom.between(0, 30 * SECOND) : 0;
    const subscription = zaps.servedAt(endpoint.urlAt(scheduler.now - stale));
    if (subscription) message.served = true;
    const seconds = Math.floor(svix.now() / SECOND);
    const signedBy = endpoint.signingAt(scheduler.now);
    const keys = signedBy.map(({ key }) => key);
    const signature = svix.sign(message.id, seconds, message.body, keys);
    const delivery: SimDelivery = {
      ...{ kind: 'genuine', id: message.id, body: message.body, signature, signedBy, endpoint: endpoint.index },
      ...{ signedAt: seconds * SECOND, message, attempt: number },
    };
    const refused = subscription && zapierRandom.chance(setting.zapierRefuses) ? 'refused' : undefined;
    const failed = !subscription
      ? 'gone'
      : (refused ??
        (zapierRandom.chance(share) ? zapierRandom.pick(['unavailable', 'answer-lost'] as const) : undefined));
    if (subscription && (failed === undefined || failed === 'answer-lost')) receive(delivery, subscription);
    // Svix's schedule, with its jitter and its penalty after a time-out (src/tools/svix/rules.ts, shared with the emulator).
    const scheduled = RETRY_SCHEDULE_MS[number - 1];
    if (!failed || scheduled === undefined) return;
    const how: FailedAttempt =
      failed === 'refused'
        ? { kind: 'status', status: 429, retryAfterMs: zapierRandom.between(1, 120) * SECOND }
        : failed === 'answer-lost'
          ? { kind: 'timeout' }
          : { kind: 'status', status: failed === 'gone' ? 410 : 503 };
    const wait = retryDelayMs(scheduled, how, retries.between());
    // Held by Svix until its next attempt: a long off of its Zap meanwhile drops it (off means off).
    (message.held ??= []).push({ from: scheduler.now, until: scheduler.now + wait });
    scheduler.after(wait, () => attempt(message, endpointId, number + 1));
  };

  const uuid = (): string => {
    const hex = Buffer.from(plan.bytes(16)).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  };
  const endpointOf = (): number => plan.int(0, setting.endpoints - 1);

  /** A forgery of this kind sent to an endpoint (of a real message, if any), or junk claiming a second of its own. */
  const forge = (kind: Kind, endpoint: number, real: SimMessage | undefined, claimedSeconds?: number): void => {
    const now = Math.floor(svix.now() / SECOND);
    const secrets = svix.endpoint(endpoint).secrets;
    const payload = { auctioneerUuid: 'forged', auctionUuid: uuid(), status: 'LOTS_SOLD' };
    const body = JSON.stringify(payload);
    // Junk names a message of any time in the spread; a made-up id of any other forgery, the present.
    const madeUp = svix.newId(
      'msg',
      svix.now() - (kind === 'junk' ? plan.between(0, setting.junkSpreadSeconds) : 0) * SECOND,
    );
    // A secret revoked: replaced, and its grace over (until then it signs, and whoever holds it signs as Svix).
    const revoked = secrets.filter((spell) => (spell.signsUntil ?? Infinity) <= scheduler.now).pop();
    const stranger = svix.newSecret();
    const tampered = kind === 'tampered'; // signed by Svix as sent, then changed on the way
    const withRevoked = kind === 'revoked-secret' && revoked !== undefined;
    const current = svix.endpoint(endpoint).current;
    const signedBy = kind === 'too-old' || kind === 'not-a-svix-id' ? [current] : withRevoked ? [revoked] : [];
    // A revoked secret's body takes a real id only once every process must refuse it (SECRET_TRUSTED_MS after the
    // rotation): until then it may run instead of the genuine event.
    const refusedByAll = (revoked?.replacedAt ?? Infinity) + SECRET_TRUSTED_MS + 2 * PROCESS_SKEW + SECOND;
    const promised = withRevoked && plan.chance(0.5) && refusedByAll < scheduler.now;
    const realId = (tampered || kind === 'replayed-id' || promised) && real;
    const id = kind === 'not-a-svix-id' ? 'msg_not-one-svix-makes' : realId ? realId.id : madeUp;
    const ahead = kind === 'junk' || kind === 'too-old' ? 0 : plan.int(0, setting.forgeAheadSeconds);
    const seconds = kind === 'too-old' ? now - 8 * 24 * 3600 : (claimedSeconds ?? now + ahead);
    const keys = (tampered ? svix.endpoint(endpoint).signingAt(scheduler.now) : signedBy).map((spell) => spell.key);
    const signed = tampered ? (real?.body ?? body) : body;
    const changed = { ...(real?.payload ?? payload), status: 'CANCELLED_BY_FORGER' };
    const delivered = tampered ? JSON.stringify(changed) : body;
    // Sent to the hook the endpoint points at: taken where Zapier serves it (a parked endpoint's, nowhere).
    const subscription = zaps.servedAt(svix.endpoint(endpoint).record.url);
    if (!subscription) return;
    receive(
      {
        ...{ kind: kind === 'revoked-secret' && !revoked ? 'wrong-secret' : kind, id, body: delivered, signedBy },
        signature:
          kind === 'unsigned' ? undefined : svix.sign(id, seconds, signed, keys.length > 0 ? keys : [stranger]),
        ...{ signedAt: seconds * SECOND, message: id === real?.id ? real : undefined, attempt: 0, endpoint },
      },
      subscription,
    );
  };
  /** The Zap's endpoint (its current subscription's; while it is off, the last it made): where forgers aim. */
  const zapEndpoint = (zap: number): number => {
    const id = zaps.subscriptionOf(zap)?.data.id ?? zaps.endpointsOf(zap).pop();
    return (id === undefined ? undefined : svix.find(id))?.index ?? zap;
  };

  /** Junk claims any second: now, minutes ago, the very second of the endpoint's last rotation, or minutes ahead. */
  const junkSecond = (endpoint: number): number => {
    const now = Math.floor(svix.now() / SECOND);
    const { secrets, current } = svix.endpoint(endpoint);
    const choice = plan.int(0, 3);
    if (choice === 0) return now;
    if (choice === 1) return now - plan.int(1, 600);
    if (choice === 2 && secrets.length > 1) return Math.floor((current.from + svix.offset) / SECOND);
    return now + plan.int(1, 240);
  };
  const junk = (endpoint: number) => forge('junk', endpoint, undefined, junkSecond(endpoint));

  /** A Zap's subscribe or unsubscribe, as Zapier runs it: the app's own code, in one of the processes, through the
   * simulated Svix and z.cache (their faults included). */
  const operate = <T>(run: (ops: ReturnType<typeof operationsFor>, io: Io) => Promise<T>): Promise<T> => {
    const life = lifeOf(editing.pick(processes));
    const calls: SvixCall[] = [];
    const ended = () => {
      // Whether it ended on a listing of the endpoints, answered, that no pacing followed: the pace checked.
      const pacing = calls.filter((call) => call.what === 'GET /endpoint' || call.what?.endsWith(' (pace)') === true);
      const last = pacing[pacing.length - 1];
      paceChecked = last?.what === 'GET /endpoint' && last.ok;
      operationCalls.push(...calls);
    };
    const cacheCalls: CacheCall[] = [];
    const done = run(operationsFor(life.runtime), ioFor(life, { calls, cacheCalls }, false));
    done.then(ended, ended).finally(() => operationCacheCalls.push(...cacheCalls));
    return done;
  };
  const bundleOf = (zap: number, hook: string, subscribeData?: SubscribeData) => ({
    ...{ authData, inputData: {}, targetUrl: hook },
    ...(metaOf(zap) === undefined ? {} : { meta: metaOf(zap) }),
    ...(subscribeData === undefined ? {} : { subscribeData }),
  });
  /** Turns the Zap on at the hook; Zapier serves it up to `serveLagMs` after the subscribe returns. Where it fails
   * (Svix failing), it is turned on again a minute or two later, as the person (or Zapier) would. Then `next`. */
  const turnOn = (zap: number, hook: string, next = (): void => undefined): void => {
    const began = scheduler.now;
    void operate((ops, io) => ops.performSubscribe(io, bundleOf(zap, hook))).then(
      (data) => {
        const serve = zaps.subscribed(zap, hook, data, scheduler.now, began);
        scheduler.after(editing.between(0, setting.serveLagMs), serve);
        next();
      },
      () => scheduler.after(editing.between(30 * SECOND, 2 * MINUTE), () => turnOn(zap, hook, next)),
    );
  };
  /** Turns a subscription off: Zapier stops serving it at once, whatever the unsubscribe then does (it may fail).
   * Then `next`. */
  const turnOff = (zap: number, old: Subscribed, next = (): void => undefined): void => {
    const off = zaps.unsubscribed(zap, old, scheduler.now);
    // Svix failing every call of this unsubscribe: its mark makes it good.
    const failing = editing.chance(setting.unsubscribeFails);
    // Whether z.cache kept its mark of this off (zap/life.ts), for the judge: without it and the park, nothing can tell.
    const markKey = `zap-off:${svix.appId}:${zapUidOf(old.data.zap ?? '')}`;
    if (off) off.markKey = markKey;
    const marked = () => {
      const mark = cache.peek(markKey);
      const field = (key: string) => (typeof mark === 'object' && mark !== null ? Reflect.get(mark, key) : undefined);
      return field('id') === old.data.id && field('gen') === old.data.gen;
    };
    void operate((ops, io) => ops.performUnsubscribe(failing ? svixFailing(io) : io, bundleOf(zap, old.hook, old.data)))
      .then(
        ({ removed }) => off && Object.assign(off, { parked: removed, marked: marked() }),
        () => {
          // Svix and z.cache both failed it: nothing can tell this endpoint's Zap (or version) is off.
          if (!marked()) zaps.unmarked.add(old.data.id);
          if (off) Object.assign(off, { marked: marked() });
        },
      )
      .then(next);
  };

  /** The Zaps with an edit under way. */
  const editingZaps = new Set<number>();
  /**
   * A Zap edited while on, as Zapier may run it: its new version subscribed first or its old one unsubscribed first,
   * the second call up to `editGapMs` after the first answered (most soon after), at the same target URL or a new one
   * (with no Zap named, always a new one).
   */
  const editZap = (at: number): void => {
    const [zap, first, sameHook] = [editing.int(0, setting.endpoints - 1), editing.chance(0.5), editing.chance(0.5)];
    const gap = heavy(editing, 100, Math.max(100, setting.editGapMs));
    scheduler.at(at, () => {
      const old = zaps.subscriptionOf(zap);
      // Zapier publishes one version of a Zap at a time: an edit waits for the one under way.
      if (!old || editingZaps.has(zap)) return;
      editingZaps.add(zap);
      // An edit of a Zap Zapier does not name: its versions are two Zaps to the app (a limit the judge names).
      const unnamed = setting.noMeta ? zaps.unnamedEdit(zap, scheduler.now) : undefined;
      const done = () => {
        editingZaps.delete(zap);
        if (unnamed) unnamed.until = scheduler.now;
      };
      // Zapier's target URL is new for each activation, as it documents; an edit may keep it. Where it names no Zap,
      // a new URL is another Zap's to the app.
      const hook = sameHook && !setting.noMeta ? old.hook : zaps.newHook();
      // Zapier makes the second call once the first has answered (no source says it overlaps them).
      if (first) turnOn(zap, hook, () => scheduler.after(gap, () => turnOff(zap, old, done)));
      else turnOff(zap, old, () => scheduler.after(gap, () => turnOn(zap, hook, done)));
    });
  };

  // The plan: events at random (exponential waits), rotations among them, junk after each, processes gone cold.
  const meanWait = setting.hours > 0 ? (setting.hours * HOUR) / setting.events : SECOND / setting.perSecond;
  let at = T0 + 2 * SECOND;
  const eventTimes = Array.from({ length: setting.events }, () => (at += -meanWait * Math.log(1 - plan.between())));
  for (const time of eventTimes) {
    scheduler.at(time, () => {
      const payload = { auctioneerUuid: uuid(), auctionUuid: uuid(), status: plan.pick(STATUSES) };
      // Attempts begin once Svix's transaction writing it commits.
      const lag = setting.commitLagMs > 0 ? heavy(commits, 1, setting.commitLagMs) : commits.between(1, 300);
      const zap = endpointOf();
      const message = svix.createMessage(payload, lag, zap);
      // Sent to each endpoint of the Zap (two while an edit is under way).
      const toEach = (number: number) => () => zaps.endpointsOf(zap).forEach((to) => attempt(message, to, number));
      scheduler.after(lag + plan.between(5, 50), toEach(1));
      if (plan.chance(share)) scheduler.after(lag + plan.between(5, 200), toEach(RETRY_SCHEDULE_MS.length + 1));
      if (plan.chance(share)) {
        const kind = plan.pick([...FORGERIES, 'replayed-id'] as const);
        scheduler.after(lag + plan.between(0, 5_000), () => forge(kind, zapEndpoint(zap), message));
      }
    });
  }
  const first = eventTimes[0] ?? T0;
  const span = (eventTimes[eventTimes.length - 1] ?? T0) - first;
  const rotationTimes = Array.from({ length: setting.rotations }, () => first + plan.between(0.05, 0.95) * span);
  rotationTimes.sort((a, b) => a - b);
  if (setting.closePairs) {
    for (let index = 1; index < rotationTimes.length; index += 2)
      rotationTimes[index] = (rotationTimes[index - 1] ?? first) + plan.between(2 * SECOND, 40 * SECOND);
  }
  let rotated = endpointOf();
  rotationTimes.forEach((time, index) => {
    const immediate = setting.grace === 'immediate' || (setting.grace === 'both' && index % 2 === 0);
    const grace = immediate ? 0 : plan.pick(GRACES);
    // Close pairs rotate one endpoint twice; Svix signs from a cache of keys that may be up to 30 s old.
    const endpoint = setting.closePairs && index % 2 === 1 ? rotated : (rotated = endpointOf());
    const stale = setting.commitLagMs > 0 ? plan.between(0, 30 * SECOND) : 0;
    scheduler.at(time, () => {
      const current = zapEndpoint(endpoint);
      svix.endpoint(current).rotate(scheduler.now, svix.newSecret(), grace, stale);
      for (let count = 0; count < setting.junkBurst; count += 1) {
        const second = junkSecond(current);
        scheduler.after(plan.between(0, 1_000), () => forge('junk', current, undefined, second));
      }
      for (let count = 0; count < setting.stolen; count += 1)
        scheduler.after(plan.between(0, 30 * MINUTE), () => forge('revoked-secret', current, undefined));
      // A stolen secret replaced at once, junk to spend the allowance, then bodies signed with the replaced secret
      // while the junk is still being checked and genuine deliveries with the new one arrive.
      if (immediate && setting.junkBurst > 0)
        for (let count = 0; count < 3; count += 1)
          scheduler.after(flooding.between(1_000, 20_000), () => forge('revoked-secret', current, undefined));
    });
  });
  // Svix's clock steps three times, staying within 5 minutes of where it began and never 5 minutes ahead.
  for (let jump = 0; setting.svixClockJumps && jump < 3; jump += 1) {
    const step = plan.between(-CLOCK_STEP_MS, CLOCK_STEP_MS);
    scheduler.at(first + plan.between(0, 1) * span, () => {
      const start = setting.svixClockSeconds * SECOND;
      const to = Math.min(start + CLOCK_STEP_MS, CLOCK_AHEAD_MS, Math.max(start - CLOCK_STEP_MS, svix.offset + step));
      svix.step(to - svix.offset);
    });
  }
  // A long run: junk every 2 minutes on average, and Svix down for 1 to 10 minutes each hour.
  for (let hour = 0; hour < setting.hours; hour += 1) {
    const down = first + hour * HOUR + plan.between(0, 50 * MINUTE);
    const minutes = plan.between(1, 10);
    scheduler.at(down, () => (svix.downUntil = scheduler.now + minutes * MINUTE));
    for (let junkAt = first + hour * HOUR; junkAt < first + (hour + 1) * HOUR;) {
      junkAt += -2 * MINUTE * Math.log(1 - plan.between());
      const zap = endpointOf();
      scheduler.at(junkAt, () => junk(zapEndpoint(zap)));
    }
  }
  for (let edit = 0; edit < setting.edits; edit += 1) editZap(first + editing.between(0.05, 0.95) * span);
  // Zaps turned on at once, as a person may publish several: they share the pace with the others.
  for (let zap = setting.endpoints; zap < setting.endpoints + setting.togetherOn; zap += 1)
    scheduler.at(T0 + SECOND, () => turnOn(zap, zaps.newHook()));
  for (const process of processes) {
    for (let cold = 0; cold < 2; cold += 1) scheduler.at(first + plan.between(0, 1) * span, () => newLife(process));
  }
  await scheduler.run(20_000_000, runtimeRule);
  // The next things the app does for this Consumer App, past the edit grace (a Test trigger, say): each sweeps, a
  // minute apart, until one has swept it whole (Svix's faults may cut one short).
  const sweepAfter = (ms: number, left: number) =>
    scheduler.after(ms, () => {
      const life = lifeOf(editing.pick(processes));
      const io = ioFor(life, { calls: [], cacheCalls: [] }, false);
      const { clock } = life.runtime;
      void sweep(callerOf(io, { authData }, 'zap-editor', clock.now(), clock.now), clock).then((swept) => {
        if (!swept && left > 1) sweepAfter(MINUTE, left - 1);
      });
    });
  sweepAfter(SWEEP_PARKED_AFTER_MS + 10 * SECOND, 5);
  await scheduler.run(20_000_000, runtimeRule);
  return judge({ setting, seed, svix, performs, processes, cache, scheduler, zaps, paceChecked, operationCacheCalls });
};
