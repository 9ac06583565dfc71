import { isIP } from 'node:net';
import { signatureHeader } from '../../svix/signing';
import {
  afterRetriesUsedUp,
  DISABLE_AFTER_MS,
  OVERLOAD_PENALTY_MS,
  RETRY_SCHEDULE_MS,
  retryAfterMs,
  retryDelayMs,
  type FailedAttempt,
  type FailingSince,
} from '../../svix/rules';
import { EXPIRED_PAYLOAD, newId, type AppRecord, type EndpointRecord, type MessageRecord, type Store } from './store';

/**
 * Delivers messages the way Svix does: a signed POST of the payload to
 * every enabled endpoint whose event types match, spaced at the endpoint's
 * throttleRate when it has one, retried on failure (non-2xx or time-out) on the
 * Svix's schedule with its jitter, penalty and Retry-After (src/tools/svix/rules.ts),
 * compressed for the sandbox; an endpoint that keeps failing is disabled as the
 * Svix disables it. Every attempt is recorded on its message. Deliveries go
 * to loopback addresses only: the sandbox never sends anything off this machine.
 */

/** Svix's retry schedule after a failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const PROVIDER_RETRY_SCHEDULE_MS = RETRY_SCHEDULE_MS;

/** How much faster than Svix's the sandbox's clock of retries runs. */
const SANDBOX_SPEED = 1_000;

/** The same schedule a thousand times faster: 5 ms, 300 ms, 1.8 s, 7.2 s, 18 s, 36 s, 36 s. */
export const SANDBOX_RETRY_SCHEDULE_MS: readonly number[] = PROVIDER_RETRY_SCHEDULE_MS.map(
  (delay) => delay / SANDBOX_SPEED,
);

/** The least wait after a time-out or a 429, as fast: 60 ms. */
export const SANDBOX_OVERLOAD_PENALTY_MS = OVERLOAD_PENALTY_MS / SANDBOX_SPEED;

/** How long failures last before an endpoint is disabled, as fast: 432 s. */
export const SANDBOX_DISABLE_AFTER_MS = DISABLE_AFTER_MS / SANDBOX_SPEED;

export interface DispatcherOptions {
  retryScheduleMs: readonly number[];
  attemptTimeoutMs: number;
  concurrency: number;
  /** How far the signing clock is from this machine's (negative: behind), as Svix's may be from Zapier's. */
  signingOffsetMs?: number;
  /** Whether an endpoint's throttleRate spaces its deliveries (as Svix does). */
  paced?: boolean;
  /** The least wait after a time-out or a 429. */
  overloadPenaltyMs: number;
  /** How long an endpoint's failures last before it is disabled. */
  disableAfterMs: number;
  /** A random number in [0, 1), for the retries' jitter. */
  random: () => number;
  /**
   * How old the endpoint an attempt reads may be (0, the default: as it is now). Svix's worker reads an app's
   * endpoints through a cache kept 30 s (worker.rs, `layered_fetch`); see EmulatorOptions.endpointCacheMs.
   */
  endpointCacheMs?: number;
  /** The clock the endpoint cache's age is measured by (Date.now by default; tests move it). */
  clock?: () => number;
  /** Whether a manual attempt ends the message's scheduled retries to that endpoint, as Svix's worker does. */
  manualAttemptEndsRetries?: boolean;
}

/** What an attempt reads of its endpoint: where it goes, and whether it goes at all. */
interface EndpointView {
  url: string;
  disabled: boolean;
}

/** How many apps' cached endpoints are kept at most (the oldest read is dropped first). */
const MAX_CACHED_APPS = 1_000;

interface Task {
  app: AppRecord;
  message: MessageRecord;
  endpointId: string;
  /** 0 for the first attempt. */
  attempt: number;
  triggerType: 'scheduled' | 'manual';
}

export interface DeliveryStats {
  attempts: number;
  succeeded: number;
  failedAttempts: number;
  retriesScheduled: number;
  /** Attempts the endpoint never answered in time (or at all): on a busy machine, more than the faults planned. */
  unanswered: number;
  /** Deliveries that used up the whole schedule without a 2xx. */
  exhausted: number;
  pending: number;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

export const isLoopbackUrl = (url: string): boolean => {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  if (LOOPBACK_NAMES.has(host)) return true;
  return isIP(host) === 4 && host.startsWith('127.');
};

export const matches = (endpoint: EndpointRecord, message: MessageRecord): boolean =>
  !endpoint.disabled && (!endpoint.eventTypes || endpoint.eventTypes.includes(message.eventType));

export class Dispatcher {
  private readonly queue: Task[] = [];
  private running = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  /**
   * Each paced endpoint's deliveries waiting for their turn, and when it may next be sent to: one goes out
   * every 1/throttleRate seconds, counted from when the last one really went (a late timer does not bunch them).
   */
  private readonly pacedQueues = new Map<string, { tasks: Task[]; next: number; timer?: NodeJS.Timeout }>();
  private readonly waiters: Array<() => void> = [];
  /** Since when each endpoint has failed for good (a message used up its retries), until a delivery succeeds. */
  private readonly failingSince = new Map<string, FailingSince>();
  private stopped = false;
  /** Deliveries held back (see hold). */
  private held: Task[] | undefined;
  /** Each app's endpoints as an attempt last read them (see endpointCacheMs), and when, by the clock. */
  private readonly endpointCache = new Map<string, { at: number; endpoints: Map<string, EndpointView> }>();
  readonly stats: Omit<DeliveryStats, 'pending'> = {
    attempts: 0,
    succeeded: 0,
    failedAttempts: 0,
    retriesScheduled: 0,
    unanswered: 0,
    exhausted: 0,
  };

  constructor(
    private readonly store: Store,
    private readonly options: DispatcherOptions,
  ) {}

  /** Queues the message for every matching endpoint of its app. */
  dispatch(app: AppRecord, message: MessageRecord): void {
    for (const endpoint of app.endpoints.values()) {
      if (matches(endpoint, message))
        this.enqueue({ app, message, endpointId: endpoint.id, attempt: 0, triggerType: 'scheduled' });
    }
  }

  /** Sends the message to one endpoint again, as Svix's resend does. */
  resend(app: AppRecord, message: MessageRecord, endpoint: EndpointRecord): void {
    this.enqueue({ app, message, endpointId: endpoint.id, attempt: 0, triggerType: 'manual' });
  }

  get pending(): number {
    let paced = 0;
    for (const { tasks } of this.pacedQueues.values()) paced += tasks.length;
    return this.queue.length + this.running + this.timers.size + paced;
  }

  /** Resolves once nothing is queued, sending or waiting for a retry. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.queue.length = 0;
    this.pacedQueues.clear();
    this.settle();
  }

  /** Holds new deliveries until the function returned is called; then they all go at once. */
  hold(): () => void {
    const held: Task[] = [];
    this.held = held;
    return () => {
      if (this.held === held) this.held = undefined;
      for (const task of held.splice(0)) this.enqueue(task);
    };
  }

  private enqueue(task: Task): void {
    if (this.stopped) return;
    if (this.held) return void this.held.push(task);
    const rate = task.app.endpoints.get(task.endpointId)?.throttleRate;
    if (this.options.paced === false || !rate || rate <= 0) {
      this.queue.push(task);
      this.pump();
      return;
    }
    const paced = this.pacedQueues.get(task.endpointId) ?? { tasks: [], next: 0 };
    this.pacedQueues.set(task.endpointId, paced);
    paced.tasks.push(task);
    this.release(task.endpointId, rate);
  }

  /** Sends a paced endpoint's next delivery when its turn has come, and waits for the turn of the one after; at the
   * endpoint's rate as it is then (a PATCH re-paces what is queued). */
  private release(endpointId: string, rate: number): void {
    const paced = this.pacedQueues.get(endpointId);
    if (!paced || paced.timer || this.stopped) return;
    const wait = paced.next - Date.now();
    if (wait <= 0) {
      const task = paced.tasks.shift();
      if (!task) return void this.pacedQueues.delete(endpointId);
      const now = task.app.endpoints.get(endpointId)?.throttleRate;
      rate = now !== undefined && now > 0 ? now : rate;
      paced.next = Date.now() + 1_000 / rate;
      this.queue.push(task);
      this.pump();
      if (paced.tasks.length === 0) return;
    }
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        paced.timer = undefined;
        this.release(endpointId, rate);
        this.settle();
      },
      Math.max(0, paced.next - Date.now()),
    );
    paced.timer = timer;
    this.timers.add(timer);
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const task = this.queue.shift();
      if (!task) break;
      this.running += 1;
      void this.attempt(task).finally(() => {
        this.running -= 1;
        this.pump();
        this.settle();
      });
    }
  }

  private settle(): void {
    if (this.pending === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }

  /**
   * The endpoint as an attempt reads it: as it is now, or, with an endpoint cache, as the app's endpoints were
   * when an attempt last read them, if that was less than endpointCacheMs ago (worker.rs, `layered_fetch`: the
   * whole app's endpoints are read at once and kept that long). Only its URL and disabled flag are cached: an
   * endpoint deleted, or made after the read, is read as it is now.
   */
  private viewOf(app: AppRecord, endpoint: EndpointRecord): EndpointView {
    const live = { url: endpoint.url, disabled: endpoint.disabled };
    const keptMs = this.options.endpointCacheMs ?? 0;
    if (!(keptMs > 0)) return live;
    const now = (this.options.clock ?? Date.now)();
    let cached = this.endpointCache.get(app.id);
    if (!cached || now - cached.at >= keptMs) {
      const endpoints = new Map<string, EndpointView>();
      for (const each of app.endpoints.values()) endpoints.set(each.id, { url: each.url, disabled: each.disabled });
      cached = { at: now, endpoints };
      // Re-inserted, so the map's first key is the app read longest ago.
      this.endpointCache.delete(app.id);
      this.endpointCache.set(app.id, cached);
      for (const oldest of this.endpointCache.keys()) {
        if (this.endpointCache.size <= MAX_CACHED_APPS) break;
        this.endpointCache.delete(oldest);
      }
    }
    return cached.endpoints.get(endpoint.id) ?? live;
  }

  /**
   * Whether the message's last attempt to the endpoint left no next attempt (it succeeded, was manual, or was the
   * last retry): Svix's worker then skips a scheduled task for the two (worker.rs, `process_queue_task_inner` reads
   * the status from that attempt, and `dispatch_message_task` skips one neither pending nor sending).
   */
  private retriesEnded(task: Task): boolean {
    const { attempts } = task.message;
    for (let index = attempts.length - 1; index >= 0; index -= 1) {
      const attempt = attempts[index];
      if (attempt?.endpointId === task.endpointId) return attempt.nextAttemptInMs === undefined;
    }
    return false;
  }

  private async attempt(task: Task): Promise<void> {
    const endpoint = task.app.endpoints.get(task.endpointId);
    // Deleted or disabled since: Svix stops delivering to it. A message
    // whose payload is no longer kept cannot be sent again.
    const payload = this.store.payloadOf(task.message);
    if (!endpoint || this.stopped || payload === EXPIRED_PAYLOAD) return;
    const view = this.viewOf(task.app, endpoint);
    if (view.disabled) return;
    if (task.triggerType === 'scheduled' && this.options.manualAttemptEndsRetries === true && this.retriesEnded(task))
      return;
    const body = JSON.stringify(payload);
    const timestamp = String(Math.floor((Date.now() + (this.options.signingOffsetMs ?? 0)) / 1000));
    const startedAt = Date.now();
    const outcome = await this.post(view.url, endpoint, task.message.id, timestamp, body);
    this.stats.attempts += 1;
    const at = Date.now();
    this.store.recordAttempt(task.message, {
      id: newId('atmpt', at),
      endpointId: endpoint.id,
      url: view.url,
      status: outcome.ok ? 'success' : 'fail',
      responseStatusCode: outcome.status,
      response: outcome.response,
      responseDurationMs: at - startedAt,
      timestamp: new Date(at).toISOString(),
      triggerType: task.triggerType,
    });
    if (outcome.ok) {
      this.stats.succeeded += 1;
      // A success forgets when the endpoint started failing (worker.rs, process_endpoint_success).
      this.failingSince.delete(endpoint.id);
      return;
    }
    this.stats.failedAttempts += 1;
    if (outcome.status === 0) this.stats.unanswered += 1;
    // A manual resend that fails is not retried, and counts for nothing towards disabling (worker.rs).
    if (task.triggerType === 'manual') return;
    const scheduled = this.options.retryScheduleMs[task.attempt];
    if (scheduled === undefined || this.stopped) {
      this.stats.exhausted += 1;
      this.retriesUsedUp(endpoint);
      return;
    }
    const delay = retryDelayMs(scheduled, outcome.failed, this.options.random(), this.options.overloadPenaltyMs);
    const recorded = task.message.attempts[task.message.attempts.length - 1];
    if (recorded) recorded.nextAttemptInMs = delay;
    this.stats.retriesScheduled += 1;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.enqueue({ ...task, attempt: task.attempt + 1 });
      this.settle();
    }, delay);
    this.timers.add(timer);
  }

  /** A message used up its retries on this endpoint: it is disabled once that has gone on long enough. */
  private retriesUsedUp(endpoint: EndpointRecord): void {
    const { since, disable } = afterRetriesUsedUp(
      this.failingSince.get(endpoint.id),
      Date.now(),
      this.options.disableAfterMs,
    );
    this.failingSince.set(endpoint.id, since);
    if (disable) {
      endpoint.disabled = true;
      endpoint.updatedAt = new Date().toISOString();
    }
  }

  /** One attempt to `url`, signed with the endpoint's keys. */
  private async post(
    url: string,
    endpoint: EndpointRecord,
    id: string,
    timestamp: string,
    body: string,
  ): Promise<
    | { ok: true; status: number; response: string }
    | { ok: false; status: number; response: string; failed: FailedAttempt }
  > {
    if (!isLoopbackUrl(url)) {
      return {
        ok: false,
        status: 0,
        response: 'The sandbox delivers only to addresses on this machine (localhost, 127.0.0.1, ::1).',
        failed: { kind: 'unreachable' },
      };
    }
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'auction-status-sandbox/Svix-emulator',
          'svix-id': id,
          'svix-timestamp': timestamp,
          'svix-signature': signatureHeader(this.store.signingSecrets(endpoint), id, timestamp, body),
        },
        body,
        signal: AbortSignal.timeout(this.options.attemptTimeoutMs),
      });
      const text = await response.text();
      const answered = { status: response.status, response: text.slice(0, 1_024) };
      if (response.status >= 200 && response.status < 300) return { ok: true, ...answered };
      const retryAfter = retryAfterMs(response.headers.get('retry-after'), Date.now());
      return { ok: false, ...answered, failed: { kind: 'status', status: response.status, retryAfterMs: retryAfter } };
    } catch (error) {
      // A DOMException, not always an Error of this realm (under jest's, for one): read its name.
      const timedOut = typeof error === 'object' && error !== null && Reflect.get(error, 'name') === 'TimeoutError';
      return timedOut
        ? { ok: false, status: 0, response: 'timed out', failed: { kind: 'timeout' } }
        : { ok: false, status: 0, response: 'could not connect', failed: { kind: 'unreachable' } };
    }
  }
}
