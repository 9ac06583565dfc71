import { isRight } from 'fp-ts/Either';
import type { Bundle, ZObject } from 'zapier-platform-core';
import type { Clock } from '../zapier/clock';
import { readFilters } from '../fields/filters';
import { MESSAGES } from '../messages';
import { SubscribeData } from '../models/inbound';
import {
  ACTIONS,
  changeEndpoint,
  deleteEndpoint,
  findEndpoint,
  getEndpointSecret,
  listEndpoints,
  paceEndpoint,
  type EndpointChange,
} from '../svix/api';
import type { EndpointOut } from '../svix/codecs';
import { describeStatus } from '../svix/failures';
import { callerOf, type Caller } from '../svix/client';
import { isEndpointId } from '../svix/ids';
import { probeNx } from '../zapier/cache';
import { raise, type Io } from '../zapier/io';
import { PACE_PER_SECOND } from '../limits';
import { createZapEndpoint, endpointDescription, ZapMeta } from './endpoint';
import {
  encodeMetadata,
  isOneZapEndpoint,
  metadataOf,
  PARKED_FOR_MS,
  parkedUrlOf,
  skipOf,
  skipsOf,
  tidyOf,
  zapScopeOf,
  zapUidOf,
  type Skip,
  type ZapEndpointMetadata,
} from './policy';

/**
 * A Zap's life as Zapier runs it: turned on (performSubscribe), off (performUnsubscribe), and edited while on, by
 * the rules of zap/policy.ts. Zapier documents that it subscribes when a Zap is turned on and unsubscribes when it is
 * turned off or deleted, with a new target URL for each activation; how it runs an edit (which call first, how far
 * apart, the same URL or a new one) it does not (docs/zapier-fidelity.md), so every order is safe:
 * - Subscribe first: the Zap's one endpoint is pointed at the new URL, and what Svix was retrying goes there; the
 *   old version's unsubscribe, of an older generation, changes nothing.
 * - Unsubscribe first: the endpoint is parked, and Svix holds every message in its retry schedule until the new
 *   version's subscribe points it at Zapier again. Nothing is sent once: a new hook Zapier does not yet serve is
 *   retried by Svix's schedule like any failed attempt.
 * Each subscribe and unsubscribe then lists the Consumer App's endpoints: it paces the live ones to share 25 a
 * second, and deletes those parked longer than Svix retries anything.
 */

/** What a subscribe and an unsubscribe read of the bundle Zapier hands them. */
export type ZapBundle = Pick<Bundle, 'authData' | 'inputData' | 'targetUrl' | 'subscribeData'> & {
  meta?: { zap?: unknown } | undefined;
};

/** The Zap as Zapier names it to subscribe and unsubscribe, if it does. */
const zapMetaOf = (bundle: ZapBundle): ZapMeta | undefined => {
  const meta = ZapMeta.decode(bundle.meta?.zap);
  return isRight(meta) ? meta.right : undefined;
};

/** A subscribe that finds its endpoint parked longer than this makes a new one: an unsubscribe of another Zap may be
 * deleting it (it deletes those parked an hour longer), and what it held is past Svix's retries. */
const UNPARK_WITHIN_MS = PARKED_FOR_MS;
const SWEEP_AFTER_MS = PARKED_FOR_MS + 60 * 60_000;

/** Svix had the Zap's endpoint, then did not, twice over: something else is removing it at this very moment. */
const ENDPOINT_RACED =
  'Turn the Zap on again in a minute: its endpoint in Svix was being removed while the Zap was turned on.';

/** Where the Zap's endpoint now points, and what the subscription keeps of it. */
type Pointed = { id: string; secret: string; gen: number; on: number; skip?: Skip[] };

/** A Zap turned on (performSubscribe): its one endpoint, made or pointed at this subscription, paced with the others. */
export const subscribeZap = async (z: ZObject | Io, bundle: ZapBundle, clock: Clock): Promise<SubscribeData> => {
  const now = clock.now();
  const caller = callerOf(z, bundle, 'zap-editor', now, clock.now);
  const { targetUrl } = bundle;
  if (!targetUrl) throw new caller.io.errors.Error(MESSAGES.missingTargetUrl, 'MissingTargetUrl', 400);
  const meta = zapMetaOf(bundle);
  const scope = zapScopeOf(meta, targetUrl);
  const filters = readFilters(bundle.inputData);
  const zap = { caller, clock, url: targetUrl, scope, meta, now, asked: filters.ok && filters.filters.catchUp };
  const pointed = await pointZapEndpoint(zap);
  // A listing after the change: the Zaps' pace, leftovers gone, and this endpoint as this subscribe left it (an
  // unsubscribe of the Zap's older version at the same moment may have parked it after this read it).
  const listed = await tidy(caller, clock);
  const own = listed?.find((endpoint) => endpoint.id === pointed.id);
  const kept = own && metadataOf(own);
  if (own && (own.url !== targetUrl || kept?.gen !== pointed.gen || kept.parked !== undefined))
    await change(
      caller,
      own.id,
      pointing(zap, { ...pointed, skip: kept?.skip ?? pointed.skip }),
      ACTIONS.pointEndpoint,
    );
  // Learnt once here, so that deliveries claim a message in one round trip.
  const cacheHonoursNx = await probeNx(caller.io);
  const { id, secret, gen, on, skip } = pointed;
  return {
    ...{ id, secret, checkedAt: now, zap: scope, on, gen },
    ...(skip === undefined || skip.length === 0 ? {} : { skip }),
    ...(cacheHonoursNx === undefined ? {} : { cacheHonoursNx }),
  };
};

type ZapOn = { caller: Caller; clock: Clock; url: string; scope: string; meta: ZapMeta | undefined } & {
  now: number;
  asked: boolean;
};

/** What pointing the endpoint at a subscription changes: its URL, enabled (Svix may have disabled it), its label. */
const pointing = (zap: ZapOn, pointed: Pick<Pointed, 'gen' | 'on' | 'skip'>): EndpointChange => ({
  url: zap.url,
  disabled: false,
  description: endpointDescription(zap.meta),
  metadata: encodeMetadata({ zap: zap.scope, gen: pointed.gen, on: pointed.on, skip: pointed.skip }),
});

/**
 * Makes the Zap's endpoint (one Svix call), or points the one it has at this subscription: a new generation, its
 * secret read, and what was made while it was parked skipped where the policy says. One parked too long is made
 * anew, as is one deleted while this ran.
 */
const pointZapEndpoint = async (zap: ZapOn): Promise<Pointed> => {
  const { caller, now } = zap;
  const uid = zapUidOf(zap.scope);
  for (let attempt = 1; ; attempt += 1) {
    const fresh = { zap: zap.scope, gen: 1, on: now };
    const created = await createZapEndpoint(caller, {
      ...{ url: zap.url, uid, meta: zap.meta, metadata: encodeMetadata(fresh), rate: PACE_PER_SECOND },
    });
    if (created.kind === 'created') return { id: created.id, secret: created.secret, gen: 1, on: now };
    // Each call tried again after a failure of a moment: a Zap that fails to turn on is the person's to retry.
    const again = <T>(call: () => Promise<T>) => withRetries(caller, zap.clock, call);
    const found = await again(() => findEndpoint(caller, uid));
    const kept: Partial<ZapEndpointMetadata> = (found && metadataOf(found)) ?? {};
    const stale = kept.parked !== undefined && now - kept.parked > UNPARK_WITHIN_MS;
    if (found && stale) await deleteEndpoint(caller, found.id);
    if (found && !stale) {
      const gen = (kept.gen ?? 0) + 1;
      // What it was off for is skipped, where the policy says: kept with the endpoint (this clock's bound, safe
      // either way) for later subscriptions, as Svix may still be retrying those messages then.
      const skipping = skipOf({ parked: kept.parked, now, asked: zap.asked });
      const on = skipping ? now : (kept.on ?? now);
      const keeps = { gen, on, skip: skipsOf(kept.skip, now, skipping) };
      const { status, at } = await again(() => change(caller, found.id, pointing(zap, keeps), ACTIONS.pointEndpoint));
      const skip = skipsOf(kept.skip, now, skipOf({ parked: kept.parked, now, asked: zap.asked, svixAt: at }));
      if (status !== 404) {
        const secret = await again(() => getEndpointSecret(caller, found.id));
        return { id: found.id, secret, gen, on, skip };
      }
    }
    // Deleted between the calls (as a stale one is): made anew, once.
    if (attempt >= 2) throw new caller.io.errors.Error(ENDPOINT_RACED, 'EndpointRaced', 409);
  }
};

/** A PATCH of the endpoint: Svix's answer, 404 when it is gone; a refusal (422) is the person's to read. */
const change = async (caller: Caller, id: string, what: EndpointChange, action: string) => {
  const changed = await changeEndpoint(caller, id, what, action);
  if (changed.status === 422) raise(caller.io, describeStatus(422, undefined, { action, reader: caller.reader }));
  return changed;
};

/**
 * A Zap turned off (performUnsubscribe): its endpoint parked, if this subscription is the one it points at (an
 * edit's new version may already have pointed it elsewhere), so that Svix holds what it sends meanwhile; an endpoint
 * of the design before (one per subscription) deleted, as it was then. Then the others are paced again.
 */
export const unsubscribeZap = async (
  z: ZObject | Io,
  bundle: ZapBundle,
  clock: Clock,
): Promise<{ removed: boolean }> => {
  const now = clock.now();
  const caller = callerOf(z, bundle, 'zap-editor', now, clock.now);
  const decoded = SubscribeData.decode(bundle.subscribeData);
  const subscription = isRight(decoded) ? decoded.right : undefined;
  const scope = subscription?.zap ?? (bundle.targetUrl ? zapScopeOf(zapMetaOf(bundle), bundle.targetUrl) : undefined);
  const stored = subscription && isEndpointId(subscription.id) ? subscription.id : undefined;
  const id = stored ?? (scope === undefined ? undefined : zapUidOf(scope));
  if (id === undefined) return { removed: false };
  const removed = await withRetries(caller, clock, async () => {
    // Read again on each try: an edit's new version may have pointed it elsewhere meanwhile.
    const found = await findEndpoint(caller, id);
    if (!found) return false;
    if (!isOneZapEndpoint(found)) return (await deleteEndpoint(caller, found.id)) === 'deleted';
    const kept = metadataOf(found);
    // Its own generation; a subscription that kept none (Zapier lost it) knows its endpoint by its URL.
    const ours = subscription?.gen !== undefined ? subscription.gen === kept?.gen : found.url === bundle.targetUrl;
    return kept !== undefined && ours && kept.parked === undefined && park(caller, found, kept, clock.now());
  });
  await tidy(caller, clock);
  return { removed };
};

/** Runs `attempt` again after a failure of a moment (up to 3 tries, 300 ms and 600 ms apart) while the operation has
 * time: a Zap turned on or off is a step the person sees fail, and an endpoint left pointing at Zapier is one no
 * later operation knows to park. */
const withRetries = async <T>(caller: Caller, clock: Clock, attempt: () => Promise<T>): Promise<T> => {
  for (let tries = 1; ; tries += 1) {
    try {
      return await attempt();
    } catch (error) {
      // A key Svix refuses is refused again: the person reconnects.
      const final = error instanceof Error && error.name === 'ExpiredAuthError';
      if (final || tries >= TRIES || caller.deadline.remainingMs() < 2 * PAUSE_MS * tries) throw error;
      await clock.sleep(PAUSE_MS * tries).done;
    }
  }
};
const TRIES = 3;
const PAUSE_MS = 300;

/** Parks the endpoint where nothing answers (or, should Svix refuse that URL, leaves it at the Zap's old one, which
 * Zapier answers 410), kept with when: Svix retries what it sends meanwhile until the Zap is on again. */
const park = async (caller: Caller, endpoint: EndpointOut, kept: ZapEndpointMetadata, now: number) => {
  const metadata = encodeMetadata({ ...kept, parked: now });
  const description = `${endpoint.description ?? endpointDescription()} Off since ${new Date(now).toISOString()}.`;
  const parked = { url: parkedUrlOf(kept.zap), metadata, description };
  const { status } = await changeEndpoint(caller, endpoint.id, parked, ACTIONS.parkEndpoint);
  if (status !== 422) return status < 300;
  return (await changeEndpoint(caller, endpoint.id, { metadata, description }, ACTIONS.parkEndpoint)).status < 300;
};

/**
 * Lists the Consumer App's endpoints, deletes the Zaps' endpoints parked longer than Svix retries anything, and
 * paces the live ones to share 25 a second, until a listing shows every one at its share (Zaps turned on at once
 * each change what the others listed: the last listing of all decides). What it last listed; undefined when Svix
 * could not list them (the next subscribe or unsubscribe does it).
 */
const tidy = async (caller: Caller, clock: Clock): Promise<EndpointOut[] | undefined> => {
  const now = clock.now();
  for (let round = 0; round < TIDY_ROUNDS; round += 1) {
    // Tried again after a failure of a moment: an unchecked pace may stay over 25 until the next change.
    const listed = await withRetries(caller, clock, () => listEndpoints(caller)).catch(() => undefined);
    if (!listed) {
      caller.io.log("Svix did not list this Consumer App's endpoints: the next Zap turned on or off paces them.");
      return undefined;
    }
    const { rate, pace, remove } = tidyOf(listed, now, SWEEP_AFTER_MS);
    for (const id of remove) await deleteEndpoint(caller, id).catch(() => undefined);
    if (pace.length === 0) return listed.filter((endpoint) => !remove.includes(endpoint.id));
    for (const id of pace)
      await withRetries(caller, clock, () => paceEndpoint(caller, id, rate)).catch(() => undefined);
  }
  caller.io.log('The Zaps of this Consumer App changed while they were being paced: the next change paces them.');
  return undefined;
};
/** Listings a tidy makes at most: one, and one after each round of pacing. */
const TIDY_ROUNDS = 4;
