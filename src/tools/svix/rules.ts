import { encodeKsuidMs, SVIX_EPOCH_SECONDS, timeOfSvixId } from '../../svix/ksuid';
import { RETRY_JITTER, RETRY_SCHEDULE_MS } from '../../limits';

/**
 * Rules of Svix's server that both models of Svix here follow: the emulator (src/tools/sandbox/emulator) and the
 * simulated Svix (src/tools/sim). Each is read from Svix's published server (`svix/svix-webhooks`, `server/svix-server`),
 * named beside it, and held by test/svix/rules.test.ts.
 *
 * Pure: every function takes what it decides on (ids, times in ms since the epoch, a random number in [0, 1)) and
 * returns its decision. No clock, no I/O, no state: the caller keeps the state and the time.
 */

const SECOND_MS = 1_000;
const HOUR_MS = 60 * 60 * SECOND_MS;
const DAY_MS = 24 * HOUR_MS;

// ---- Listings ------------------------------------------------------------------------------------------------
// The server's listing helpers (v1/utils/mod.rs: PaginationLimit, filter_and_paginate_time_limited,
// apply_pagination, list_response_inner), as the message list (v1/endpoints/message.rs) uses them.

/** `limit` when none is given, and the most a listing allows (a larger one is refused with 422, not capped). */
export const LIST_LIMIT = { default: 50, max: 250 } as const;

/** How far a message listing reaches back from its upper bound (or forward from its lower one) when not told. */
export const LISTING_WINDOW_MS = 90 * DAY_MS;

/** Ids made more than this far ahead of Svix's clock are never listed. */
export const LISTING_FUTURE_MS = HOUR_MS;

/** A 422 refusal, as the server words one item of it. */
export interface Refusal {
  loc: readonly string[];
  msg: string;
}

/** A page of a listing, in the order the server prints it. */
export interface ListingPage<T> {
  data: T[];
  /** The id to pass as `iterator` for the next page (older, for a newest-first page). */
  iterator: string | null;
  /** `-` and the first id of the page: the `iterator` for the page before it. */
  prevIterator: string | null;
  done: boolean;
}

export type Listed<T> = { ok: true; page: ListingPage<T> } | { ok: false; refusal: Refusal };

/** A `limit` the server takes (a whole number up to 250; 0 is taken too), or the 422 it answers. */
export const checkListLimit = (limit: number): Refusal | undefined =>
  limit > LIST_LIMIT.max
    ? { loc: ['query', 'limit'], msg: `Given limit must not exceed ${LIST_LIMIT.max}` }
    : undefined;

/** The KSUID part of an id (`msg_2p…` → `2p…`): ids of one kind sort by it, in time order at 4 ms. */
const ksuidOf = (id: string): string => id.slice(id.lastIndexOf('_') + 1);

const FIRST_KSUID = '0'.repeat(27);
const PAST_LAST_KSUID = 'z'.repeat(27);
const NO_RANDOM = new Uint8Array(15);
const ALL_RANDOM = new Uint8Array(15).fill(0xff);

/**
 * The first (`start`) or last (`end`) id of the 4 ms slot holding `ms`: the server's `start_id` and `end_id`,
 * which bound a listing. Outside the times a KSUID holds, before every id or after every id.
 */
const slotBound = (ms: number, edge: 'start' | 'end'): string => {
  try {
    return encodeKsuidMs(ms, edge === 'start' ? NO_RANDOM : ALL_RANDOM);
  } catch {
    return ms < SVIX_EPOCH_SECONDS * SECOND_MS ? FIRST_KSUID : PAST_LAST_KSUID;
  }
};

/** The `iterator` query value read: an id, and whether it asks for the page before (`-id`). */
const readIterator = (iterator: string, prefix: string): { id: string; at: number; backwards: boolean } | Refusal => {
  const backwards = iterator.startsWith('-');
  const id = backwards ? iterator.slice(1) : iterator;
  const at = id.startsWith(prefix) ? timeOfSvixId(id) : undefined;
  // The server checks the prefix only (a 422); it need not name a message that exists.
  if (at === undefined) return { loc: ['query', 'iterator'], msg: 'Invalid id. Expected different prefix' };
  return { id, at, backwards };
};

export interface MessageListing {
  limit: number;
  /** The `iterator` query value as given: an id, or `-` and an id for the page before. */
  iterator?: string | undefined;
  /** `before` and `after` (ms): bounds on the ids, at 4 ms. */
  before?: number | undefined;
  after?: number | undefined;
  /** Svix's clock now (ms). */
  now: number;
}

/**
 * One page of a message listing (`GET …/msg`), from `messages` in any order: those the query's other filters
 * (event types, channel) keep, that the reader can see (committed). The bounds are on the ids, at 4 ms:
 * `after` keeps the ids of its own slot (greater than its first id), `before` leaves out its own slot.
 * With no iterator and no bound, only the last 90 days are listed; with one bound, 90 days from it.
 * With `before`, both or neither, the newest come first; with `after` alone, the oldest `limit` after it are
 * chosen (the page is still printed newest first, and its `prevIterator` leads on to newer ones). An iterator
 * is an id cursor: it need not be a message that exists; with it, a bound not given does not reach 90 days.
 */
export const listMessages = <T>(
  messages: Iterable<T>,
  idOf: (message: T) => string,
  query: MessageListing,
): Listed<T> => {
  const tooMany = checkListLimit(query.limit);
  if (tooMany) return { ok: false, refusal: tooMany };
  const cursor = query.iterator === undefined ? undefined : readIterator(query.iterator, 'msg_');
  if (cursor && !('id' in cursor)) return { ok: false, refusal: cursor };
  const above: string[] = [];
  const below: string[] = [];
  let windowed = true;
  if (query.before !== undefined) {
    above.push(slotBound(query.before - LISTING_WINDOW_MS, 'start'));
    windowed = false;
    below.push(slotBound(query.before, 'start'));
  }
  if (query.after !== undefined) {
    if (windowed) below.push(slotBound(query.after + LISTING_WINDOW_MS, 'end'));
    windowed = false;
    above.push(slotBound(query.after, 'start'));
  }
  const backwards = cursor ? cursor.backwards : query.before === undefined && query.after !== undefined;
  if (cursor?.backwards) {
    above.push(ksuidOf(cursor.id));
    if (windowed) below.push(slotBound(cursor.at + LISTING_WINDOW_MS, 'end'));
  } else if (cursor) {
    below.push(ksuidOf(cursor.id));
    if (windowed) above.push(slotBound(cursor.at - LISTING_WINDOW_MS, 'start'));
  } else if (windowed) above.push(slotBound(query.now - LISTING_WINDOW_MS, 'start'));
  below.push(slotBound(query.now + LISTING_FUTURE_MS, 'start'));

  const lowest = above.reduce((a, b) => (a > b ? a : b), '');
  const highest = below.reduce((a, b) => (a < b ? a : b), PAST_LAST_KSUID);
  const chosen = inIdOrder(messages, idOf, (key) => key > lowest && key < highest, backwards);
  return { ok: true, page: pageOf(chosen, idOf, query.limit, backwards) };
};

/** The items `wanted` keeps (by their id's KSUID), ascending by it or descending. */
const inIdOrder = <T>(items: Iterable<T>, idOf: (item: T) => string, wanted: (key: string) => boolean, up: boolean) => {
  const chosen: Array<{ key: string; item: T }> = [];
  for (const item of items) {
    const key = ksuidOf(idOf(item));
    if (wanted(key)) chosen.push({ key, item });
  }
  chosen.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  if (!up) chosen.reverse();
  return chosen.map((entry) => entry.item);
};

/** The server's page: `limit` of what was chosen, in the order chosen, then turned newest first if read backwards. */
const pageOf = <T>(chosen: T[], idOf: (item: T) => string, limit: number, backwards: boolean): ListingPage<T> => {
  const data = chosen.slice(0, limit);
  if (backwards) data.reverse();
  const first = data[0];
  const last = data[data.length - 1];
  return {
    data,
    iterator: last === undefined ? null : idOf(last),
    prevIterator: first === undefined ? null : `-${idOf(first)}`,
    done: chosen.length <= limit,
  };
};

export interface IdListing {
  limit: number;
  iterator?: string | undefined;
  /** The listing's order (its `order` query value, or the route's default). */
  order: 'ascending' | 'descending';
  /** What the route's ids start with (`app_`, `ep_`): an iterator with another prefix is refused. */
  prefix: string;
}

/**
 * One page of a listing ordered by id without a time window (applications ascending by default, endpoints
 * descending): the server's `apply_pagination`. The iterator is an id cursor that need not exist.
 */
export const listById = <T>(items: Iterable<T>, idOf: (item: T) => string, query: IdListing): Listed<T> => {
  const tooMany = checkListLimit(query.limit);
  if (tooMany) return { ok: false, refusal: tooMany };
  const cursor = query.iterator === undefined ? undefined : readIterator(query.iterator, query.prefix);
  if (cursor && !('id' in cursor)) return { ok: false, refusal: cursor };
  // A `-` iterator walks the other way from the listing's order, and the page is turned back.
  const ascending = (query.order === 'ascending') !== (cursor?.backwards ?? false);
  const from = cursor ? ksuidOf(cursor.id) : undefined;
  const wanted = (key: string) => from === undefined || (ascending ? key > from : key < from);
  const chosen = inIdOrder(items, idOf, wanted, ascending);
  return { ok: true, page: pageOf(chosen, idOf, query.limit, cursor?.backwards ?? false) };
};

// ---- Signing keys and their rotation ---------------------------------------------------------------------------
// v1/endpoints/endpoint/secrets.rs (rotate_key), v1/endpoints/endpoint/mod.rs (EndpointSecretRotateIn),
// core/types/mod.rs (ExpiringSigningKeys::MAX_OLD_KEYS), core/message_app.rs (valid_signing_keys).

/** How many replaced keys may still be signing when a rotation is asked for; past it, 400 `limit_reached`. */
export const MAX_OLD_KEYS = 10;

/** `gracePeriodSeconds`: how long a replaced key keeps signing. Out of these bounds, 422. */
export const GRACE_SECONDS = { min: 0, max: 604_800, default: 86_400 } as const;

/** Whether the server takes this `gracePeriodSeconds` (a whole number from 0 to 7 days). */
export const isGraceSeconds = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= GRACE_SECONDS.min && value <= GRACE_SECONDS.max;

/** A replaced key, signing until `expiresAt` (ms; not at that instant). */
export interface ExpiringKey<K> {
  key: K;
  expiresAt: number;
}

export type Rotation<K> =
  | { ok: true; old: Array<ExpiringKey<K>> }
  /** 400 `limit_reached`: too many replaced keys still signing; `nextExpiry` is when the first stops. */
  | { ok: false; code: 'limit_reached'; nextExpiry: number };

/**
 * A rotation at `now`: the current key joins the replaced ones for `graceSeconds` (with 0 it stops at once),
 * those expired are dropped, and the rest are kept soonest-expiring first. Refused when that would leave more than
 * MAX_OLD_KEYS signing. The caller makes the new current key.
 */
export const rotateKeys = <K>(
  current: K,
  old: ReadonlyArray<ExpiringKey<K>>,
  graceSeconds: number,
  now: number,
): Rotation<K> => {
  const kept = old.filter((entry) => entry.expiresAt > now);
  const replaced = { key: current, expiresAt: now + graceSeconds * SECOND_MS };
  if (replaced.expiresAt > now) kept.push(replaced);
  kept.sort((a, b) => a.expiresAt - b.expiresAt);
  const first = kept[0];
  if (kept.length > MAX_OLD_KEYS && first) return { ok: false, code: 'limit_reached', nextExpiry: first.expiresAt };
  return { ok: true, old: kept };
};

/** The keys that sign an attempt made at `at`: the current one, then each replaced one not yet expired. */
export const keysSigningAt = <K>(current: K, old: ReadonlyArray<ExpiringKey<K>>, at: number): K[] => [
  current,
  ...old.filter((entry) => entry.expiresAt > at).map((entry) => entry.key),
];

// ---- Retries ------------------------------------------------------------------------------------------------------
// worker.rs (calculate_retry_delay, limit_retry_delay, retry_after, handle_failed_dispatch), config.default.toml.

// The retry schedule and its jitter are limits the product's promises rest on: src/limits.ts holds them.
export { RETRY_JITTER, RETRY_SCHEDULE_MS };

/** The shortest wait after an attempt that timed out (or, as the server's code names it, an endpoint's 429). */
export const OVERLOAD_PENALTY_MS = 60 * SECOND_MS;

/** How long an attempt may take: the open-source server's default (Svix's docs give 15 s for Cloud). */
export const ATTEMPT_TIMEOUT_MS = 30 * SECOND_MS;

/** How an attempt failed, as the retry rule needs it. */
export type FailedAttempt =
  /** The endpoint answered a status other than 2xx; `retryAfterMs` from its Retry-After header, if readable. */
  | { kind: 'status'; status: number; retryAfterMs?: number | undefined }
  | { kind: 'timeout' }
  /** No answer for another reason (refused, reset, DNS): the schedule as it is. */
  | { kind: 'unreachable' };

/**
 * The wait (ms) before the next attempt of a scheduled delivery, when the schedule says `scheduledMs`: at least
 * `penaltyMs` after a time-out or a 429; an endpoint's Retry-After taken but held to 1–2× that; then varied by
 * ±20% with `random` (in [0, 1)), to the millisecond. The server's code names the 429, but its worker wraps an endpoint's status in a
 * generic error, so as written only a time-out meets the check; both models apply it to both, as intended.
 * `penaltyMs` is a parameter so a compressed schedule (the sandbox's, a thousand times faster) compresses it too.
 */
export const retryDelayMs = (
  scheduledMs: number,
  failed: FailedAttempt,
  random: number,
  penaltyMs: number = OVERLOAD_PENALTY_MS,
): number => {
  const overloaded = failed.kind === 'timeout' || (failed.kind === 'status' && failed.status === 429);
  const base = overloaded ? Math.max(scheduledMs, penaltyMs) : scheduledMs;
  const asked = failed.kind === 'status' ? failed.retryAfterMs : undefined;
  const held = asked === undefined ? base : Math.min(Math.max(asked, base), base * 2);
  return Math.round(held * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random));
};

/**
 * An endpoint's Retry-After header as a wait from `now` (ms): an HTTP date, or seconds (a fraction rounds up);
 * a time past is no wait; undefined when it cannot be read.
 */
export const retryAfterMs = (header: string | null | undefined, now: number): number | undefined => {
  const text = header?.trim();
  if (!text) return undefined;
  if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) return Math.max(0, Math.ceil(Number(text)) * SECOND_MS);
  const at = Date.parse(text);
  return Number.isNaN(at) || !/[A-Za-z]/.test(text) ? undefined : Math.max(0, at - now);
};

// ---- Disabling an endpoint that keeps failing ------------------------------------------------------------------
// worker.rs (process_endpoint_failure, process_endpoint_success), config.default.toml
// (endpoint_failure_disable_after = 120).

/** How long an endpoint's failures must last, counted from the first message that used up its retries. */
export const DISABLE_AFTER_MS = 120 * HOUR_MS;

/** Since when an endpoint has failed for good: when a message first used up its retries (Svix keeps it in a cache). */
export interface FailingSince {
  at: number;
}

/**
 * What the server does when a scheduled message uses up its retries on an endpoint at `now`. The first time (or
 * once the record has lapsed, 2× `disableAfterMs` after it was made) it records the time; a later one more than
 * `disableAfterMs` after that disables the endpoint. A manual resend that fails counts for nothing; any delivery
 * that succeeds forgets the record (the caller drops it). A disabled endpoint gets nothing, and nothing re-enables
 * it but a person (or a Zap's subscribe).
 */
export const afterRetriesUsedUp = (
  since: FailingSince | undefined,
  now: number,
  disableAfterMs: number = DISABLE_AFTER_MS,
): { since: FailingSince; disable: boolean } => {
  if (since === undefined || now >= since.at + 2 * disableAfterMs) return { since: { at: now }, disable: false };
  return { since, disable: now - since.at > disableAfterMs };
};

// ---- What the server takes in a request body -------------------------------------------------------------------

/** `throttleRate` (or the older `rateLimit`): a whole number from 1 to 65,535 messages a second (v1/endpoints/endpoint/mod.rs). */
export const isThrottleRate = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65_535;
