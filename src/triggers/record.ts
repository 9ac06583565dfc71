import { isRight } from 'fp-ts/Either';
import type { ZObject } from 'zapier-platform-core';
import { clock } from '../clock';
import { listMessagesBetween } from '../provider/api';
import { ExpiredPayload, type MessageOut } from '../provider/codecs';
import { EVENT_TYPE_NAME } from '../provider/eventType';
import type { Failure } from '../provider/failures';
import { timeOfProviderId } from '../provider/ksuid';
import type { Caller } from '../provider/request';
import { halt, resendHint } from './delivery';

/**
 * Svix's record of the Consumer App's messages, for a delivery that no
 * secret known to be current signed: one signed with a secret the endpoint
 * had (it waited in Zapier's queue while the secret was rotated), or with
 * one never seen here. Such a delivery runs only when the record has its
 * message, and the Zap then receives the record's copy of the event: the
 * delivered body is never used.
 *
 * The record is read by window: a message id carries the time it was made,
 * and one listing reads every message of a two-second window (a call per
 * 250 messages), so one listing answers for every delivery of that window
 * (a queue of deliveries across a rotation, or a burst of junk that claims
 * the same moment).
 */

/** The windows of message times that one listing covers, and the margin each side for the two clocks of an id. */
export const WINDOW_MS = 2_000;
const MARGIN_MS = 1_000;
/** Pages of 250 read for one window at most: 10,000 events in four seconds. */
const MAX_PAGES = 40;
/** Windows kept in memory, per endpoint, and the messages their listings hold at most (the oldest windows go first). */
const MAX_WINDOWS = 64;
const MAX_KEPT = 20_000;

/** One window's messages as a listing found them, and when that listing began (this side's clock). */
export interface Listing {
  startedAt: number;
  complete: boolean;
  messages: Map<string, MessageOut>;
}

/** What a person reads when the record settles a delivery against it. */
export const RECORD_REFUSALS = {
  notConfirmed:
    "Nothing to do unless you sent it: this delivery's signature did not match, and Svix's record of your Consumer App has no such event, so the Zap did not run.",
  beforeEndpoint:
    "Nothing to do: this delivery's signature did not match, and its event happened before this Zap was turned on, so the Zap did not run for it.",
  expired: (messageId: string): string =>
    `If you still need it, ask the auction service to send event ${messageId} again: Svix no longer keeps its content, so the Zap could not confirm it and did not run.`,
};

/** What kept the record from confirming an event, in a few words, from the failure of the call. */
const trouble = (failure: Failure): string =>
  failure.kind === 'throttled'
    ? 'Svix was limiting requests'
    : failure.kind === 'error' && failure.code === 'ProviderForbidden'
      ? 'this key may not read messages'
      : failure.kind === 'error' && failure.code === 'ProviderUnreachable'
        ? 'Svix could not be reached'
        : 'Svix had trouble answering';

/** A failure to read the record, reworded: which event did not run, and how to send it again. */
export const couldNotConfirm =
  (messageId: string) =>
  (failure: Failure): Failure => {
    const log = failure.log === undefined ? {} : { log: failure.log };
    if (failure.kind === 'auth') {
      const message = `Reconnect your account in Zapier with a current key, then resend message ${messageId} from Svix's dashboard: Svix refused the key while confirming the event.`;
      return { kind: 'auth', message, ...log };
    }
    const message = `${resendHint(messageId)}: its signature did not match this Zap's secret, and Svix could not confirm it (${trouble(failure)}), so the Zap did not run.`;
    return { kind: 'error', code: 'EventNotConfirmed', status: 503, message, ...log };
  };

/** Exactly `{"expired": true}`: what the provider keeps of a payload after its retention or deletion. */
const isExpired = (payload: unknown): boolean =>
  isRight(ExpiredPayload.decode(payload)) &&
  typeof payload === 'object' &&
  payload !== null &&
  Object.keys(payload).length === 1;

/**
 * The window of a delivery's message, or a halt: an id that carries no time
 * is no message of Svix's, and a message made before the Zap's endpoint is
 * not the Zap's to run.
 */
export const windowOf = (z: ZObject, endpoint: { id: string; checkedAt?: number }, messageId: string): number => {
  const createdAt = timeOfProviderId(messageId);
  const endpointAt = timeOfProviderId(endpoint.id) ?? endpoint.checkedAt;
  if (createdAt === undefined || endpointAt === undefined) return halt(z, RECORD_REFUSALS.notConfirmed);
  if (createdAt < endpointAt) return halt(z, RECORD_REFUSALS.beforeEndpoint);
  return windowStart(createdAt);
};

/** The start of the window a message made at `createdAt` falls in. */
const windowStart = (createdAt: number): number => Math.floor(createdAt / WINDOW_MS) * WINDOW_MS;

/**
 * A listing's pages read so far: when its first page began, its messages, and
 * where the next page starts. A listing Svix failed part-way goes on from
 * there: a message made before the first page began is on a page read since,
 * or on one still to come.
 */
type Progress = {
  startedAt?: number;
  messages: Map<string, MessageOut>;
  iterator?: string;
  pages: number;
  done?: true;
};

/** Every message of the window, a page at a time; `note` is told of a failure before it is reworded. */
const listWindow = async (
  caller: Caller,
  window: number,
  messageId: string,
  progress: Progress,
  note: (failure: Failure) => Failure,
): Promise<Listing> => {
  const reword = (failure: Failure) => couldNotConfirm(messageId)(note(failure));
  const range = { after: window - MARGIN_MS, before: window + WINDOW_MS + MARGIN_MS };
  while (!progress.done && progress.pages < MAX_PAGES) {
    const { iterator } = progress;
    const began = clock.now();
    const answer = await listMessagesBetween(caller, { ...range, ...(iterator ? { iterator } : {}) }, reword);
    progress.startedAt ??= began;
    progress.pages += 1;
    for (const message of answer.data) progress.messages.set(message.id, message);
    if (answer.done || !answer.iterator) progress.done = true;
    else progress.iterator = answer.iterator;
  }
  return {
    startedAt: progress.startedAt ?? clock.now(),
    complete: progress.done === true,
    messages: progress.messages,
  };
};

/**
 * Whether a listing answers for a delivery of a message made at `createdAt`
 * (Svix's clock) that arrived at `arrivedAt`: it has the message, or it read
 * the whole window and began after the delivery arrived (a genuine message
 * was made before it was delivered, so it would be there) or after the
 * message was made, Svix's clock being at least `svixAhead` ahead of this
 * side's, with a second's margin.
 */
const answers = (
  listing: Listing,
  { id, createdAt, arrivedAt }: { id: string; createdAt: number; arrivedAt: number },
  svixAhead: number,
): boolean =>
  listing.messages.has(id) ||
  (listing.complete && (listing.startedAt >= arrivedAt || listing.startedAt > createdAt + MARGIN_MS - svixAhead));

/**
 * What the record says of the delivery: the event (its payload as Svix keeps
 * it) when the listing has its message, else a halt. A listing that did not
 * read the whole window halts nothing it did not find.
 */
const confirmed = (z: ZObject, listing: Listing, messageId: string): unknown => {
  const message = listing.messages.get(messageId);
  if (!message || message.id !== messageId || message.eventType !== EVENT_TYPE_NAME) {
    return halt(z, RECORD_REFUSALS.notConfirmed);
  }
  if (isExpired(message.payload)) return halt(z, RECORD_REFUSALS.expired(messageId));
  return message.payload;
};

/**
 * One window's listing under way (or waiting for its call), from `startsAt`; or the last one made: its listing,
 * `unanswered` when Svix failed it for a moment, or `failed`, what Svix answered that is no listing (a refusal).
 */
type Window = {
  pending?: Promise<void>;
  /** Ends the wait for its call when a listing that starts sooner replaces it. */
  replaced?: AbortController;
  startsAt: number;
  listing?: Listing;
  unanswered?: boolean;
  progress?: Progress;
  failed?: { error: unknown };
};
/** The windows of one endpoint's record that this process has listed, oldest first. */
export type Windows = Map<number, Window>;

/**
 * Drops the oldest windows, the newest and those under way aside, while there are more than `maxWindows` or their
 * listings hold more than `maxKept` messages.
 */
export const trim = (windows: Windows, maxKept = MAX_KEPT, maxWindows = MAX_WINDOWS): void => {
  let kept = 0;
  // A listing's messages are its pages' (progress), read whole or part-way.
  const held = (window: Window) => (window.listing ?? window.progress)?.messages.size ?? 0;
  for (const window of windows.values()) kept += held(window);
  for (const [start, window] of [...windows].slice(0, -1)) {
    if (kept <= maxKept && windows.size <= maxWindows) return;
    if (window.pending) continue;
    kept -= held(window);
    windows.delete(start);
  }
};

/**
 * Whether the record has answered for a delivery, or Svix failed the last listing of its window; else when the
 * listing of its window under way starts, if one is.
 */
export const status = (
  windows: Windows,
  delivery: { id: string; arrivedAt: number },
  svixAhead: number,
): 'answered' | 'failed' | number | undefined => {
  const createdAt = timeOfProviderId(delivery.id);
  // An id that carries no time is refused without a call.
  if (createdAt === undefined) return 'answered';
  const start = windowStart(createdAt);
  const window = windows.get(start);
  if (window?.pending) return window.startsAt;
  const { listing } = window ?? {};
  if (listing && answers(listing, { ...delivery, createdAt }, svixAhead)) return 'answered';
  return window?.unanswered ? 'failed' : undefined;
};

/**
 * The record's answer for a delivery: its event, a halt, or undefined while
 * the record has not answered for it (ask the rules again). One listing at a
 * time per window, from `at` (its call of the allowance, `pay`, taken now:
 * the allowance counts listings, each read whole however many pages it
 * takes), shared by every delivery it answers for; one that starts sooner
 * replaces one waiting for its call. `guard` is told of each failure.
 */
export const check = async (
  z: ZObject,
  delivery: { id: string; arrivedAt: number },
  on: {
    endpoint: { id: string; checkedAt?: number };
    windows: Windows;
    svixAhead: number;
    caller: () => Caller;
    at: number;
    pay: () => void;
    guard: (call: (note: (failure: Failure) => Failure) => Promise<Listing>) => Promise<Listing | undefined>;
  },
): Promise<{ event: unknown } | undefined> => {
  const { windows, svixAhead, at } = on;
  const start = windowOf(z, on.endpoint, delivery.id);
  let window = windows.get(start);
  if (status(windows, delivery, svixAhead) !== 'answered' && (!window?.pending || at < window.startsAt)) {
    // A listing Svix failed goes on from the page it reached.
    const progress: Progress = (window?.unanswered && window.progress) || { messages: new Map(), pages: 0 };
    const next: Window = { startsAt: at, progress, replaced: new AbortController() };
    on.pay();
    window?.replaced?.abort();
    next.pending = clock
      .sleep(Math.max(0, at - clock.now()), next.replaced?.signal)
      .then(() =>
        windows.get(start) === next
          ? on.guard((note) => listWindow(on.caller(), start, delivery.id, progress, note))
          : undefined,
      )
      .then((listing) => void (listing ? ((next.listing = listing), trim(windows)) : (next.unanswered = true)))
      .catch((error: unknown) => void ((next.failed = { error }), windows.get(start) === next && windows.delete(start)))
      .finally(() => (next.pending = undefined));
    windows.delete(start);
    windows.set(start, (window = next));
    trim(windows);
  }
  await window?.pending;
  // Not a failure of a moment (those are retried): a refusal, such as a key that may not list messages.
  if (window?.failed) throw window.failed.error;
  if (status(windows, delivery, svixAhead) !== 'answered' || !window?.listing) return undefined;
  return { event: confirmed(z, window.listing, delivery.id) };
};
