import { EDIT_GRACE_MS, ENDPOINTS_KEPT, JUNK_ALLOWANCE, PACE_PER_SECOND, SECRET_TRUSTED_MS } from '../../limits';
import type { Runtime } from '../../delivery/runtime';
import { requestSettings } from '../../zapier/io';
import type { CacheCall, SimCache } from './cache';
import type { Scheduler } from './scheduler';
import type { Setting } from './settings';
import type { SecretSpell, SimMessage, SimSvix, SvixCall } from './svix';
import { PERFORM_LIMIT_MS, PROCESS_SKEW, RETRY_WITHIN_MS, T0, Outcome } from './vocabulary';
import type { PerformRecord, Process, SimDelivery } from './vocabulary';
import type { SimZaps } from './zaps';

/**
 * The oracle of a simulated run: it counts what the promises forbid (docs/guarantees.md): genuine events lost (a
 * perform cut off unanswered, or still running when Zapier ends it at 30 s, among them) or run twice, forged bodies
 * run, revoked secrets trusted past the promise, junk that cost more Svix calls than the allowance (per process and
 * endpoint), and memory a runtime keeps past its bound at the end; and for each failure, a trace.
 */

/** A run to judge: every delivery Zapier took, each with its perform (the run ends when every timer has run). */
type Parts = {
  svix: SimSvix;
  performs: PerformRecord[];
  processes: Process[];
  cache: SimCache;
  scheduler: Scheduler;
} & {
  zaps: Pick<SimZaps, 'offs' | 'subscriptions' | 'zapOf' | 'unnamedEdits' | 'unmarked'>;
  /** Whether the last subscribe or unsubscribe to end had its listing of the endpoints answered (the pace checked). */
  paceChecked: boolean;
  /** The z.cache calls of turning Zaps on and off (their marks). */
  operationCacheCalls: CacheCall[];
};
export type Judged = Parts & { setting: Setting; seed: number };

const MAX_TRACES = 3;

const isJunk = (delivery: SimDelivery) => delivery.kind !== 'genuine' && delivery.signedBy.length === 0;
const add = <T>(map: Map<string, T[]>, key: string, item: T) => {
  const items = map.get(key);
  if (items) items.push(item);
  else map.set(key, [item]);
};
const callsOf = (performs: PerformRecord[], of: 'calls' | 'cacheCalls') =>
  performs.reduce((n, p) => n + p[of].length, 0);
/** The start times of the calls of these kinds. */
const startsOf = (calls: SvixCall[], ...kinds: Array<SvixCall['kind']>) =>
  calls.filter((call) => kinds.includes(call.kind)).map((call) => call.start);

export const judge = (run: Judged): Outcome => {
  const { svix, performs } = run;
  const messages = [...svix.messages.values()];
  const tally = {
    ...{ lost: 0, unanswered: 0, unclaimed: 0 },
    ...{ doubled: 0, forgedRun: 0, revokedRun: 0, junkOverBound: 0 },
  };
  const life = { skipped: 0, refusedThroughout: 0, ranWhileOff: 0, zapLife: 0, unmarked: 0, unnamed: 0 };
  const traces: string[] = [];
  const trace = (title: string, focus: PerformRecord[], message?: SimMessage) => {
    if (traces.length < MAX_TRACES) traces.push(traceOf(run, title, message, focus));
  };
  const fail = (
    what: keyof typeof tally | 'ranWhileOff' | 'zapLife',
    by: number,
    title: string,
    focus: PerformRecord[],
    message?: SimMessage,
  ) => {
    if (what === 'ranWhileOff' || what === 'zapLife') life[what] += by;
    else tally[what] += by;
    trace(title, focus, message);
  };
  // Zapier ends a perform at 30 s: whatever one running longer would have answered counts for nothing.
  const overTime = performs.filter((p) => p.outcome === 'running' || p.end - p.start > PERFORM_LIMIT_MS);
  for (const perform of overTime) Object.assign(perform, { outcome: 'cut', items: [], message: 'ran past 30 s' });
  if (overTime.length > 0) trace(`${overTime.length} performs ran past 30 s`, overTime);
  const [runsOf, performsOf] = [new Map<string, PerformRecord[]>(), new Map<string, PerformRecord[]>()];
  for (const perform of performs) {
    const { delivery } = perform;
    add(performsOf, delivery.id, perform);
    if (perform.outcome !== 'ran') continue;
    for (const item of perform.items) {
      const genuine = svix.messages.get(String(item.id));
      const same = genuine && Object.entries(genuine.payload).every(([key, value]) => item[key] === value);
      if (same) add(runsOf, genuine.id, perform);
      // A body signed with a secret the endpoint had is judged by the promise on revoked secrets, below.
      else if (delivery.kind === 'genuine' || delivery.signedBy.length === 0)
        fail('forgedRun', 1, `a forged body ran (${delivery.kind})`, [perform], genuine);
    }
    const violation = revocationBroken(run, perform);
    if (violation) fail('revokedRun', 1, violation, [perform], delivery.message);
  }
  for (const message of messages) {
    const [runs, tried] = [runsOf.get(message.id) ?? [], performsOf.get(message.id) ?? []];
    // An edit of a Zap Zapier names to no call: its two versions are two Zaps to the app, so what was made or held
    // while the edit was under way may run in both or neither (docs/guarantees.md: a known limit).
    if (runs.length !== 1 && inUnnamedEdit(run, message)) {
      life.unnamed += 1;
      continue;
    }
    // A run whose claim z.cache left unsettled in its time ran unclaimed: a possible duplicate, stated as such.
    const extra = Math.max(0, runs.length - 1);
    const doubled = Math.min(extra, Math.max(0, runs.filter((run) => !claimUnsettled(run)).length - 1));
    tally.unclaimed += extra - doubled;
    if (doubled > 0) fail('doubled', doubled, `run ${runs.length} times`, tried, message);
    const off = offRuleOf(run, message);
    // Run in an off whose unsubscribe Svix failed, and whose mark z.cache did not keep or hand back: nothing could
    // tell the Zap had been off (a known limit, counted apart).
    if (runs.length > 0 && off?.must && off.unmarked) {
      life.unmarked += 1;
      continue;
    }
    if (runs.length > 0 && off?.must) fail('ranWhileOff', 1, 'ran though made while its Zap was off', runs, message);
    if (runs.length > 0) continue;
    // Made or sent while its Zap was off past the edit grace: not run, as off means off (docs/guarantees.md).
    if (off) {
      life.skipped += 1;
      continue;
    }
    // Zapier served its Zap and refused every attempt Svix made, until Svix gave up: the world's, not the app's.
    if (tried.length === 0 && message.served === true) {
      life.refusedThroughout += 1;
      continue;
    }
    // Judged by its genuine deliveries: a forgery carrying its id halts, and says nothing of what Svix answered.
    const genuine = tried.filter((perform) => perform.delivery.kind === 'genuine');
    if (genuine.length > 0 && genuine.every((perform) => svixNeverAnswered(run, perform))) tally.unanswered += 1;
    else if (tried.some(claimedUnread)) tally.unclaimed += 1;
    else fail('lost', 1, 'lost', tried, message);
  }
  tally.junkOverBound = junkPastBound(run, (title, focus) => trace(title, focus));
  for (const problem of zapLifeProblems(run)) fail('zapLife', 1, problem, []);
  const overMemory = run.processes.flatMap(({ lives }) => lives).filter(({ runtime }) => !withinMemory(runtime));
  if (overMemory.length > 0) trace(`${overMemory.length} runtimes kept memory past the bound`, []);
  const junk = performs.filter((perform) => isJunk(perform.delivery));
  return {
    ...{ setting: run.setting.name, seed: run.seed, events: messages.length, deliveries: performs.length },
    ...{ ...tally, ...life, performs: performs.length, cut: performs.filter((p) => p.outcome === 'cut').length },
    ...{ overTime: overTime.length, overMemory: overMemory.length },
    ...{ junk: junk.length, junkSvixCalls: callsOf(junk, 'calls'), svixCalls: callsOf(performs, 'calls') },
    ...{ cacheCalls: callsOf(performs, 'cacheCalls'), latency: latencyOf(performs), late: lateOf(messages, runsOf) },
    traces,
    ...{ virtualSeconds: Math.round((run.scheduler.now - T0) / 1000) },
  };
};

/**
 * The off of its Zap past the edit grace (by the processes' clocks, each PROCESS_SKEW from the world's) that a message
 * was made in, or that Svix held it across, if any: it may go unrun. `must`: made well inside one surely past the grace,
 * where it must; `unmarked`: the off's unsubscribe failed with Svix and z.cache kept no mark of it.
 */
const offRuleOf = ({ zaps, operationCacheCalls }: Judged, message: SimMessage) => {
  const [maybeLong, surelyLong] = [EDIT_GRACE_MS - 2 * PROCESS_SKEW, EDIT_GRACE_MS + 2 * PROCESS_SKEW];
  for (const off of zaps.offs) {
    const [until, returned] = [off.until ?? Infinity, off.returned ?? Infinity];
    if (off.zap !== message.zap || until - off.from <= maybeLong) continue;
    const inside = (at: number) => off.from <= at && at <= returned;
    // Made in it, or held across some of it by Svix or Zapier's queue (not yet run when the Zap was turned off).
    const held = (message.held ?? []).some((wait) => wait.from <= returned && off.from <= wait.until);
    if (!inside(message.madeAt) && !held) continue;
    const must = until - off.from > surelyLong && off.from + SECOND < message.madeAt && message.madeAt < until - SECOND;
    // Svix failed the park: the rule rests on the mark, which z.cache may not have stored or handed back.
    const unread = operationCacheCalls.some(
      (call) => call.key === off.markKey && call.method === 'get' && call.fault && inside(call.start),
    );
    return { must, unmarked: !off.parked && (off.marked === false || unread) };
  }
  return undefined;
};
const SECOND = 1_000;

/** Whether a message was made, or held by Svix or Zapier's queue, while an edit of its Zap named to no call ran, or
 * was made before one (its new version, another Zap to the app, runs it again if it is sent there). */
const inUnnamedEdit = ({ zaps }: Judged, message: SimMessage): boolean =>
  zaps.unnamedEdits.some(({ zap, from, until = Infinity }) => {
    if (zap !== message.zap) return false;
    const held = (message.held ?? []).some((wait) => wait.from <= until && from <= wait.until);
    return held || message.madeAt <= until + SECOND;
  });

/**
 * What a Zap's life leaves wrong at the end: an endpoint Svix sends to (live, not parked) that no Zap's subscription
 * uses, a Zap on whose endpoint is parked or gone, and the live endpoints paced past 25 a second together (each gets
 * at least 1) though the last change listed them.
 */
const zapLifeProblems = ({ svix, zaps, paceChecked }: Judged): string[] => {
  const problems: string[] = [];
  const used = new Set(zaps.subscriptions().map(({ data }) => data.id));
  const unmarked = new Set(zaps.offs.filter((off) => !off.parked && off.marked === false).map((off) => off.zap));
  const kept = svix.endpoints.filter(({ record }) => !record.deleted);
  const live = kept.filter(({ record }) => record.metadata.parked === undefined);
  for (const endpoint of live)
    if (!used.has(endpoint.id) && !unmarked.has(zaps.zapOf(endpoint.id) ?? -1) && !zaps.unmarked.has(endpoint.id))
      problems.push(`endpoint ${endpoint.index} left live, its Zap off`);
  // The last operation swept past the grace: a parked endpoint stays only for a Zap that runs events missed while off.
  for (const endpoint of kept)
    if (endpoint.record.metadata.parked !== undefined && endpoint.record.metadata.keep !== '1')
      problems.push(`endpoint ${endpoint.index} left parked past the grace`);
  for (const id of used) {
    const endpoint = svix.find(id);
    if (!endpoint || endpoint.record.metadata.parked !== undefined)
      problems.push(`a Zap on with its endpoint ${endpoint ? 'parked' : 'gone'}`);
  }
  const enabled = live.filter(({ record }) => !record.disabled);
  const paced = enabled.reduce((sum, { record }) => sum + (record.throttleRate ?? PACE_PER_SECOND), 0);
  // Promised once the last change's listing was answered: Svix failing it, the next change paces them.
  if (paceChecked && paced > Math.max(PACE_PER_SECOND, enabled.length))
    problems.push(`live endpoints paced at ${paced} a second`);
  return problems;
};

/** Svix calls made by performs of junk, per life of a process and endpoint, past the allowance the limits state. Any
 * call of that life and endpoint that Svix failed may be made again by junk, outside the allowance. */
const junkPastBound = (run: Judged, trace: (title: string, focus: PerformRecord[]) => void): number => {
  const groups = new Map<string, PerformRecord[]>();
  for (const p of run.performs) if (p.calls.length > 0) add(groups, `${p.process}.${p.life}.${p.delivery.endpoint}`, p);
  let over = 0;
  for (const [where, group] of groups) {
    const junk = group.filter((perform) => isJunk(perform.delivery)).flatMap((perform) => perform.calls);
    const failed = group.flatMap((perform) => perform.calls).filter((call) => !call.ok);
    const { burst, everyMs } = JUNK_ALLOWANCE;
    // Each token pays for a confirmation (a read of the message) and at most one read of the secret it leads to.
    const confirmations = startsOf(junk, 'message');
    const past =
      overBound(confirmations, burst, everyMs, startsOf(failed, 'message')) +
      Math.max(0, startsOf(junk, 'read').length - confirmations.length - startsOf(failed, 'read').length);
    if (past > 0) trace(`junk past the allowance (process.life.endpoint ${where}): ${past}`, group.slice(0, 4));
    over += past;
  }
  return over;
};

/** What a runtime keeps once every delivery has ended: at most ENDPOINTS_KEPT endpoints. */
export const withinMemory = (runtime: Runtime): boolean => runtime.endpoints.size <= ENDPOINTS_KEPT;

/** A call on a message's claim, answered within its delivery's time. */
const claimCall = ({ start }: PerformRecord, call: CacheCall) =>
  call.key.startsWith('seen:') && call.end <= start + requestSettings.operationBudgetMs;
/** A claim z.cache left unsettled in its time: tried, and no set that stored it, nor a read of its holder, answered
 * in time (a set answering `false` settles nothing: Zapier may answer a throttle so). */
const claimUnsettled = (perform: PerformRecord) => {
  const calls = perform.cacheCalls.filter((call) => call.key.startsWith('seen:'));
  const settles = (call: CacheCall) =>
    claimCall(perform, call) && (call.method === 'set' ? call.answer === true : typeof call.answer === 'string');
  return calls.length > 0 && !calls.some(settles);
};
/** A perform whose claim was stored but answered as held (core's retry met its own write), with no read of whose it
 * is in its time: it cannot tell its claim from another's, and does not run. */
const claimedUnread = (perform: PerformRecord) =>
  perform.outcome !== 'ran' &&
  perform.cacheCalls.some((call) => call.key.startsWith('seen:') && call.fault === 'answer-lost') &&
  !perform.cacheCalls.some((call) => claimCall(perform, call) && typeof call.answer === 'string');

/**
 * Calls (their start times) past a token bucket of `burst` calls refilled one every `refillMs`, plus one for each
 * call Svix failed (made again outside the bucket): for any calls i..j, at most burst + (t_j - t_i) / refillMs of
 * them, and one more for each of `failed` started from RETRY_WITHIN_MS before t_i to t_j.
 */
export const overBound = (times: readonly number[], burst: number, refillMs: number, failed: number[] = []) => {
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
 * delivered body lacks), every secret that signed it replaced and no longer signing: broken when its own process had
 * learnt of a newer one before it began (below), or it ended over 10 minutes (SECRET_TRUSTED_MS) after the rotation,
 * whatever any process saw. Times are the world's: Svix keeps its rotations in its database, whatever its clock does.
 */
const revocationBroken = (run: Judged, perform: PerformRecord): string | undefined => {
  const signers = perform.delivery.signedBy;
  if (perform.items.some((item) => item.copy === 'record') || signers.length === 0) return undefined;
  const decidedAt = perform.end;
  if (signers.some((spell) => spell.replacedAt === undefined || spell.replacedAt > decidedAt)) return undefined;
  const newest = signers.reduce((a, b) => ((a.replacedAt ?? 0) > (b.replacedAt ?? 0) ? a : b));
  if ((newest.signsUntil ?? 0) > decidedAt) return undefined;
  const replacedAt = newest.replacedAt ?? 0;
  const ran = `ran on a body signed with ${newest.label} of endpoint ${newest.endpoint}`;
  const learnt = learntNewerAt(run, perform, newest);
  if (perform.start > learnt.at)
    return `${ran}, replaced, ${seconds(perform.start - learnt.at)} s after its own process ${learnt.how} a newer secret`;
  if (decidedAt > replacedAt + SECRET_TRUSTED_MS + 2 * PROCESS_SKEW)
    return `${ran}, ${seconds(decidedAt - replacedAt)} s after it was replaced`;
  return undefined;
};

/** When the perform's own process (this life of it) first learnt that `spell` was replaced: a read of Svix showed a
 * newer secret, or Svix confirmed a genuine delivery signed by newer secrets alone. */
const learntNewerAt = ({ svix, performs }: Judged, { process, life }: PerformRecord, spell: SecretSpell) => {
  const { secrets } = svix.endpoint(spell.endpoint);
  const later = secrets.slice(secrets.indexOf(spell) + 1);
  const newer = (other: SecretSpell) => later.includes(other);
  let learnt = { at: Infinity, how: '' };
  const learns = (at: number, how: string) => {
    if (at < learnt.at) learnt = { at, how };
  };
  for (const p of performs) {
    if (p.process !== process || p.life !== life) continue;
    const { kind, signedBy } = p.delivery;
    const confirmed = p.outcome === 'ran' && p.items.some((item) => item.copy === 'record');
    if (kind === 'genuine' && confirmed && signedBy.length > 0 && signedBy.every(newer))
      learns(p.end, 'confirmed a delivery signed by');
    for (const call of p.calls) if (call.kind === 'read' && call.showed && newer(call.showed)) learns(call.end, 'read');
  }
  return learnt;
};

/** True when the perform ended in an error while its process called Svix for its endpoint (it, or deliveries it
 * waited on) and Svix answered none of those calls. */
const svixNeverAnswered = ({ performs }: Judged, { process, life, delivery, start, end, outcome }: PerformRecord) => {
  // Calls for its endpoint in its process's life: the only answers its machine could have used (one per endpoint;
  // a fresh process of the same index starts with none).
  const during = performs
    .filter((p) => p.process === process && p.life === life && p.delivery.endpoint === delivery.endpoint)
    .flatMap((p) => p.calls.filter((c) => c.end >= start && c.end <= end));
  return outcome === 'failed' && during.length > 0 && !during.some((c) => c.ok);
};

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

/** A failure, readably: the message, the secrets of the endpoints concerned and their rotations (the world's clock;
 * Svix's, for what it signed and made), and each perform with its calls and end. */
const traceOf = (run: Judged, title: string, message: SimMessage | undefined, focus: PerformRecord[]) => {
  const { svix, cache } = run;
  const at = (ms: number) => `${seconds(ms - T0)}s`;
  const made = message ? `: ${message.id} (made at ${at(message.createdAt)} on Svix's clock)` : '';
  const lines = [`FAIL ${title}${made}; the cache answers as ${cache.options.reading}'s does`];
  for (const index of new Set(focus.map(({ delivery }) => delivery.endpoint))) {
    const { secrets } = svix.endpoint(index);
    const spells = secrets.map(({ label, from, readAt }, k) => {
      const { replacedAt = 0, signsUntil = 0 } = secrets[k - 1] ?? {};
      const grace = Math.round((signsUntil - replacedAt) / 1000);
      const rotated = k ? ` at ${at(from)}${grace ? ` (grace ${grace}s)` : ''}` : '';
      return `${label}${rotated}${readAt ? `, first read ${at(readAt)}` : ''}`;
    });
    lines.push(`  endpoint ${index}'s secrets: ${spells.join('; ')}`);
  }
  for (const { delivery, ...perform } of focus.slice(0, 6)) {
    const signers = delivery.signedBy.map((spell) => spell.label).join('+') || 'no secret of the endpoint';
    const where = `process ${perform.process + 1} (life ${perform.life}) at ${at(perform.start)}`;
    const signed = `signed ${at(delivery.signedAt)} (Svix's clock) by ${signers}`;
    lines.push(`  ${delivery.kind} #${delivery.attempt} to endpoint ${delivery.endpoint} ${signed} → ${where}`);
    for (const { method, key, start, end, fault, answer } of perform.cacheCalls) {
      const answered = `${fault ? `[${fault}] ` : ''}→ ${JSON.stringify(answer)?.slice(0, 40) ?? '-'}`;
      lines.push(`    cache ${method} ${key.replace(/:.*/, '')} ${at(start)}–${at(end)} ${answered}`);
    }
    for (const { kind, start, end, ok, fault, showed } of perform.calls) {
      const answered = ok ? `answered${showed ? ` ${showed.label}` : ''}` : `failed (${fault ?? 'timed out'})`;
      lines.push(`    Svix ${kind} ${at(start)}–${at(end)} ${answered}`);
    }
    const why = perform.message ? ` — ${perform.message.slice(0, 160)}` : '';
    lines.push(`    ended ${at(perform.end)}: ${perform.outcome}${why}`);
  }
  return lines.join('\n');
};

/** How long genuine deliveries that ran took, from perform to answer. */
/** How long after it was made each event that ran first ran (its perform's answer), s: the median and the worst. */
const lateOf = (messages: SimMessage[], runsOf: Map<string, PerformRecord[]>): Outcome['late'] => {
  const late = messages
    .flatMap((message) => {
      const first = Math.min(...(runsOf.get(message.id) ?? []).map((perform) => perform.end));
      return Number.isFinite(first) ? [(first - message.madeAt) / 1_000] : [];
    })
    .sort((a, b) => a - b);
  const at = (share: number) => Math.round(late[Math.min(late.length - 1, Math.floor(share * late.length))] ?? 0);
  return { p50: at(0.5), max: at(1) };
};

const latencyOf = (performs: PerformRecord[]): Outcome['latency'] => {
  const ran = performs.filter((p) => p.delivery.kind === 'genuine' && p.outcome === 'ran');
  const took = ran.map((p) => p.end - p.start).sort((a, b) => a - b);
  const at = (share: number) => Math.round(took[Math.min(took.length - 1, Math.floor(share * took.length))] ?? 0);
  return { p99: at(0.99), max: at(1) };
};
