import { types } from 'node:util';
import * as t from 'io-ts';
import type { AppProcess, SimZ } from './loader';
import { Random } from './random';
import { Scheduler } from './scheduler';
import { SimCache, type CacheCall, type CacheReading } from './cache';
import { EventLoop } from './eventLoop';
import { SimSvix, type SecretSpell, type SimMessage } from './svix';

/**
 * One simulated run: auction events delivered by a simulated Svix through
 * Zapier's queue to 1–4 simulated processes, each running the app's real
 * perform (rules, secrets, verify, claim) on a virtual clock, with z.cache
 * and Svix simulated, and adversity in every part. Everything random comes
 * from one seed. At the end an oracle counts what the promises forbid:
 * genuine events lost or run twice, forged bodies run, revoked secrets
 * trusted past the promise, and junk that cost more Svix calls than the
 * allowance; for each failure, a trace of what each process knew and each
 * step the rules returned.
 */

export interface Setting {
  name: string;
  /** Genuine auction events. */
  events: number;
  /** Events a second, on average (they arrive independently). */
  perSecond: number;
  /** The share of events redelivered, forged, failed once at the endpoint, queued for long, and of calls faulted. */
  share: number;
  rotations: number;
  /** Rotations: immediate (the old secret stops at once), with a grace period, or each in turn. */
  grace: 'immediate' | 'grace' | 'both';
  /** Every other rotation follows the one before within 2–40 s, closer together than processes look at z.cache. */
  closePairs: boolean;
  /** Junk deliveries sent right after each rotation. */
  junkBurst: number;
  /** Every other read and write of the shared history of secrets throttled. */
  historyFaults: boolean;
  /** How far Svix's clock is ahead of the world's (negative: behind). */
  svixClockSeconds: number;
  processes: number;
  /** How long every delivery waits in Zapier's queue before its perform starts, at least (a backlog), in seconds. */
  backlogSeconds: number;
}

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
/** Svix's retry schedule after a failed attempt. */
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
/** What the promises allow: a revoked secret trusted for 60 s after any process saw the new one, 10 minutes after it changed regardless. */
const REVOKED_WITHIN = 60 * SECOND;
const REVOKED_REGARDLESS = 10 * MINUTE;
/** How far the processes' clocks may be from each other. */
const PROCESS_SKEW = 1 * SECOND;

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

interface SimDelivery {
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

interface SvixCall {
  what: string;
  start: number;
  end: number;
  ok: boolean;
  fault?: string;
  /** For a read of the secret that Svix answered: the secret it showed. */
  showed?: SecretSpell;
}

interface StepRecord {
  at: number;
  step: { kind: string } & Record<string, unknown>;
  known: Record<string, unknown>;
}

interface PerformRecord {
  delivery: SimDelivery;
  process: number;
  /** The life of the process it started in. */
  life: number;
  start: number;
  end: number;
  /** `cut`: the runtime ended it unanswered, its process's event loop holding nothing (it counts as lost). */
  outcome: 'ran' | 'no-items' | 'halted' | 'failed' | 'running' | 'cut';
  message: string;
  items: Array<Record<string, unknown>>;
  steps: StepRecord[];
  calls: SvixCall[];
  cacheCalls: CacheCall[];
}

/** A run's result. A codec too: a sweep's workers send outcomes as JSON lines. */
export const Outcome = t.type(
  {
    setting: t.string,
    seed: t.number,
    events: t.number,
    deliveries: t.number,
    performs: t.number,
    lost: t.number,
    /** Lost events whose every perform ended while Svix answered none of that process's calls: excused, and counted apart. */
    unanswered: t.number,
    /** Performs the runtime ended unanswered because nothing held their process's event loop (their events count as lost). */
    cut: t.number,
    doubled: t.number,
    forgedRun: t.number,
    revokedRun: t.number,
    junk: t.number,
    junkSvixCalls: t.number,
    junkOverBound: t.number,
    svixCalls: t.number,
    cacheCalls: t.number,
    virtualSeconds: t.number,
    /** A trace for each failure (at most a few). */
    traces: t.array(t.string),
  },
  'Outcome',
);
export type Outcome = t.TypeOf<typeof Outcome>;

/** Svix calls by what the allowance counts: reads, listings (their first pages), and the listings' further pages. */
type Calls = { reads: SvixCall[]; listings: SvixCall[]; pages: SvixCall[] };
const noCalls = (): Calls => ({ reads: [], listings: [], pages: [] });

/** Each process of a run, its app and what the oracle learns of it. */
interface Process {
  index: number;
  app: AppProcess;
  skew: number;
  /** Performs under way, by the delivery's id and arrival on this process's clock. */
  running: Map<string, PerformRecord>;
  /** Its event loop, as the runtime sees it. */
  loop: EventLoop;
  svixCalls: SvixCall[];
  /** How many times it has gone cold: each start has its own memory, and so its own allowance. */
  lives: number;
  /** The Svix calls junk cost, and every call, by the life of the process the perform started in. */
  junkCalls: Array<Calls>;
  lifeCalls: Array<Calls>;
}

const fmt = (ms: number): string => (ms / 1000).toFixed(3);

export const simulate = async (setting: Setting, seed: number, apps: readonly AppProcess[]): Promise<Outcome> => {
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

  const processes: Process[] = apps.slice(0, setting.processes).map((app, index) => ({
    index,
    app,
    skew: index === 0 ? 0 : plan.int(-PROCESS_SKEW, PROCESS_SKEW),
    running: new Map(),
    loop: new EventLoop(scheduler),
    svixCalls: [],
    lives: 0,
    junkCalls: [noCalls()],
    lifeCalls: [noCalls()],
  }));
  const goCold = (process: Process): void => {
    process.app.goCold();
    process.lives += 1;
    process.junkCalls.push(noCalls());
    process.lifeCalls.push(noCalls());
  };
  for (const process of processes) {
    goCold(process);
    process.app.clock.now = () => scheduler.now + process.skew;
    // The app's own waits, on this process's loop: the runtime's rule below sees whether they hold it.
    process.app.timers.current = process.loop;
    process.app.shell.observe = (delivery, step, known, now) => {
      const record = process.running.get(`${delivery.id}|${delivery.arrivedAt}`);
      record?.steps.push({ at: scheduler.now, step: { ...step }, known: snapshot(known, now) });
    };
  }
  const firstProcess = processes[0];
  if (!firstProcess) throw new RangeError('A run needs at least one process.');

  const subscribeData = {
    id: svix.endpointId,
    secret: svix.current.key,
    checkedAt: scheduler.now + firstProcess.skew,
    ...(plan.chance(0.8) ? { cacheHonoursNx: true } : {}),
  };
  const authData = { apiKey: 'testsk_simulated', appId: svix.appId, serverUrl: 'http://127.0.0.1:9' };
  const isJunk = (delivery: SimDelivery): boolean => delivery.kind !== 'genuine' && delivery.signedBy.length === 0;

  // ---- Svix, as the app calls it --------------------------------------------
  const request = (process: Process, record: PerformRecord) => async (options: Record<string, unknown>) => {
    const url = new URL(String(options.url));
    const params = typeof options.params === 'object' && options.params !== null ? { ...options.params } : {};
    const what = url.pathname.endsWith('/secret') ? 'secret' : url.pathname.endsWith('/msg') ? 'list' : 'record';
    const call: SvixCall = { what, start: scheduler.now, end: scheduler.now, ok: false };
    record.calls.push(call);
    process.svixCalls.push(call);
    // A listing's further pages follow its first (they carry its iterator): the allowance counts listings.
    const kind =
      what === 'secret' ? 'reads' : 'iterator' in params && typeof params.iterator === 'string' ? 'pages' : 'listings';
    process.lifeCalls[record.life]?.[kind].push(call);
    if (isJunk(record.delivery)) process.junkCalls[record.life]?.[kind].push(call);
    const timeout = typeof options.timeout === 'number' ? options.timeout : 10_000;
    const latency = faultRandom.between(20, 180);
    const fault = faultRandom.chance(share) ? faultRandom.pick(['503', '502', 'hang', '429', 'refused']) : undefined;
    const finish = (ok: boolean) => {
      call.end = scheduler.now;
      call.ok = ok;
      if (fault) call.fault = fault;
    };
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
        ? { status: 503, body: undefined }
        : fault === '502'
          ? { status: 502, body: '<html>Bad gateway</html>' }
          : fault === '429'
            ? { status: 429, body: { code: 'rate_limited', detail: 'Too many requests' } }
            : svix.answer(String(options.method ?? 'GET'), url.pathname, params);
    const showed = what === 'secret' && answer.status === 200 ? svix.current : undefined;
    await scheduler.sleep(latency / 2);
    finish(answer.status < 300 || answer.status === 404);
    if (showed) {
      call.showed = showed;
      if (!seenAt.has(showed)) seenAt.set(showed, scheduler.now);
    }
    const content =
      typeof answer.body === 'string' ? answer.body : answer.body === undefined ? '' : JSON.stringify(answer.body);
    const getHeader = (name: string) => (fault === '429' && name.toLowerCase() === 'retry-after' ? '1' : undefined);
    return { status: answer.status, content, getHeader, text: async () => content };
  };

  const zFor = (process: Process, record: PerformRecord): SimZ => ({
    request: (options) => process.loop.call(() => request(process, record)(options)),
    cache: {
      get: (key: string) => process.loop.call(() => cache.get(key, record.cacheCalls)),
      set: (key: string, value: unknown, ttl: number, _scope: unknown, nx: boolean) =>
        process.loop.call(() => cache.set(key, value, ttl, nx, record.cacheCalls)),
      delete: async () => true,
    },
    errors: process.app.errors,
    console: { log: () => undefined, error: () => undefined },
  });

  // ---- Zapier: the queue and the processes -----------------------------------
  const alive = () => processes;
  const receive = (delivery: SimDelivery): void => {
    deliveries.push(delivery);
    const queued =
      setting.backlogSeconds * SECOND +
      (zapierRandom.chance(share) ? zapierRandom.between(SECOND, 5 * MINUTE) : zapierRandom.between(5, 300));
    const process = zapierRandom.pick(alive());
    scheduler.after(queued, () => startPerform(process, delivery));
  };

  const startPerform = (process: Process, delivery: SimDelivery): void => {
    const record: PerformRecord = {
      delivery,
      process: process.index,
      life: process.lives,
      start: scheduler.now,
      end: scheduler.now,
      outcome: 'running',
      message: '',
      items: [],
      steps: [],
      calls: [],
      cacheCalls: [],
    };
    performs.push(record);
    const key = `${delivery.id}|${scheduler.now + process.skew}`;
    process.running.set(key, record);
    const bundle = {
      authData,
      subscribeData,
      targetUrl: 'https://hooks.zapier.com/hooks/standard/1/simulated/',
      inputData: {},
      rawRequest: { content: delivery.body, headers: delivery.headers },
      cleanedRequest: {},
    };
    const z = zFor(process, record);
    Promise.resolve()
      .then(() => process.app.perform(z, bundle))
      .then(
        (items) => {
          if (record.outcome === 'cut') return;
          record.items = items.map((item) => ({ ...item }));
          record.outcome = items.length > 0 ? 'ran' : 'no-items';
        },
        (error: unknown) => {
          if (record.outcome === 'cut') return;
          const name = error instanceof Error ? error.name : '';
          record.outcome = name === 'HaltedError' ? 'halted' : 'failed';
          record.message = error instanceof Error ? error.message : String(error);
        },
      )
      .finally(() => {
        if (record.outcome === 'cut') return;
        record.end = scheduler.now;
        process.running.delete(key);
      });
  };

  /**
   * Zapier's runtime: an invocation ends once nothing holds its process's event loop, answered or not. Between
   * timers (every promise settled), a process with performs under way and no call in flight nor ref'd timer has
   * them cut off, unanswered.
   */
  const runtimeRule = (): void => {
    for (const process of processes) {
      if (process.running.size === 0 || process.loop.held) continue;
      for (const record of process.running.values()) {
        record.outcome = 'cut';
        record.end = scheduler.now;
        record.message = 'the runtime ended the invocation: nothing held its event loop';
      }
      process.running.clear();
    }
  };

  // ---- Svix: messages, attempts, rotations -----------------------------------
  const headersOf = (id: string, seconds: number, signature: string | undefined) => ({
    'Http-Svix-Id': id,
    'Http-Svix-Timestamp': String(seconds),
    ...(signature === undefined ? {} : { 'Http-Svix-Signature': signature }),
    'Http-Content-Type': 'application/json',
    'Http-User-Agent': 'Svix-Webhooks/1.0',
  });

  const attempt = (message: SimMessage, number: number): void => {
    const signedAt = Math.floor(svix.now() / SECOND);
    const spells = svix.signingAt(svix.now());
    const delivery: SimDelivery = {
      kind: 'genuine',
      id: message.id,
      body: message.body,
      headers: headersOf(
        message.id,
        signedAt,
        svix.sign(
          message.id,
          signedAt,
          message.body,
          spells.map((s) => s.key),
        ),
      ),
      signedBy: spells,
      signedAt: signedAt * SECOND,
      message,
      attempt: number,
    };
    // The endpoint fails for a moment (Zapier never took it), or takes it and the answer is lost.
    const failed = zapierRandom.chance(share) ? zapierRandom.pick(['unavailable', 'answer-lost'] as const) : undefined;
    if (failed !== 'unavailable') receive(delivery);
    const retry = RETRIES[number - 1];
    if (failed && retry !== undefined) scheduler.after(retry, () => attempt(message, number + 1));
  };

  const randomPayload = (): SimMessage['payload'] => ({
    auctioneerUuid: uuid(plan),
    auctionUuid: uuid(plan),
    status: plan.pick(STATUSES),
  });

  // ---- Forgeries and junk -------------------------------------------------------
  const forge = (kind: Forgery | 'junk', realMessage: SimMessage | undefined, claimedSeconds?: number): void => {
    const nowSeconds = Math.floor(svix.now() / SECOND);
    const payload = { auctioneerUuid: 'forged', auctionUuid: uuid(plan), status: 'LOTS_SOLD' };
    const body = JSON.stringify(payload);
    const madeUp = svix.newId('msg');
    // A secret revoked: replaced, and its grace over (until then it signs, and whoever holds it signs as Svix).
    const revoked = svix.secrets.filter((spell) => (spell.signsUntil ?? Infinity) <= svix.now()).pop();
    let id = madeUp;
    let seconds = claimedSeconds ?? nowSeconds;
    let keys: string[] = [svix.newSecret()];
    let signedBy: SecretSpell[] = [];
    let signedBody = body;
    let deliveredBody = body;
    switch (kind) {
      case 'tampered':
        // Signed by Svix as sent, then changed on the way.
        id = realMessage?.id ?? madeUp;
        keys = svix.signingAt(svix.now()).map((spell) => spell.key);
        signedBody = realMessage?.body ?? body;
        deliveredBody = JSON.stringify({ ...(realMessage?.payload ?? payload), status: 'CANCELLED_BY_FORGER' });
        break;
      case 'replayed-id':
        id = realMessage?.id ?? madeUp;
        break;
      case 'too-old':
        seconds = nowSeconds - 8 * 24 * 3600;
        keys = [svix.current.key];
        signedBy = [svix.current];
        break;
      case 'not-a-svix-id':
        id = 'msg_not-one-svix-makes';
        keys = [svix.current.key];
        signedBy = [svix.current];
        break;
      case 'revoked-secret':
        if (revoked) {
          keys = [revoked.key];
          signedBy = [revoked];
          // Under a real message's id only once the promise covers it: until then its body may run in its place.
          id = plan.chance(0.5) && realMessage && revocationPromised(revoked) ? realMessage.id : madeUp;
        }
        break;
      default:
        break;
    }
    const signed = svix.sign(id, seconds, signedBody, keys);
    const message = id === realMessage?.id ? realMessage : undefined;
    receive({
      kind: kind === 'revoked-secret' && !revoked ? 'wrong-secret' : kind,
      id,
      body: deliveredBody,
      headers: headersOf(id, seconds, kind === 'unsigned' ? undefined : signed),
      signedBy,
      signedAt: seconds * SECOND,
      ...(message ? { message } : {}),
      attempt: 0,
    });
  };

  /** Whether every process must refuse the secret's body by now: a process saw a newer one over a minute ago. */
  const revocationPromised = (spell: SecretSpell): boolean => {
    const index = svix.secrets.indexOf(spell);
    return [...seenAt.entries()].some(
      ([newer, at]) => svix.secrets.indexOf(newer) > index && at + REVOKED_WITHIN + SECOND < scheduler.now,
    );
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
      const message = svix.createMessage(randomPayload());
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
    for (let index = 1; index < rotationTimes.length; index += 2) {
      rotationTimes[index] = (rotationTimes[index - 1] ?? first) + plan.between(2 * SECOND, 40 * SECOND);
    }
  }
  rotationTimes.forEach((time, index) => {
    const grace =
      setting.grace === 'immediate' || (setting.grace === 'both' && index % 2 === 0) ? 0 : plan.pick(GRACES);
    scheduler.at(time, () => {
      const spell = svix.rotate(grace);
      rotations.push({ at: scheduler.now, grace, spell });
      for (let count = 0; count < setting.junkBurst; count += 1) {
        const second = junkSecond();
        scheduler.after(plan.between(0, 1_000), () => forge('junk', undefined, second));
      }
    });
  });
  for (const process of processes) {
    for (let cold = 0; cold < 2; cold += 1) scheduler.at(first + plan.between(0, 1) * span, () => goCold(process));
  }

  await scheduler.run(2_000_000, runtimeRule);
  for (const process of processes) {
    process.app.shell.observe = undefined;
    process.app.timers.current = undefined;
  }

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

const uuid = (random: Random): string => {
  const hex = Buffer.from(random.bytes(16)).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

/** What a process knew at a step, copied (it changes later): every field but what is under way. */
const snapshot = (known: object, now: number): Record<string, unknown> => {
  const copy: Record<string, unknown> = { now };
  for (const [key, value] of Object.entries(known)) {
    // Told apart by node:util, not instanceof: under jest the app's objects come from another realm.
    if (types.isSet(value) || types.isMap(value) || types.isPromise(value) || typeof value === 'function') continue;
    copy[key] = typeof value === 'object' && value !== null ? structuredClone(value) : value;
  }
  return copy;
};

// ---- The oracle -------------------------------------------------------------------

interface Judged {
  setting: Setting;
  seed: number;
  svix: SimSvix;
  messages: SimMessage[];
  deliveries: SimDelivery[];
  performs: PerformRecord[];
  processes: Process[];
  rotations: Array<{ at: number; grace: number; spell: SecretSpell }>;
  seenAt: Map<SecretSpell, number>;
  cache: SimCache;
  reading: CacheReading;
  scheduler: Scheduler;
}

const MAX_TRACES = 3;

const judge = (run: Judged): Outcome => {
  const { svix, messages, performs, processes } = run;
  const runsOf = new Map<string, PerformRecord[]>();
  let forgedRun = 0;
  let revokedRun = 0;
  const traces: string[] = [];
  const trace = (title: string, message: SimMessage | undefined, focus: PerformRecord[]) => {
    if (traces.length < MAX_TRACES) traces.push(traceOf(run, title, message, focus));
  };

  for (const perform of performs) {
    if (perform.outcome !== 'ran') continue;
    for (const item of perform.items) {
      const id = String(item.id);
      const genuine = svix.messages.get(id);
      const same =
        genuine !== undefined &&
        item.auctionUuid === genuine.payload.auctionUuid &&
        item.status === genuine.payload.status &&
        item.auctioneerUuid === genuine.payload.auctioneerUuid;
      // A body signed with a secret the endpoint had is judged by the promise on revoked secrets, below.
      if (!same && (perform.delivery.kind === 'genuine' || perform.delivery.signedBy.length === 0)) {
        forgedRun += 1;
        trace(`a forged body ran (${perform.delivery.kind})`, genuine, [perform]);
      }
      if (!same) continue;
      runsOf.set(id, [...(runsOf.get(id) ?? []), perform]);
    }
    const violation = revocationBroken(run, perform);
    if (violation) {
      revokedRun += 1;
      trace(violation, perform.delivery.message, [perform]);
    }
  }

  let lost = 0;
  let unanswered = 0;
  let doubled = 0;
  for (const message of messages) {
    const runs = runsOf.get(message.id) ?? [];
    const tried = performs.filter((perform) => perform.delivery.id === message.id);
    if (runs.length > 1) {
      doubled += runs.length - 1;
      trace(`run ${runs.length} times`, message, tried);
    }
    if (runs.length > 0) continue;
    if (tried.length > 0 && tried.every((perform) => svixNeverAnswered(run, perform))) {
      unanswered += 1;
      continue;
    }
    lost += 1;
    trace('lost', message, tried);
  }

  // Junk: calls started by performs of junk, per life of each process, against the allowance the rules state.
  let junkOverBound = 0;
  for (const process of processes) {
    process.junkCalls.forEach((calls, life) => {
      const { reads, listings } = process.app.rules;
      // Any call of the life that Svix failed may be made again by junk, outside the allowance.
      const lifeCalls = process.lifeCalls[life] ?? noCalls();
      // A listing whose page Svix failed is made again from its first page.
      const failed = (kind: 'reads' | 'listings') =>
        (kind === 'reads' ? lifeCalls.reads : [...lifeCalls.listings, ...lifeCalls.pages])
          .filter((call) => !call.ok)
          .map((call) => call.start);
      const starts = (list: SvixCall[]) => list.map((call) => call.start);
      const over =
        overBound(starts(calls.reads), reads.burst, reads.refillMs, failed('reads')) +
        overBound(starts(calls.listings), listings.burst, listings.refillMs, failed('listings'));
      if (over <= 0) return;
      junkOverBound += over;
      const junkPerforms = performs.filter(
        (perform) =>
          perform.process === process.index &&
          perform.life === life &&
          perform.calls.length > 0 &&
          perform.delivery.kind !== 'genuine' &&
          perform.delivery.signedBy.length === 0,
      );
      trace(
        `junk cost ${calls.reads.length + calls.listings.length + calls.pages.length} Svix calls in process ${process.index + 1} (life ${life}), ${over} past the allowance`,
        undefined,
        junkPerforms.slice(0, 4),
      );
    });
  }
  const junk = run.deliveries.filter(
    (delivery) => delivery.kind !== 'genuine' && delivery.signedBy.length === 0,
  ).length;
  return {
    setting: run.setting.name,
    seed: run.seed,
    events: messages.length,
    deliveries: run.deliveries.length,
    performs: performs.length,
    lost,
    unanswered,
    cut: performs.filter((perform) => perform.outcome === 'cut').length,
    doubled,
    forgedRun,
    revokedRun,
    junk,
    junkSvixCalls: processes.reduce(
      (total, process) =>
        total +
        process.junkCalls.reduce(
          (sum, calls) => sum + calls.reads.length + calls.listings.length + calls.pages.length,
          0,
        ),
      0,
    ),
    junkOverBound,
    svixCalls: processes.reduce((total, process) => total + process.svixCalls.length, 0),
    cacheCalls: run.cache.calls,
    virtualSeconds: Math.round((run.scheduler.now - T0) / 1000),
    traces,
  };
};

/** A call Svix failed is made again after the pause (at most 2 s) once it has ended (at most 3 s): within 6 s. */
export const RETRY_WITHIN_MS = 6_000;

/**
 * Calls (their start times) past a token bucket of `burst` calls refilled one every `refillMs`, plus one for
 * each call Svix failed (made again outside the bucket): for any calls i..j, at most burst + (t_j - t_i) /
 * refillMs of them, and one more for each of `failed` started from RETRY_WITHIN_MS before t_i to t_j.
 */
export const overBound = (
  times: readonly number[],
  burst: number,
  refillMs: number,
  failed: readonly number[] = [],
): number => {
  const sorted = [...times].sort((a, b) => a - b);
  const failedUpTo = sorted.map((at) => failed.filter((start) => start <= at).length);
  let worst = 0;
  for (let i = 0; i < sorted.length; i += 1) {
    const earlier = failed.filter((start) => start < (sorted[i] ?? 0) - RETRY_WITHIN_MS).length;
    for (let j = i; j < sorted.length; j += 1) {
      const allowed = burst + ((sorted[j] ?? 0) - (sorted[i] ?? 0)) / refillMs + (failedUpTo[j] ?? 0) - earlier;
      worst = Math.max(worst, Math.floor(j - i + 1 - allowed + 1e-9));
    }
  }
  return worst;
};

/** The promise on revoked secrets, for a perform that ran on its delivered body. */
const revocationBroken = (run: Judged, perform: PerformRecord): string | undefined => {
  const last = perform.steps[perform.steps.length - 1];
  if (last?.step.kind !== 'run') return undefined;
  const { delivery } = perform;
  const decidedAt = last.at;
  const svixAt = decidedAt + run.setting.svixClockSeconds * SECOND;
  const signers = delivery.signedBy;
  if (signers.length === 0 || signers.some((spell) => spell.replacedAt === undefined || spell.replacedAt > svixAt)) {
    return undefined;
  }
  // Every secret that signed it had been replaced when it ran.
  const newest = signers.reduce((a, b) => ((a.replacedAt ?? 0) > (b.replacedAt ?? 0) ? a : b));
  if ((newest.signsUntil ?? 0) > svixAt) return undefined;
  const index = run.svix.secrets.indexOf(newest);
  const seen = [...run.seenAt.entries()]
    .filter(([spell]) => run.svix.secrets.indexOf(spell) > index)
    .reduce((earliest, [, at]) => Math.min(earliest, at), Infinity);
  if (decidedAt > seen + REVOKED_WITHIN) {
    return `ran on a body signed with ${newest.label}, replaced, ${fmt(decidedAt - seen)} s after a process first saw a newer secret`;
  }
  const replacedAt = (newest.replacedAt ?? 0) - run.setting.svixClockSeconds * SECOND;
  if (decidedAt > replacedAt + REVOKED_REGARDLESS + 2 * PROCESS_SKEW) {
    return `ran on a body signed with ${newest.label}, ${fmt(decidedAt - replacedAt)} s after it was replaced`;
  }
  return undefined;
};

/** True when the perform ended in an error while Svix answered none of its process's calls. */
const svixNeverAnswered = (run: Judged, perform: PerformRecord): boolean => {
  if (perform.outcome !== 'failed') return false;
  const process = run.processes[perform.process];
  return !process?.svixCalls.some((call) => call.ok && call.end >= perform.start && call.end <= perform.end);
};

// ---- Traces -------------------------------------------------------------------------

const labelOf = (svix: SimSvix, key: unknown): string =>
  typeof key === 'string' ? (svix.secrets.find((spell) => spell.key === key)?.label ?? 'S?') : '?';

/** What a process knew, in a line: each secret by its label, and each time as an age. */
const knew = (svix: SimSvix, known: Record<string, unknown>): string => {
  const now = typeof known.now === 'number' ? known.now : 0;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(known)) {
    if (key === 'now') continue;
    if (
      key === 'history' &&
      typeof value === 'object' &&
      value !== null &&
      'secrets' in value &&
      Array.isArray(value.secrets)
    ) {
      const secrets = value.secrets.map((entry: unknown) => {
        if (typeof entry !== 'object' || entry === null) return '?';
        const fields = Object.entries(entry)
          .filter(([name]) => name !== 'secret')
          .map(([name, time]) => `${name} ${typeof time === 'number' ? `${fmt(time - now)}s` : String(time)}`);
        return `${labelOf(svix, 'secret' in entry ? entry.secret : undefined)}(${fields.join(', ')})`;
      });
      parts.push(`secrets ${secrets.join(' ')}`);
    } else if (typeof value === 'number') {
      parts.push(
        `${key} ${!Number.isFinite(value) ? 'never' : Math.abs(value) > 1e12 ? `${fmt(value - now)}s` : value}`,
      );
    } else if (typeof value === 'boolean') {
      parts.push(`${key} ${value}`);
    } else if (typeof value === 'object' && value !== null) {
      const numbers = Object.entries(value).filter(([, inner]) => typeof inner === 'number');
      if (numbers.length > 0)
        parts.push(
          `${key} {${numbers.map(([name, inner]) => `${name} ${Number(inner) > 1e12 ? `${fmt(Number(inner) - now)}s` : Number(inner).toFixed(2)}`).join(', ')}}`,
        );
    }
  }
  return parts.join('; ');
};

const traceOf = (run: Judged, title: string, message: SimMessage | undefined, focus: PerformRecord[]): string => {
  const { svix } = run;
  const at = (ms: number) => `${fmt(ms - T0)}s`;
  const made = message
    ? `: ${message.id} (made at ${at(message.createdAt - run.setting.svixClockSeconds * SECOND)})`
    : '';
  const lines = [
    `FAIL ${title}${made}; the cache answers as ${run.reading === 'zapier' ? "Zapier's" : "Redis's"} does`,
  ];
  const secrets = svix.secrets
    .map((spell) => {
      const rotation = run.rotations.find((candidate) => candidate.spell === spell);
      const seen = run.seenAt.get(spell);
      return `${spell.label}${rotation ? ` at ${at(rotation.at)}${rotation.grace ? ` (grace ${rotation.grace / 1000}s)` : ''}` : ''}${seen ? `, first read ${at(seen)}` : ''}`;
    })
    .join('; ');
  lines.push(`  secrets: ${secrets}`);
  for (const perform of focus.slice(0, 6)) {
    const delivery = perform.delivery;
    const signers = delivery.signedBy.map((spell) => spell.label).join('+') || 'no secret of the endpoint';
    lines.push(
      `  ${delivery.kind} delivery (attempt ${delivery.attempt}) signed ${at(delivery.signedAt - run.setting.svixClockSeconds * SECOND)} with ${signers} → process ${perform.process + 1} at ${at(perform.start)}`,
    );
    for (const step of perform.steps) {
      const detail = Object.entries(step.step)
        .filter(([name]) => name !== 'kind')
        .map(([name, value]) => `${name} ${typeof value === 'number' ? at(value) : String(value)}`);
      lines.push(
        `    ${at(step.at)} ${step.step.kind}${detail.length ? ` (${detail.join(', ')})` : ''} — knew: ${knew(svix, step.known)}`,
      );
    }
    for (const call of perform.cacheCalls) {
      const key = call.key.replace(/:[^:]*$/, '').replace(/:.*/, '');
      const answer = call.fault === 'error' ? 'error' : (JSON.stringify(call.answer)?.slice(0, 24) ?? 'undefined');
      lines.push(
        `    cache ${call.method} ${key} ${at(call.start)}–${at(call.end)}${call.fault ? ` [${call.fault}]` : ''} → ${answer}`,
      );
    }
    for (const call of perform.calls) {
      lines.push(
        `    Svix ${call.what} ${at(call.start)}–${at(call.end)} ${call.ok ? 'answered' : `failed (${call.fault ?? 'refused'})`}${call.showed ? ` ${call.showed.label}` : ''}`,
      );
    }
    lines.push(
      `    ended ${at(perform.end)}: ${perform.outcome}${perform.message ? ` — ${perform.message.slice(0, 160)}` : ''}`,
    );
  }
  return lines.join('\n');
};
