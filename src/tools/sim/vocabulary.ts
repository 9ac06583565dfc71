import * as t from 'io-ts';
import { ZAPIER_PERFORM_MS } from '../../limits';
import type { Runtime } from '../../delivery/runtime';
import type { operationsFor } from '../../triggers/auctionStatusChanged';
import type { CacheCall } from './cache';
import type { EventLoop } from './scheduler';
import type { SecretSpell, SimMessage, SvixCall } from './svix';

/**
 * What the simulated world (world.ts) and its judge (oracle.ts) both speak of: the deliveries Zapier takes, the
 * processes that run them, each perform as it went, a run's outcome, and the times the promises are judged by. The
 * judge reads a run through these alone: it never imports the world it judges.
 */

export const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
/** How far the processes' clocks may be from each other. */
export const PROCESS_SKEW = 1_000;
/** A call Svix failed is made again after the back-off (at most 2 s, or a 429's Retry-After of 1 s) once it has ended
 * (at most 3 s): within 6 s. */
export const RETRY_WITHIN_MS = 6_000;
/** Zapier ends a hook's perform this long after it began. */
export const PERFORM_LIMIT_MS = ZAPIER_PERFORM_MS;

export const FORGERIES = [
  'wrong-secret',
  'tampered',
  'unsigned',
  'too-old',
  'not-a-svix-id',
  'revoked-secret',
] as const;
export type Kind = 'genuine' | 'junk' | 'replayed-id' | (typeof FORGERIES)[number];

/** What Zapier takes: its body, its headers' id, signature (none: unsigned) and second (Svix's clock, ms). */
export type Sent = { kind: Kind; id: string; body: string; signature: string | undefined; signedAt: number };
/** The endpoint it was sent to, its secrets that signed its body (none for junk), the message it carries, and
 * Svix's attempt. */
export type SimDelivery = Sent & {
  endpoint: number;
  signedBy: SecretSpell[];
  message: SimMessage | undefined;
  attempt: number;
};

export type Deliver = ReturnType<typeof operationsFor>['deliver'];
/** A process has lives, the one running last: Zapier takes processes cold, and starts new ones. */
export type Process = { index: number; skew: number; lives: Life[] };
export type Life = {
  process: Process;
  number: number;
  runtime: Runtime;
  loop: EventLoop;
  deliver: Deliver;
  running: Set<PerformRecord>;
};

/** A perform, as it went; `cut`: the runtime ended it unanswered (nothing held its loop, or it ran past 30 s). */
type Outcomes = 'ran' | 'no-items' | 'halted' | 'failed' | 'running' | 'cut';
type Where = { delivery: SimDelivery; process: number; life: number; start: number; end: number };
type How = { outcome: Outcomes; message: string; items: Array<Record<string, unknown>>; calls: SvixCall[] };
export type PerformRecord = Where & How & { cacheCalls: CacheCall[] };

/** A run's result (a sweep's workers send it as a JSON line). */
export const Outcome = t.type({
  ...{ setting: t.string, seed: t.number, events: t.number, deliveries: t.number, performs: t.number, lost: t.number },
  /** unanswered: lost events whose every perform failed while Svix answered none of its process's calls for its
   * endpoint; unclaimed: events run twice, or lost, where z.cache gave a claim no answer that could settle it in its
   * time (both excused: known limits). A genuine delivery never waits behind junk for the allowance: Zapier runs
   * one perform per process at a time, so junk in one never holds another's tokens. */
  ...{ unanswered: t.number, unclaimed: t.number },
  ...{ cut: t.number, overTime: t.number, overMemory: t.number },
  ...{ doubled: t.number, forgedRun: t.number, revokedRun: t.number, junk: t.number, junkSvixCalls: t.number },
  ...{ junkOverBound: t.number, svixCalls: t.number, cacheCalls: t.number, virtualSeconds: t.number },
  /** skipped: made or sent while its Zap was off past the edit grace, and not run (excused); ranWhileOff: made well
   * inside such a time, and run; refusedThroughout: Zapier served its Zap and refused every attempt (excused); zapLife: endpoints left live for a Zap that is off, a Zap on without its endpoint, pace over 25. */
  ...{ skipped: t.number, refusedThroughout: t.number, ranWhileOff: t.number, zapLife: t.number },
  /** unmarked: events run though made in an off whose unsubscribe Svix failed and whose mark z.cache failed; unnamed:
   * events run twice or not at all, made or held while an edit of a Zap Zapier names to no call ran (both excused). */
  unmarked: t.number,
  unnamed: t.number,
  /** How long after it was made each event that ran first ran, s: the median and the worst. */
  late: t.type({ p50: t.number, max: t.number }),
  /** How long genuine deliveries that ran took from perform to answer, ms: the 99th percentile and the longest. */
  latency: t.type({ p99: t.number, max: t.number }),
  traces: t.array(t.string),
});
export type Outcome = t.TypeOf<typeof Outcome>;
