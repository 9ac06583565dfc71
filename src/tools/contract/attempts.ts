import * as t from 'io-ts';
import { RETRY_SCHEDULE_MS } from '../svix/rules';
import type { SvixClient } from '../setup/client';

/**
 * Reading where Svix sent a message, for the questions about its retries: the attempt listing of an endpoint
 * (`GET …/attempt/endpoint/{id}`, MessageAttemptOut: each attempt's url, status, trigger and time), and bounded
 * waits for an attempt to come. A retry comes on Svix's schedule (5 s, 5 min…, ±20%; the emulator's a thousand
 * times faster): a wait is as long as the retry due, at most MAX_WAIT_MS, and what did not come by then is
 * answered "not yet seen", never waited for longer.
 */

/** MessageAttemptOut as read here (only what the questions use; the relay checks the whole shape). */
const Attempt = t.type(
  { id: t.string, msgId: t.string, url: t.string, status: t.number, triggerType: t.number, timestamp: t.string },
  'MessageAttemptOut',
);
export type Attempt = t.TypeOf<typeof Attempt>;
const AttemptListing = t.type({ data: t.array(Attempt) }, 'ListResponse_MessageAttemptOut_');

/** MessageStatus and MessageAttemptTriggerType, as the contract numbers them. */
export const SUCCESS = 0;
export const SCHEDULED = 0;
export const MANUAL = 1;

/** What a finding whose wait ran out answers first: it settles nothing, so it is never compared (run.ts). */
export const UNSEEN = 'not yet seen';

/** The longest wait for an attempt: a first attempt, or a retry due within it. */
export const MAX_WAIT_MS = 30_000;

/** Seconds, as a finding says them: "0.3 s", "5 s", "30 s". */
export const seconds = (ms: number): string => `${Number((ms / 1_000).toFixed(3))} s`;

/** Whole milliseconds since the epoch of a time as Svix writes it (microseconds, if any, dropped). */
export const timeOf = (attempt: Pick<Attempt, 'timestamp'>): number => Date.parse(attempt.timestamp);

/** The attempts of `messageId` to the endpoint, oldest first by Svix's clock. */
export const attemptsOf = async (
  client: SvixClient,
  appId: string,
  endpointId: string,
  messageId: string,
): Promise<Attempt[]> => {
  const action = "listing an endpoint's attempts";
  const answer = await client.call({
    method: 'GET',
    path: `/api/v1/app/${appId}/attempt/endpoint/${endpointId}`,
    query: { limit: '250' },
    action,
  });
  return client
    .decode(AttemptListing, answer.body, action)
    .data.filter((attempt) => attempt.msgId === messageId)
    .sort((a, b) => timeOf(a) - timeOf(b) || (a.id < b.id ? -1 : 1));
};

/** Asks `read` at once, then every `everyMs`, until it answers or `withinMs` has passed: its answer, or undefined. */
export const within = async <T>(
  withinMs: number,
  everyMs: number,
  read: () => Promise<T | undefined>,
): Promise<T | undefined> => {
  const until = Date.now() + withinMs;
  for (;;) {
    const seen = await read();
    if (seen !== undefined) return seen;
    const left = until - Date.now();
    if (left <= 0) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(everyMs, left)));
  }
};

/** The retry after `scheduled` scheduled attempts: when it is due after the last, and how long to wait for it. */
export interface RetryWait {
  dueMs: number;
  /** Three times the delay (its jitter is ±20%; the rest for Svix's queue) and a moment, at most MAX_WAIT_MS. */
  waitMs: number;
  /** Whether the wait covers it: if nothing came, nothing was coming. */
  settles: boolean;
  /** How often to look meanwhile. */
  everyMs: number;
}

export const retryWait = (
  schedule: readonly number[] = RETRY_SCHEDULE_MS,
  scheduled: number,
): RetryWait | undefined => {
  const dueMs = schedule[scheduled - 1];
  if (dueMs === undefined) return undefined;
  const needed = 3 * dueMs + 250;
  return {
    dueMs,
    waitMs: Math.min(MAX_WAIT_MS, needed),
    settles: needed <= MAX_WAIT_MS,
    everyMs: Math.min(1_000, Math.max(50, dueMs / 20)),
  };
};
