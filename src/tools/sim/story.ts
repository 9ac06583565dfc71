import { errors } from 'zapier-platform-core';
import { Runtime } from '../../delivery/runtime';
import { SWEEP_PARKED_AFTER_MS } from '../../limits';
import type { SubscribeData } from '../../models/inbound';
import { callerOf } from '../../svix/client';
import { RETRY_SCHEDULE_MS, retryDelayMs } from '../svix/rules';
import { operationsFor } from '../../triggers/auctionStatusChanged';
import { sweep } from '../../zap/life';
import { clockOf } from '../../zapier/clock';
import type { Io } from '../../zapier/io';
import { SimCache } from './cache';
import { Random } from './random';
import { EventLoop, Scheduler } from './scheduler';
import { SimSvix, type SimMessage } from './svix';
import { T0 } from './vocabulary';

/**
 * A Zap's life told as a person lives it, at Svix's real retry times (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, ±20%):
 * the app's own subscribe, unsubscribe and perform, against the simulated Svix and z.cache (no faults but those a
 * story names), Zapier serving a new hook a minute late and answering a dead one 410 (or 200, as its docs said in
 * 2024). One auction event a minute (or as often as told), from 10 minutes before the Zap's off (or edit) to an hour after it is on again;
 * then every retry Svix would still make. What it measures is what a person sees: which events made while the Zap
 * was off (or between an edit's calls) ran, how late, whether any ran twice or went backwards, and what it left in
 * the owner's account once the next operation there has run.
 */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export type Plan =
  | { kind: 'edit'; order: 'subscribe-first' | 'unsubscribe-first'; gapMs: number; sameUrl: boolean }
  | { kind: 'off'; offMs: number }
  /** Turned off and never on again (deleted, say). */
  | { kind: 'gone' };

export type Story = {
  plan: Plan;
  seed: number;
  /** Run Events Missed While Off, Skip Outdated Events (on, as the Zap editor sets it for a new Zap). */
  catchUp?: boolean;
  skipOutdated?: boolean;
  /** Zapier serves a new subscription this long after its subscribe returns. */
  serveLagMs?: number;
  /** What Zapier answers on a hook no longer served. */
  deadHook?: 410 | 200;
  /** Svix answers 503 to every call of the unsubscribe. */
  unsubscribeFails?: boolean;
  /** The edit's second call starts this long before the first ends (its calls overlap). */
  overlapMs?: number;
  /** Zapier names the Zap to subscribe and unsubscribe. */
  named?: boolean;
  /** How often the auction service sends an event. */
  everyMs?: number;
};

export type Told = {
  /** Events made between the Zap's off (or the edit's first call) and its on (the edit's second call). */
  between: number;
  /** Of those, how many ran, and how late after they were made (minutes): each, the median and the worst. */
  ran: number;
  late: number[];
  lateMedianMin: number;
  lateWorstMin: number;
  /** Events made while the Zap was on that never ran; events that ran twice; runs of an older status after a newer. */
  lostWhileOn: number;
  doubled: number;
  backwards: number;
  /** The Zap's endpoints left in the Consumer App once the next operation there ran, past the grace: by state. */
  left: { live: number; parked: number };
  /** Whether the Zap, on at the end, had its endpoint live and pointed at its hook. */
  onAndLive: boolean | undefined;
};

export const tellStory = async (story: Story): Promise<Told> => {
  const { plan, seed, serveLagMs = MINUTE, deadHook = 410, named = true, everyMs = MINUTE } = story;
  const random = new Random(seed);
  const scheduler = new Scheduler(T0);
  const svix = new SimSvix(random.fork(), scheduler, 0, { random: random.fork(), share: 0 }, 0);
  const cache = new SimCache(scheduler, random.fork(), {
    ...{ reading: 'zapier', share: 0, slowMs: 0, throttledSet: null },
  });
  const jitter = random.fork();
  const loop = new EventLoop(scheduler);
  const clock = clockOf({ now: () => scheduler.now, setTimeout: loop.setTimeout, clearTimeout: loop.clearTimeout });
  const ops = operationsFor(new Runtime(clock));
  const io: Io = {
    send: (options) => loop.call(() => svix.request(options, [])),
    cache: {
      get: (key) => loop.call(() => cache.get(key, [])).then((value) => value ?? undefined),
      set: (key, value, ttl, nx) => loop.call(() => cache.set(key, value, ttl, nx, [])),
    },
    ...{ errors, log: () => undefined },
  };
  const failing: Io = { ...io, send: () => Promise.resolve({ status: 503, content: '' }) };
  const authData = { apiKey: 'testsk_story', appId: svix.appId, serverUrl: 'http://127.0.0.1:9' };
  const inputData = { catchUp: story.catchUp === true, skipOutdated: story.skipOutdated !== false };

  // Zapier: the subscription each hook serves, and the hooks turned off.
  const served = new Map<string, SubscribeData>();
  const dead = new Set<string>();
  let hooks = 0;
  const newHook = () => `https://hooks.zapier.test/hooks/standard/${(hooks += 1)}/`;
  const bundle = (hook: string, subscribeData?: SubscribeData) => ({
    ...{ authData, inputData, targetUrl: hook },
    ...(named ? { meta: { zap: { id: 'zap-story', name: 'Email bidders' } } } : {}),
    ...(subscribeData ? { subscribeData } : {}),
  });
  let current: { hook: string; data: SubscribeData } | undefined;
  const turnOn = async (hook: string) => {
    const data = await ops.performSubscribe(io, bundle(hook));
    current = { hook, data };
    scheduler.after(serveLagMs, () => {
      if (current?.data !== data) return;
      served.set(hook, data);
      dead.delete(hook);
    });
    return data;
  };
  const turnOff = async (old: { hook: string; data: SubscribeData }) => {
    served.delete(old.hook);
    dead.add(old.hook);
    if (current === old) current = undefined;
    await ops.performUnsubscribe(story.unsubscribeFails ? failing : io, bundle(old.hook, old.data)).catch(() => ({}));
  };

  // Events: what ran, when.
  const runs = new Map<string, number[]>();
  const ranInOrder: Array<{ auction: string; madeAt: number }> = [];
  const auctions = Array.from({ length: 20 }, (_, index) => `auction-${index}`);
  const made: SimMessage[] = [];
  const attempt = (message: SimMessage, endpointId: string, number: number): void => {
    const endpoint = svix.find(endpointId);
    if (!endpoint || endpoint.record.disabled) return;
    const url = endpoint.record.url;
    const subscription = served.get(url);
    const seconds = Math.floor(svix.now() / SECOND);
    const keys = endpoint.signingAt(scheduler.now).map(({ key }) => key);
    if (subscription) {
      const headers = {
        ...{ 'Http-Svix-Id': message.id, 'Http-Svix-Timestamp': String(seconds) },
        'Http-Svix-Signature': svix.sign(message.id, seconds, message.body, keys),
      };
      const rawRequest = { content: message.body, headers };
      void Promise.resolve()
        .then(() => ops.deliver(io, { authData, subscribeData: subscription, inputData, rawRequest }))
        .then(
          (items) => {
            if (items.length === 0) return;
            runs.set(message.id, [...(runs.get(message.id) ?? []), scheduler.now]);
            ranInOrder.push({ auction: message.payload.auctionUuid, madeAt: message.madeAt });
          },
          () => undefined,
        );
    }
    // Zapier answers 200 to a hook it serves (before its perform), 404 to one not yet served, 410 (or 200) to one
    // turned off; a parked endpoint's attempt fails to resolve its host.
    const gone = dead.has(url);
    const ok = subscription !== undefined || (gone && deadHook === 200);
    const scheduled = RETRY_SCHEDULE_MS[number - 1];
    if (ok || scheduled === undefined) return;
    const wait = retryDelayMs(scheduled, { kind: 'status', status: gone ? 410 : 404 }, jitter.between());
    scheduler.after(wait, () => attempt(message, endpointId, number + 1));
  };
  const send = (index: number) => {
    const payload = {
      auctioneerUuid: 'auctioneer-1',
      auctionUuid: auctions[index % auctions.length] ?? '',
      status: `S${index}`,
    };
    const message = svix.createMessage(payload, 50);
    made.push(message);
    const to = svix.endpoints.filter((each) => !each.record.deleted).map((each) => each.id);
    scheduler.after(60, () => to.forEach((id) => attempt(message, id, 1)));
  };

  // The plan.
  const first = newHook();
  const offAt = T0 + 10 * MINUTE;
  const { onAt, lastEventAt } = timesOf(plan, offAt);
  let between: { from: number; until: number } = { from: offAt, until: onAt === Infinity ? Infinity : onAt };
  scheduler.at(T0, () => void turnOn(first));
  let count = 0;
  for (let at = T0 + everyMs; at <= lastEventAt; at += everyMs) {
    const index = (count += 1);
    scheduler.at(at, () => send(index));
  }
  scheduler.at(offAt, () => {
    const old = current;
    if (!old) return;
    if (plan.kind === 'edit') {
      const hook = plan.sameUrl ? old.hook : newHook();
      const overlap = story.overlapMs ?? 0;
      // Between the calls: from the first's start until the second returned.
      const ended = () => (between = { from: offAt, until: scheduler.now });
      const second = (run: () => Promise<unknown>) =>
        scheduler.after(plan.gapMs - overlap, () => void run().then(ended, ended));
      if (plan.order === 'subscribe-first') void (second(() => turnOff(old)), turnOn(hook));
      else void (second(() => turnOn(hook)), turnOff(old));
      return;
    }
    void turnOff(old);
    // Off until its subscribe returned: what is made while that runs is the Zap's off time too.
    const on = () =>
      turnOn(newHook()).then(
        () => (between = { from: offAt, until: scheduler.now }),
        () => undefined,
      );
    if (plan.kind === 'off') scheduler.after(plan.offMs, () => void on());
  });
  await scheduler.run(50_000_000, () => undefined);
  // The next operation on the Consumer App, past the grace: it sweeps (a Test trigger of another Zap, say).
  scheduler.after(SWEEP_PARKED_AFTER_MS + 10 * SECOND, () => {
    void sweep(callerOf(io, { authData }, 'zap-editor', clock.now(), clock.now), clock);
  });
  await scheduler.run(50_000_000, () => undefined);

  const isBetween = (message: SimMessage) => between.from <= message.madeAt && message.madeAt < between.until;
  const late = made
    .filter(isBetween)
    .flatMap((message) => {
      const firstRun = runs.get(message.id)?.[0];
      return firstRun === undefined ? [] : [(firstRun - message.madeAt) / MINUTE];
    })
    .sort((a, b) => a - b);
  const newest = new Map<string, number>();
  let backwards = 0;
  for (const { auction, madeAt } of ranInOrder) {
    if ((newest.get(auction) ?? -Infinity) > madeAt) backwards += 1;
    newest.set(auction, Math.max(newest.get(auction) ?? -Infinity, madeAt));
  }
  const kept = svix.endpoints.filter((each) => !each.record.deleted);
  const parked = kept.filter((each) => each.record.metadata.parked !== undefined).length;
  const own = current ? svix.find(current.data.id) : undefined;
  return {
    between: made.filter(isBetween).length,
    ran: late.length,
    late,
    lateMedianMin: round(late[Math.floor(late.length / 2)] ?? 0),
    lateWorstMin: round(late[late.length - 1] ?? 0),
    lostWhileOn: made.filter(
      (message) => !isBetween(message) && !runs.has(message.id) && wasOn(plan, message, offAt, onAt),
    ).length,
    doubled: [...runs.values()].filter((times) => times.length > 1).length,
    backwards,
    left: { live: kept.length - parked, parked },
    onAndLive: current ? own?.record.url === current.hook && own.record.metadata.parked === undefined : undefined,
  };
};

/** When the Zap is on again, and when the last event is made: an hour after (for a Zap gone, an hour after its off). */
const timesOf = (plan: Plan, offAt: number) => {
  const onAt = plan.kind === 'off' ? offAt + plan.offMs : plan.kind === 'edit' ? offAt + plan.gapMs : Infinity;
  return { onAt, lastEventAt: (Number.isFinite(onAt) ? onAt : offAt) + HOUR };
};
/** Whether the Zap was on when the message was made (an edit's Zap always is). */
const wasOn = (plan: Plan, message: SimMessage, offAt: number, onAt: number) =>
  plan.kind === 'edit' || message.madeAt < offAt || message.madeAt >= onAt;
const round = (minutes: number) => Math.round(minutes * 10) / 10;
