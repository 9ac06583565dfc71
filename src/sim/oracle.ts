import * as t from 'io-ts';
import { RULES } from '../delivery/machine';
import type { CacheCall, CacheReading, SimCache } from './cache';
import type { Scheduler } from './scheduler';
import type { SecretSpell, SimMessage, SimSvix } from './svix';
import type { Process, Setting, SimDelivery } from './world';

/**
 * The oracle of a simulated run: it counts what the promises forbid (docs/guarantees.md): genuine events lost
 * (a perform cut off unanswered among them) or run twice, forged bodies run, revoked secrets trusted past the
 * promise, and junk that cost more Svix calls than the allowance; and for each failure, a trace.
 */

export interface SvixCall {
  what: 'secret' | 'list';
  start: number;
  end: number;
  ok: boolean;
  fault?: string;
  /** For a read of the secret that Svix answered: the secret it showed. */
  showed?: SecretSpell;
}
/** Svix calls by what the allowance counts: reads, listings (their first pages), and the listings' further pages. */
export type Calls = { reads: SvixCall[]; listings: SvixCall[]; pages: SvixCall[] };

export interface PerformRecord {
  delivery: SimDelivery;
  process: number;
  life: number;
  start: number;
  end: number;
  /** `cut`: the runtime ended it unanswered, its process's event loop holding nothing (its event counts as lost). */
  outcome: 'ran' | 'no-items' | 'halted' | 'failed' | 'running' | 'cut';
  message: string;
  items: Array<Record<string, unknown>>;
  calls: SvixCall[];
  cacheCalls: CacheCall[];
}

/** A run's result. A codec too: a sweep's workers send outcomes as JSON lines. */
export const Outcome = t.type(
  {
    ...{
      setting: t.string,
      seed: t.number,
      events: t.number,
      deliveries: t.number,
      performs: t.number,
      lost: t.number,
    },
    /** Lost events whose every perform failed while Svix answered none of that process's calls: excused. */
    unanswered: t.number,
    cut: t.number,
    ...{ doubled: t.number, forgedRun: t.number, revokedRun: t.number, junk: t.number, junkSvixCalls: t.number },
    ...{ junkOverBound: t.number, svixCalls: t.number, cacheCalls: t.number, virtualSeconds: t.number },
    /** How long genuine deliveries that ran took from perform to answer, ms: the 99th percentile and the longest. */
    latency: t.type({ p99: t.number, max: t.number }),
    traces: t.array(t.string),
  },
  'Outcome',
);
export type Outcome = t.TypeOf<typeof Outcome>;

export interface Judged {
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

export const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
/** A revoked secret may be trusted 60 s after any process saw a newer one (forgeries use a real id only later). */
export const REVOKED_WITHIN = 60_000;
/** How far the processes' clocks may be from each other. */
export const PROCESS_SKEW = 1_000;
const MAX_TRACES = 3;
/** A revoked secret is trusted at most 10 minutes after the rotation, whatever any process saw. */
const REVOKED_REGARDLESS = RULES.freshForMs;

export const judge = (run: Judged): Outcome => {
  const { svix, messages, performs, processes } = run;
  const runsOf = new Map<string, PerformRecord[]>();
  let [forgedRun, revokedRun] = [0, 0];
  const traces: string[] = [];
  const trace = (title: string, message: SimMessage | undefined, focus: PerformRecord[]) =>
    void (traces.length < MAX_TRACES && traces.push(traceOf(run, title, message, focus)));
  for (const perform of performs) {
    if (perform.outcome !== 'ran') continue;
    for (const item of perform.items) {
      const genuine = svix.messages.get(String(item.id));
      const same =
        genuine &&
        ['auctionUuid', 'status', 'auctioneerUuid'].every((key) => item[key] === Reflect.get(genuine.payload, key));
      // A body signed with a secret the endpoint had is judged by the promise on revoked secrets, below.
      if (!same && (perform.delivery.kind === 'genuine' || perform.delivery.signedBy.length === 0)) {
        forgedRun += 1;
        trace(`a forged body ran (${perform.delivery.kind})`, genuine, [perform]);
      }
      if (same) runsOf.set(String(item.id), [...(runsOf.get(String(item.id)) ?? []), perform]);
    }
    const violation = revocationBroken(run, perform);
    if (violation) {
      revokedRun += 1;
      trace(violation, perform.delivery.message, [perform]);
    }
  }
  let [lost, unanswered, doubled] = [0, 0, 0];
  const performsOf = new Map<string, PerformRecord[]>();
  for (const perform of performs)
    performsOf.set(perform.delivery.id, [...(performsOf.get(perform.delivery.id) ?? []), perform]);
  for (const message of messages) {
    const runs = runsOf.get(message.id) ?? [];
    const tried = performsOf.get(message.id) ?? [];
    if (runs.length > 1) {
      doubled += runs.length - 1;
      trace(`run ${runs.length} times`, message, tried);
    }
    if (runs.length > 0) continue;
    if (tried.length > 0 && tried.every((perform) => svixNeverAnswered(run, perform))) unanswered += 1;
    else {
      lost += 1;
      trace('lost', message, tried);
    }
  }
  // Junk: calls started by performs of junk, per life of each process, against the allowance the rules state.
  let junkOverBound = 0;
  for (const life of processes.flatMap((process) => process.lives)) {
    // Any call of the life that Svix failed may be made again by junk, outside the allowance.
    const failed = (calls: SvixCall[]) => calls.filter((call) => !call.ok).map((call) => call.start);
    const starts = (calls: SvixCall[]) => calls.map((call) => call.start);
    const { reads, listings } = RULES;
    const over =
      overBound(starts(life.junkCalls.reads), reads.burst, reads.everyMs, failed(life.calls.reads)) +
      overBound(
        starts(life.junkCalls.listings),
        listings.burst,
        listings.everyMs,
        failed([...life.calls.listings, ...life.calls.pages]),
      );
    if (over <= 0) continue;
    junkOverBound += over;
    const junk = performs.filter(
      (p) => p.process === life.process.index && p.life === life.number && p.calls.length > 0,
    );
    trace(
      `junk past the allowance in process ${life.process.index + 1} (life ${life.number}): ${over}`,
      undefined,
      junk.slice(0, 4),
    );
  }
  const junkDeliveries = run.deliveries.filter(
    (delivery) => delivery.kind !== 'genuine' && delivery.signedBy.length === 0,
  );
  const junkCalls = processes
    .flatMap((process) => process.lives)
    .map(({ junkCalls: c }) => c.reads.length + c.listings.length + c.pages.length);
  return {
    ...{ setting: run.setting.name, seed: run.seed, events: messages.length, deliveries: run.deliveries.length },
    ...{ performs: performs.length, lost, unanswered, cut: performs.filter((p) => p.outcome === 'cut').length },
    ...{
      doubled,
      forgedRun,
      revokedRun,
      junk: junkDeliveries.length,
      junkSvixCalls: junkCalls.reduce((a, b) => a + b, 0),
    },
    junkOverBound,
    svixCalls: processes.reduce((total, process) => total + process.svixCalls.length, 0),
    cacheCalls: run.cache.calls,
    virtualSeconds: Math.round((run.scheduler.now - T0) / 1000),
    latency: latencyOf(performs),
    traces,
  };
};

/** A call Svix failed is made again after the back-off (at most 2 s) once it has ended (at most 3 s): within 6 s. */
export const RETRY_WITHIN_MS = 6_000;

/**
 * Calls (their start times) past a token bucket of `burst` calls refilled one every `refillMs`, plus one for each
 * call Svix failed (made again outside the bucket): for any calls i..j, at most burst + (t_j - t_i) / refillMs of
 * them, and one more for each of `failed` started from RETRY_WITHIN_MS before t_i to t_j.
 */
export const overBound = (
  times: readonly number[],
  burst: number,
  refillMs: number,
  failed: readonly number[] = [],
) => {
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

/**
 * The promise on revoked secrets, for a perform that ran on its delivered body (Svix's copy carries a mark the
 * delivered body lacks): every secret that signed it replaced, and a process saw a newer one more than a minute
 * before it ended, or it was replaced more than 10 minutes before.
 */
const revocationBroken = (run: Judged, perform: PerformRecord): string | undefined => {
  const signers = perform.delivery.signedBy;
  if (perform.items.some((item) => item.copy === 'record') || signers.length === 0) return undefined;
  const decidedAt = perform.end;
  const svixAt = decidedAt + run.setting.svixClockSeconds * 1000;
  if (signers.some((spell) => spell.replacedAt === undefined || spell.replacedAt > svixAt)) return undefined;
  const newest = signers.reduce((a, b) => ((a.replacedAt ?? 0) > (b.replacedAt ?? 0) ? a : b));
  if ((newest.signsUntil ?? 0) > svixAt) return undefined;
  const index = run.svix.secrets.indexOf(newest);
  const seen = [...run.seenAt]
    .filter(([spell]) => run.svix.secrets.indexOf(spell) > index)
    .reduce((m, [, at]) => Math.min(m, at), Infinity);
  if (decidedAt > seen + REVOKED_WITHIN)
    return `ran on a body signed with ${newest.label}, replaced, ${fmt(decidedAt - seen)} s after a process saw a newer secret`;
  const replacedAt = (newest.replacedAt ?? 0) - run.setting.svixClockSeconds * 1000;
  if (decidedAt > replacedAt + REVOKED_REGARDLESS + 2 * PROCESS_SKEW)
    return `ran on a body signed with ${newest.label}, ${fmt(decidedAt - replacedAt)} s after it was replaced`;
  return undefined;
};

/** True when the perform ended in an error while Svix answered none of its process's calls. */
const svixNeverAnswered = (run: Judged, perform: PerformRecord): boolean =>
  perform.outcome === 'failed' &&
  perform.calls.length > 0 &&
  !run.processes[perform.process]?.svixCalls.some(
    (call) => call.ok && call.end >= perform.start && call.end <= perform.end,
  );

const fmt = (ms: number): string => (ms / 1000).toFixed(3);

const traceOf = (run: Judged, title: string, message: SimMessage | undefined, focus: PerformRecord[]): string => {
  const at = (ms: number) => `${fmt(ms - T0)}s`;
  const svixTime = (ms: number) => at(ms - run.setting.svixClockSeconds * 1000);
  const lines = [
    `FAIL ${title}${message ? `: ${message.id} (made at ${svixTime(message.createdAt)})` : ''}; the cache answers as ${run.reading}'s does`,
  ];
  const rotation = (spell: SecretSpell) => run.rotations.find((candidate) => candidate.spell === spell);
  const secrets = run.svix.secrets.map((spell) => {
    const made = rotation(spell);
    const seen = run.seenAt.get(spell);
    return `${spell.label}${made ? ` at ${at(made.at)}${made.grace ? ` (grace ${made.grace / 1000}s)` : ''}` : ''}${seen ? `, first read ${at(seen)}` : ''}`;
  });
  lines.push(`  secrets: ${secrets.join('; ')}`);
  for (const perform of focus.slice(0, 6)) {
    const { delivery } = perform;
    const signers = delivery.signedBy.map((spell) => spell.label).join('+') || 'no secret of the endpoint';
    lines.push(
      `  ${delivery.kind} delivery (attempt ${delivery.attempt}) signed ${svixTime(delivery.signedAt)} with ${signers} → process ${perform.process + 1} (life ${perform.life}) at ${at(perform.start)}`,
    );
    for (const call of perform.cacheCalls)
      lines.push(
        `    cache ${call.method} ${call.key.replace(/:.*/, '')} ${at(call.start)}–${at(call.end)}${call.fault ? ` [${call.fault}]` : ''} → ${JSON.stringify(call.answer)?.slice(0, 40) ?? '-'}`,
      );
    for (const call of perform.calls)
      lines.push(
        `    Svix ${call.what} ${at(call.start)}–${at(call.end)} ${call.ok ? 'answered' : `failed (${call.fault ?? 'refused'})`}${call.showed ? ` ${call.showed.label}` : ''}`,
      );
    lines.push(
      `    ended ${at(perform.end)}: ${perform.outcome}${perform.message ? ` — ${perform.message.slice(0, 160)}` : ''}`,
    );
  }
  return lines.join('\n');
};

/** How long genuine deliveries that ran took, from perform to answer. */
const latencyOf = (performs: PerformRecord[]): Outcome['latency'] => {
  const took = performs
    .filter((p) => p.delivery.kind === 'genuine' && p.outcome === 'ran')
    .map((p) => p.end - p.start)
    .sort((a, b) => a - b);
  const at = (share: number) => Math.round(took[Math.min(took.length - 1, Math.floor(share * took.length))] ?? 0);
  return { p99: at(0.99), max: at(1) };
};
