import { createHash } from 'node:crypto';
import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import { EDIT_GRACE_MS, PACE_PER_SECOND, SWEEP_PARKED_AFTER_MS } from '../limits';
import type { EndpointOut } from '../svix/codecs';
import type { ZapMeta } from './endpoint';

/**
 * A Zap's life as pure rules (life.ts carries them out with Svix and z.cache): which endpoint is a Zap's, what each
 * of Zapier's calls does to it, and what a sweep of the Consumer App does. No I/O: the simulation uses them as the
 * app does.
 *
 * A person's rules (docs/guide.md, "Turning a Zap off and on"), and how these keep them:
 * - **Off means off.** Turning a Zap off parks its one endpoint: its URL goes where nothing answers, so Svix holds
 *   what it sends meanwhile in its retry schedule. Turned on again within EDIT_GRACE_MS, the Zap runs what was held
 *   (Zapier publishes an edit as an unsubscribe and a subscribe, and the two cannot be told from a quick off and on).
 *   Later, the parked endpoint is deleted and a new one made: nothing made while it was off runs.
 * - **Run Events Missed While Off**: a parked endpoint is kept, however long the Zap is off, and pointed at Zapier
 *   again when it is turned on: Svix's retries bring what it still holds (the last 22 hours at least).
 * - **An edit in either order**: a subscribe points the endpoint at the new version; an unsubscribe parks it only if
 *   it still points at its own version (its generation).
 * - **The owner's account stays clean**: every operation that reaches the Consumer App may sweep it, deleting what
 *   no Zap will use again. What Svix cannot be told (an unsubscribe it failed) z.cache keeps as marks, read by the
 *   next sweep and subscribe, so that they make it good.
 *
 * An endpoint is in one of two states, by its metadata: live (pointed at a subscription's hook) or parked. Each
 * decision below is a table of those states against what the operation knows.
 */

export const hashOf = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);

/** A Zap's scope: the Zap Zapier names at subscribe, or else its target URL (Trigger Inbox names no Zap). */
export const zapScopeOf = (zap: ZapMeta | undefined, targetUrl: string): string => {
  const id = zap?.id === undefined ? '' : String(zap.id).trim();
  return id !== '' && id !== '0' ? `zap-${hashOf(id)}` : `url-${hashOf(targetUrl)}`;
};
/** Whether a scope names the Zap (else it is one activation's target URL: a Zap turned on again is another). */
export const namesZap = (scope: string): boolean => scope.startsWith('zap-');

/** The uid of a Zap's one endpoint: the same for every subscribe of the Zap, in whichever Consumer App. */
export const ZAP_UID_PREFIX = 'zapier-zap-';
export const zapUidOf = (scope: string): string => `${ZAP_UID_PREFIX}${hashOf(scope)}`;

/** Where a parked endpoint points: a name that never resolves (RFC 2606), so every attempt fails and is retried. */
export const PARKED_HOST = 'parked.invalid';
export const parkedUrlOf = (scope: string): string => `https://${PARKED_HOST}/zapier/${hashOf(scope)}`;

/** A number as Svix's metadata keeps it: a string. */
const Numeric = new t.Type<number, string, unknown>(
  'Numeric',
  (value): value is number => typeof value === 'number',
  (value, context) => {
    const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    return Number.isFinite(parsed) ? t.success(parsed) : t.failure(value, context);
  },
  String,
);
/**
 * What a Zap's endpoint keeps in its metadata: its Zap's scope, its generation (one more at each subscribe), since
 * when the Zap runs events, whether the Zap runs events missed while off (`keep`: '1'), and when it was parked, if
 * it is (this app's clock).
 */
export const ZapEndpointMetadata = t.intersection(
  [t.type({ zap: t.string, gen: Numeric, on: Numeric }), t.partial({ parked: Numeric, keep: t.literal('1') })],
  'ZapEndpointMetadata',
);
export type ZapEndpointMetadata = t.TypeOf<typeof ZapEndpointMetadata>;
export const metadataOf = (endpoint: Pick<EndpointOut, 'metadata'>): ZapEndpointMetadata | undefined => {
  const decoded = ZapEndpointMetadata.decode(endpoint.metadata ?? undefined);
  return isRight(decoded) ? decoded.right : undefined;
};
export const encodeMetadata = (metadata: ZapEndpointMetadata): Record<string, string> =>
  ZapEndpointMetadata.encode(metadata);

/** Whether an endpoint is a Zap's (a uid from zapUidOf, and metadata it can read). */
export const isOneZapEndpoint = (endpoint: EndpointOut): boolean =>
  (endpoint.uid ?? '').startsWith(ZAP_UID_PREFIX) && metadataOf(endpoint) !== undefined;

/**
 * What z.cache keeps of a Zap's life where Svix may not: the last subscribe of an endpoint (`on`: the generation and
 * hook it pointed it at) and the last unsubscribe (`off`: the generation it turned off, and when). Each names the
 * endpoint by id, so a mark outlives nothing it was written for.
 */
export const OnMark = t.type({ id: t.string, gen: t.number, url: t.string }, 'OnMark');
export type OnMark = t.TypeOf<typeof OnMark>;
export const OffMark = t.type({ id: t.string, gen: t.number, at: t.number }, 'OffMark');
export type OffMark = t.TypeOf<typeof OffMark>;
export type Marks = { on?: OnMark | undefined; off?: OffMark | undefined };

/** The Zap's endpoint as an operation finds it: live or parked (since when, this app's clock), or none. */
export type Found = { id: string; metadata: ZapEndpointMetadata; disabled: boolean };
type State = 'none' | 'live' | 'live, turned off' | 'parked';

/** Since when the endpoint's Zap has been off, by Svix (parked) or, where Svix failed the unsubscribe, by its mark. */
const offSince = (found: Found | undefined, marks: Marks): number | undefined => {
  if (!found) return undefined;
  if (found.metadata.parked !== undefined) return found.metadata.parked;
  const off = marks.off;
  return off && off.id === found.id && off.gen === found.metadata.gen ? off.at : undefined;
};
const stateOf = (found: Found | undefined, marks: Marks): State =>
  !found
    ? 'none'
    : found.metadata.parked !== undefined
      ? 'parked'
      : offSince(found, marks)
        ? 'live, turned off'
        : 'live';

/**
 * A Zap turned on: what to do with its endpoint.
 * | found                  | off within the grace, or Run Missed | off longer, without it |
 * | none                   | create                              | create                 |
 * | live                   | point (an edit, subscribe first)    | point                  |
 * | live, turned off (*)   | point                               | replace                |
 * | parked                 | point                               | replace                |
 * (*) its unsubscribe wrote its mark, and Svix failed the park. `replace`: delete it and make a new one, so that
 * nothing Svix holds of the time off runs.
 */
export type OnSubscribe = 'create' | 'point' | 'replace';
export const onSubscribe = (found: Found | undefined, marks: Marks, now: number, asked: boolean): OnSubscribe => {
  const state = stateOf(found, marks);
  if (state === 'none') return 'create';
  if (state === 'live') return 'point';
  const since = offSince(found, marks) ?? now;
  return asked || now - since <= EDIT_GRACE_MS ? 'point' : 'replace';
};

/**
 * A Zap turned off: park its endpoint if it still points at this subscription (its generation; a subscription that
 * kept none, by its URL); else leave it (an edit's new version has it, or it is parked or gone already).
 */
export const onUnsubscribe = (
  found: (Found & { url: string }) | undefined,
  subscription: { gen?: number | undefined; url?: string | undefined },
): 'park' | 'leave' => {
  if (!found || found.metadata.parked !== undefined) return 'leave';
  const ours =
    subscription.gen !== undefined ? subscription.gen === found.metadata.gen : found.url === subscription.url;
  return ours ? 'park' : 'leave';
};

/**
 * A sweep's decision for one of the Consumer App's Zap endpoints.
 * | state            | and                                                  | then                  |
 * | any              | a newer subscribe's mark, not turned off since (**)  | point at its hook     |
 * | parked           | Run Missed, Svix has disabled it (it holds nothing)  | delete                |
 * | parked           | without Run Missed, past the grace (*)               | delete                |
 * | live, turned off | past the grace (*): with Run Missed                  | park                  |
 * | live, turned off | past the grace (*): without it                       | delete                |
 * | anything else    |                                                      | leave                 |
 * (*) and the time a subscribe takes (SWEEP_PARKED_AFTER_MS), counted from before the listing: one that found it
 * within the grace, pointing it again, shows in the listing. (**) an edit whose two calls crossed: the old version's
 * park, or a late pointing of the old version (its subscribe's, or a sweep's), landed over the new version's.
 */
export type OnSweep = { do: 'leave' | 'delete' | 'park' } | { do: 'point'; url: string; gen: number };
/** `listedAt`: when the listing it decides on was begun. */
export const onSweep = (found: Found, marks: Marks, listedAt: number): OnSweep => {
  const now = listedAt;
  const { on, off } = marks;
  const { metadata } = found;
  const keep = metadata.keep === '1';
  const state = stateOf(found, marks);
  const since = offSince(found, marks) ?? now;
  const newer = on && on.id === found.id && on.gen > metadata.gen;
  const offSinceThen = off && off.id === found.id && off.gen >= (on?.gen ?? Infinity);
  if (newer && !offSinceThen) return { do: 'point', url: on.url, gen: on.gen };
  if (state === 'parked') {
    if (keep) return { do: found.disabled ? 'delete' : 'leave' };
    return { do: now - since > SWEEP_PARKED_AFTER_MS ? 'delete' : 'leave' };
  }
  if (state === 'live, turned off' && now - since > SWEEP_PARKED_AFTER_MS) return { do: keep ? 'park' : 'delete' };
  return { do: 'leave' };
};

/** The rate each of `count` endpoints gets: 25 a second between them, at least 1 each (Svix's least). */
export const shareOf = (count: number): number => Math.max(1, Math.floor(PACE_PER_SECOND / Math.max(1, count)));

/** The live Zap endpoints of a listing not at their share of the pace, and that share. */
export const paceOf = (live: readonly EndpointOut[]) => {
  const rate = shareOf(live.length);
  const pace = live.flatMap((endpoint) =>
    typeof endpoint.throttleRate === 'number' && endpoint.throttleRate !== rate ? [endpoint.id] : [],
  );
  return { rate, pace };
};
