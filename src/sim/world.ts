import { errors } from 'zapier-platform-core';
import { clockOf, Runtime } from '../delivery/runtime';
import type { Io, RequestOptions } from '../provider/request';
import { operationsFor } from '../triggers/auctionStatusChanged';
import { SimCache, type CacheReading } from './cache';
import { EventLoop } from './eventLoop';
import {
  judge,
  PROCESS_SKEW,
  REVOKED_WITHIN,
  T0,
  type Calls,
  type Outcome,
  type PerformRecord,
  type SvixCall,
} from './oracle';
import { Random } from './random';
import { Scheduler } from './scheduler';
import { SimSvix, type SecretSpell, type SimMessage } from './svix';

/**
 * One simulated run: auction events delivered by a simulated Svix through Zapier's queue to 1–4 simulated
 * processes, each a runtime of the app on its own virtual clock, running the delivery path's real code (machine,
 * driver, claim) on simulated ports: z.cache and Svix, with adversity in every part. Everything random comes from
 * one seed; the oracle (oracle.ts) judges the run.
 */

export interface Setting {
  name: string;
  events: number;
  /** Events a second, on average (they arrive independently). */
  perSecond: number;
  /** The share of events redelivered, forged, failed once at the endpoint, queued for long, and of calls faulted. */
  share: number;
  rotations: number;
  /** Rotations: immediate (the old secret stops at once), with a grace period, or each in turn. */
  grace: 'immediate' | 'grace' | 'both';
  /** Every other rotation follows the one before within 2–40 s, closer than processes look at z.cache. */
  closePairs: boolean;
  /** Junk deliveries sent right after each rotation. */
  junkBurst: number;
  /** Every other read and write of the shared history of secrets throttled. */
  historyFaults: boolean;
  /** How far Svix's clock is ahead of the world's (negative: behind), in seconds. */
  svixClockSeconds: number;
  processes: number;
  /** How long every delivery waits in Zapier's queue before its perform starts, at least, in seconds. */
  backlogSeconds: number;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const RETRIES = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * 60 * MINUTE,
  5 * 60 * MINUTE,
  10 * 60 * MINUTE,
  10 * 60 * MINUTE,
];
const GRACES = [1 * SECOND, 30 * SECOND, 10 * MINUTE];
const STATUSES = ['CREATED', 'OPEN_FOR_BIDDING', 'CLOSED', 'LOTS_SOLD', 'CANCELLED'];

export type Forgery =
  'wrong-secret' | 'tampered' | 'unsigned' | 'too-old' | 'not-a-svix-id' | 'revoked-secret' | 'replayed-id';
const FORGERIES: readonly Forgery[] = [
  'wrong-secret',
  'tampered',
  'unsigned',
  'too-old',
  'not-a-svix-id',
  'revoked-secret',
  'replayed-id',
];

export interface SimDelivery {
  kind: 'genuine' | 'junk' | Forgery;
  id: string;
  body: string;
  headers: Record<string, string>;
  /** The endpoint's secrets that signed it (none for junk). */
  signedBy: SecretSpell[];
  /** Svix's clock, ms (whole seconds). */
  signedAt: number;
  message?: SimMessage;
  attempt: number;
}

/** One life of a process: a runtime, its event loop, and the performs under way in it. */
interface Life {
  process: Process;
  number: number;
  runtime: Runtime;
  loop: EventLoop;
  deliver: ReturnType<typeof operationsFor>['deliver'];
  running: Set<PerformRecord>;
  junkCalls: Calls;
  calls: Calls;
}
export interface Process {
  index: number;
  skew: number;
  /** Its lives, the one running last: Zapier takes processes cold, and starts new ones. */
  lives: Life[];
  svixCalls: SvixCall[];
}

const noCalls = (): Calls => ({ reads: [], listings: [], pages: [] });

type Deliver = Life['deliver'];
/** For the oracle's own tests: what a process's timers do (every one unref'd, say), and its delivery (broken). */
export interface Variation {
  timers?: (loop: EventLoop) => Pick<EventLoop, 'setTimeout' | 'clearTimeout'>;
  deliver?: (deliver: Deliver) => Deliver;
}

export const simulate = async (setting: Setting, seed: number, vary: Variation = {}): Promise<Outcome> => {
  const root = new Random(seed);
  const plan = root.fork();
  const zapierRandom = root.fork();
  const faultRandom = root.fork();
  const scheduler = new Scheduler(T0);
  const svixOffset = setting.svixClockSeconds * SECOND;
  const svix = new SimSvix(root.fork(), () => scheduler.now + svixOffset);
  const reading: CacheReading = plan.chance(0.5) ? 'zapier' : 'redis';
  const cache = new SimCache(scheduler, faultRandom.fork(), {
    reading,
    share: setting.share,
    historyFaults: setting.historyFaults,
  });
  const { share } = setting;
  const performs: PerformRecord[] = [];
  const deliveries: SimDelivery[] = [];
  const rotations: Array<{ at: number; grace: number; spell: SecretSpell }> = [];
  /** When a process first learnt each secret by reading it (world's clock). */
  const seenAt = new Map<SecretSpell, number>();

  /** A process starts (or goes cold): a new runtime, as Zapier starts a new process, on a loop of its own. */
  const newLife = (process: Process): Life => {
    const loop = new EventLoop(scheduler);
    const timers = vary.timers?.(loop) ?? loop;
    const now = () => scheduler.now + process.skew;
    const runtime = new Runtime(clockOf({ now, setTimeout: timers.setTimeout, clearTimeout: timers.clearTimeout }));
    const { deliver } = operationsFor(runtime);
    const life = { process, number: process.lives.length, runtime, loop, deliver: vary.deliver?.(deliver) ?? deliver };
    const made: Life = { ...life, running: new Set(), junkCalls: noCalls(), calls: noCalls() };
    process.lives.push(made);
    return made;
  };
  const processes: Process[] = Array.from({ length: setting.processes }, (_, index) => {
    const process: Process = {
      index,
      skew: index === 0 ? 0 : plan.int(-PROCESS_SKEW, PROCESS_SKEW),
      lives: [],
      svixCalls: [],
    };
    newLife(process);
    return process;
  });
  const lifeOf = (process: Process): Life => process.lives[process.lives.length - 1] ?? newLife(process);
  const subscribeData = {
    id: svix.endpointId,
    secret: svix.current.key,
    checkedAt: scheduler.now + (processes[0]?.skew ?? 0),
    ...(plan.chance(0.8) ? { cacheHonoursNx: true } : {}),
  };
  const authData = { apiKey: 'testsk_simulated', appId: svix.appId, serverUrl: 'http://127.0.0.1:9' };
  const isJunk = (delivery: SimDelivery): boolean => delivery.kind !== 'genuine' && delivery.signedBy.length === 0;

  // ---- Svix, as the app calls it --------------------------------------------
  const send = async (life: Life, record: PerformRecord, options: RequestOptions) => {
    const url = new URL(options.url);
    const params: Record<string, unknown> = { ...options.params };
    const what = url.pathname.endsWith('/secret') ? 'secret' : 'list';
    const call: SvixCall = { what, start: scheduler.now, end: scheduler.now, ok: false };
    record.calls.push(call);
    life.process.svixCalls.push(call);
    // A listing's further pages carry its iterator: the allowance counts listings.
    const kind = what === 'secret' ? 'reads' : typeof params.iterator === 'string' ? 'pages' : 'listings';
    life.calls[kind].push(call);
    if (isJunk(record.delivery)) life.junkCalls[kind].push(call);
    const timeout = typeof options.timeout === 'number' ? options.timeout : 10_000;
    const latency = faultRandom.between(20, 180);
    const fault = faultRandom.chance(share) ? faultRandom.pick(['503', '502', 'hang', '429', 'refused']) : undefined;
    const finish = (ok: boolean) => Object.assign(call, { end: scheduler.now, ok, ...(fault ? { fault } : {}) });
    if (fault === 'refused') {
      await scheduler.sleep(2);
      finish(false);
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    }
    if (fault === 'hang' || latency > timeout) {
      await scheduler.sleep(timeout);
      finish(false);
      throw Object.assign(new Error('network timeout'), { name: 'FetchError', type: 'request-timeout' });
    }
    await scheduler.sleep(latency / 2);
    const answer =
      fault === '503'
        ? { status: 503, body: '' }
        : fault === '502'
          ? { status: 502, body: '<html>Bad gateway</html>' }
          : fault === '429'
            ? { status: 429, body: { code: 'rate_limited', detail: 'Too many requests' } }
            : svix.answer(options.method ?? 'GET', url.pathname, params);
    const showed = what === 'secret' && answer.status === 200 ? svix.current : undefined;
    await scheduler.sleep(latency / 2);
    finish(answer.status < 300 || answer.status === 404);
    if (showed && !seenAt.has(showed)) seenAt.set(showed, scheduler.now);
    if (showed) call.showed = showed;
    const content = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    return { status: answer.status, content, ...(fault === '429' ? { retryAfter: '1' } : {}) };
  };

  const ioFor = (life: Life, record: PerformRecord): Io => ({
    send: (options) => life.loop.call(() => send(life, record, options)),
    cache: {
      get: (key) => life.loop.call(() => cache.get(key, record.cacheCalls)).then((value) => value ?? undefined),
      set: (key, value, ttl, nx) => life.loop.call(() => cache.set(key, value, ttl, nx, record.cacheCalls)),
    },
    errors,
    log: () => undefined,
  });

  // ---- Zapier: the queue and the processes -----------------------------------
  const receive = (delivery: SimDelivery): void => {
    deliveries.push(delivery);
    const queued =
      setting.backlogSeconds * SECOND +
      (zapierRandom.chance(share) ? zapierRandom.between(SECOND, 5 * MINUTE) : zapierRandom.between(5, 300));
    const process = zapierRandom.pick(processes);
    scheduler.after(queued, () => startPerform(lifeOf(process), delivery));
  };

  const startPerform = (life: Life, delivery: SimDelivery): void => {
    const record: PerformRecord = {
      ...{ delivery, process: life.process.index, life: life.number, start: scheduler.now, end: scheduler.now },
      ...{ outcome: 'running', message: '', items: [], calls: [], cacheCalls: [] },
    };
    performs.push(record);
    life.running.add(record);
    const bundle = {
      authData,
      subscribeData,
      inputData: {},
      rawRequest: { content: delivery.body, headers: delivery.headers },
    };
    const settle = (outcome: PerformRecord['outcome'], message = '', items: Array<Record<string, unknown>> = []) => {
      if (record.outcome === 'cut') return;
      Object.assign(record, { outcome, message, items, end: scheduler.now });
      life.running.delete(record);
    };
    Promise.resolve()
      .then(() => life.deliver(ioFor(life, record), bundle))
      .then(
        (items) =>
          settle(
            items.length > 0 ? 'ran' : 'no-items',
            '',
            items.map((item) => ({ ...item })),
          ),
        (error: unknown) => {
          const name = error instanceof Error ? error.name : '';
          settle(name === 'HaltedError' ? 'halted' : 'failed', error instanceof Error ? error.message : String(error));
        },
      );
  };

  /**
   * Zapier's runtime: an invocation ends once nothing holds its process's event loop, answered or not. Between
   * timers (every promise settled), a life with performs under way and no call in flight nor ref'd timer has them
   * cut off, unanswered: their events count as lost.
   */
  const runtimeRule = (): void => {
    for (const process of processes) {
      for (const life of process.lives) {
        if (life.running.size === 0 || life.loop.held) continue;
        for (const record of life.running)
          Object.assign(record, { outcome: 'cut', end: scheduler.now, message: 'nothing held the loop' });
        life.running.clear();
      }
    }
  };

  // ---- Svix: messages, attempts, rotations -----------------------------------
  const headersOf = (id: string, seconds: number, signature: string | undefined) => ({
    'Http-Svix-Id': id,
    'Http-Svix-Timestamp': String(seconds),
    ...(signature === undefined ? {} : { 'Http-Svix-Signature': signature }),
    'Http-Content-Type': 'application/json',
  });

  const attempt = (message: SimMessage, number: number): void => {
    const seconds = Math.floor(svix.now() / SECOND);
    const spells = svix.signingAt(svix.now());
    const signature = svix.sign(
      message.id,
      seconds,
      message.body,
      spells.map((spell) => spell.key),
    );
    const delivery: SimDelivery = {
      ...{ kind: 'genuine', id: message.id, body: message.body, headers: headersOf(message.id, seconds, signature) },
      ...{ signedBy: spells, signedAt: seconds * SECOND, message, attempt: number },
    };
    // The endpoint fails for a moment (Zapier never took it), or takes it and the answer is lost.
    const failed = zapierRandom.chance(share) ? zapierRandom.pick(['unavailable', 'answer-lost'] as const) : undefined;
    if (failed !== 'unavailable') receive(delivery);
    const retry = RETRIES[number - 1];
    if (failed && retry !== undefined) scheduler.after(retry, () => attempt(message, number + 1));
  };

  const uuid = (): string => {
    const hex = Buffer.from(plan.bytes(16)).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  };

  // ---- Forgeries and junk -------------------------------------------------------
  /** Whether every process must refuse the secret's body by now: a process saw a newer one over a minute ago. */
  const revocationPromised = (spell: SecretSpell): boolean => {
    const index = svix.secrets.indexOf(spell);
    return [...seenAt].some(
      ([newer, at]) => svix.secrets.indexOf(newer) > index && at + REVOKED_WITHIN + SECOND < scheduler.now,
    );
  };

  const forge = (kind: Forgery | 'junk', real: SimMessage | undefined, claimedSeconds?: number): void => {
    const nowSeconds = Math.floor(svix.now() / SECOND);
    const payload = { auctioneerUuid: 'forged', auctionUuid: uuid(), status: 'LOTS_SOLD' };
    const body = JSON.stringify(payload);
    const madeUp = svix.newId('msg');
    // A secret revoked: replaced, and its grace over (until then it signs, and whoever holds it signs as Svix).
    const revoked = svix.secrets.filter((spell) => (spell.signsUntil ?? Infinity) <= svix.now()).pop();
    let id = madeUp;
    let seconds = claimedSeconds ?? nowSeconds;
    let keys = [svix.newSecret()];
    let signedBy: SecretSpell[] = [];
    let signedBody = body;
    let deliveredBody = body;
    if (kind === 'tampered') {
      // Signed by Svix as sent, then changed on the way.
      id = real?.id ?? madeUp;
      keys = svix.signingAt(svix.now()).map((spell) => spell.key);
      signedBody = real?.body ?? body;
      deliveredBody = JSON.stringify({ ...(real?.payload ?? payload), status: 'CANCELLED_BY_FORGER' });
    } else if (kind === 'replayed-id') id = real?.id ?? madeUp;
    else if (kind === 'too-old' || kind === 'not-a-svix-id') {
      if (kind === 'too-old') seconds = nowSeconds - 8 * 24 * 3600;
      else id = 'msg_not-one-svix-makes';
      keys = [svix.current.key];
      signedBy = [svix.current];
    } else if (kind === 'revoked-secret' && revoked) {
      keys = [revoked.key];
      signedBy = [revoked];
      // Under a real message's id only once the promise covers it: until then its body may run in its place.
      id = plan.chance(0.5) && real && revocationPromised(revoked) ? real.id : madeUp;
    }
    const message = id === real?.id ? real : undefined;
    receive({
      ...{ kind: kind === 'revoked-secret' && !revoked ? 'wrong-secret' : kind, id, body: deliveredBody },
      headers: headersOf(id, seconds, kind === 'unsigned' ? undefined : svix.sign(id, seconds, signedBody, keys)),
      ...{ signedBy, signedAt: seconds * SECOND, attempt: 0, ...(message ? { message } : {}) },
    });
  };

  /** Junk claims any second: now, minutes ago, the very second of the last rotation, or minutes ahead. */
  const junkSecond = (): number => {
    const now = Math.floor(svix.now() / SECOND);
    const last = rotations[rotations.length - 1];
    const choice = plan.int(0, 3);
    if (choice === 0) return now;
    if (choice === 1) return now - plan.int(1, 600);
    if (choice === 2 && last) return Math.floor((last.at + svixOffset) / SECOND);
    return now + plan.int(1, 240);
  };

  // ---- The plan ------------------------------------------------------------------
  const messages: SimMessage[] = [];
  let at = T0 + 2 * SECOND;
  const eventTimes = Array.from({ length: setting.events }, () => (at += plan.exponential(SECOND / setting.perSecond)));
  for (const time of eventTimes) {
    scheduler.at(time, () => {
      const message = svix.createMessage({ auctioneerUuid: uuid(), auctionUuid: uuid(), status: plan.pick(STATUSES) });
      messages.push(message);
      scheduler.after(plan.between(5, 50), () => attempt(message, 1));
      if (plan.chance(share)) scheduler.after(plan.between(5, 200), () => attempt(message, RETRIES.length + 1));
      if (plan.chance(share)) scheduler.after(plan.between(0, 5 * SECOND), () => forge(plan.pick(FORGERIES), message));
    });
  }
  const first = eventTimes[0] ?? T0;
  const span = (eventTimes[eventTimes.length - 1] ?? T0) - first;
  const rotationTimes = Array.from({ length: setting.rotations }, () => first + plan.between(0.05, 0.95) * span).sort(
    (a, b) => a - b,
  );
  if (setting.closePairs) {
    for (let index = 1; index < rotationTimes.length; index += 2)
      rotationTimes[index] = (rotationTimes[index - 1] ?? first) + plan.between(2 * SECOND, 40 * SECOND);
  }
  rotationTimes.forEach((time, index) => {
    const grace =
      setting.grace === 'immediate' || (setting.grace === 'both' && index % 2 === 0) ? 0 : plan.pick(GRACES);
    scheduler.at(time, () => {
      rotations.push({ at: scheduler.now, grace, spell: svix.rotate(grace) });
      for (let count = 0; count < setting.junkBurst; count += 1) {
        const second = junkSecond();
        scheduler.after(plan.between(0, 1_000), () => forge('junk', undefined, second));
      }
    });
  });
  for (const process of processes) {
    for (let cold = 0; cold < 2; cold += 1) scheduler.at(first + plan.between(0, 1) * span, () => newLife(process));
  }
  await scheduler.run(2_000_000, runtimeRule);
  return judge({
    setting,
    seed,
    svix,
    messages,
    deliveries,
    performs,
    processes,
    rotations,
    seenAt,
    cache,
    reading,
    scheduler,
  });
};
