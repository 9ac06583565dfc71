import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import type { Bundle, ZObject } from 'zapier-platform-core';
import { CLAIM_TTL_SECONDS } from '../delivery/claim';
import { readFilters } from '../fields/filters';
import { MESSAGES, type Missed } from '../messages';
import { claimScopeOf, SubscribeData } from '../models/inbound';
import { deleteEndpoint, findEndpoint, listEndpoints, paceEndpoint, replayMissing } from '../svix/api';
import { probeNx } from '../zapier/cache';
import type { EndpointOut } from '../svix/codecs';
import { isZapEndpoint } from '../svix/ids';
import { timeOfProviderId } from '../svix/ksuid';
import { callerOf, type Caller } from '../svix/client';
import { subscribeEndpoint, ZapMeta, zapEndpointOf } from './endpoint';
import { CATCH_UP, catchUpOf, Off, offKey, onAtSvix, registryKey, shareOf, zapScopeOf } from './policy';

/**
 * A Zap's life as Zapier runs it: turned on (performSubscribe), off (performUnsubscribe), and edited while on.
 *
 * Zapier documents that it subscribes when a Zap is turned on and unsubscribes when it is turned off or deleted,
 * with a new target URL for each activation. How it runs an edit of a Zap that is on (which call first, how far
 * apart, the same URL or a new one) it does not document, so every order is safe:
 * - Each subscription makes an endpoint of its own, and an unsubscribe deletes only its own: a new version that
 *   subscribes first is never left without one.
 * - A Zap's runs are claimed under its scope (the Zap's id, or its target URL where Zapier names no Zap), not its
 *   endpoint's: a message reaching one Zap through the old version's endpoint and the new one's runs once.
 * - A subscribe that finds its Zap's old endpoint still there, or its Zap turned off in the last 2 minutes, asks
 *   Svix to send the new endpoint what Svix may still have been sending (made in the 33 hours before: retries end
 *   with the old endpoint), or made between the calls, but nothing from before the Zap was on: the claims run each
 *   once. With "Run Events Missed While Off", turning on again does that for the whole time the Zap was off (up to
 *   6 days), or since Svix disabled its endpoint (an edit replaces it).
 * - The Consumer App's Zap endpoints are paced to 25 messages a second between them, as Zaps come and go: Zapier
 *   takes about 10,000 hooks in 5 minutes from one person. Which endpoints there are is kept in z.cache, so that a
 *   subscribe makes one Svix call when nothing else needs pacing; when z.cache has lost it, Svix lists them.
 */

/** The Zap as Zapier names it to subscribe and unsubscribe, if it does. */
const zapMetaOf = (bundle: Bundle): ZapMeta | undefined => {
  const meta = ZapMeta.decode(bundle.meta?.zap);
  return isRight(meta) ? meta.right : undefined;
};

/** This integration's endpoints in the Consumer App: each with its Zap's scope and its rate (none: unpaced). */
const Paced = t.type({ id: t.string, zap: t.string, rate: t.union([t.number, t.null]) });
type Paced = t.TypeOf<typeof Paced>;
const Registry = t.type({ endpoints: t.array(Paced) });

/** The endpoints Svix lists as this integration's (their uid says so); one Svix disabled, unpaced (it gets nothing)
 * but counted, until its Zap's next subscribe removes it. */
export const pacedOf = (endpoints: readonly EndpointOut[]): Paced[] =>
  endpoints.filter(isZapEndpoint).map((endpoint) => ({
    ...{ id: endpoint.id, zap: endpoint.metadata?.zap ?? endpoint.id },
    rate: endpoint.disabled === true ? null : (endpoint.throttleRate ?? null),
  }));

/** z.cache is best effort here: a Zap turns on and off whatever it answers. */
const cached = async <T>(call: () => Promise<T>): Promise<T | undefined> => {
  try {
    return await call();
  } catch {
    return undefined;
  }
};

/** Which endpoints there are: from z.cache, or else as Svix lists them (undefined: unknown, Svix failing say). */
const readRegistry = async (caller: Caller): Promise<Paced[] | undefined> => {
  const decoded = Registry.decode(await cached(() => caller.io.cache.get(registryKey(caller.connection))));
  if (isRight(decoded)) return decoded.right.endpoints;
  const listed = await listEndpoints(caller).catch(() => undefined);
  return listed && pacedOf(listed);
};
/** Keeps which endpoints there are; the connection test does too, from its listing, before a Zap is turned on. */
export const writeRegistry = (caller: Caller, endpoints: Paced[]) =>
  cached(() => caller.io.cache.set(registryKey(caller.connection), { endpoints }, CLAIM_TTL_SECONDS, false));

/** Paces each endpoint (but those Svix would not pace) at `rate` where it is paced faster (`down`) or slower; one
 * gone from Svix leaves the list, one that fails keeps its old rate, to be paced next time. */
const repace = async (caller: Caller, endpoints: Paced[], rate: number, down: boolean): Promise<Paced[]> => {
  const kept: Paced[] = [];
  for (const endpoint of endpoints) {
    const needs = endpoint.rate !== null && (down ? endpoint.rate > rate : endpoint.rate < rate);
    const status = needs ? await paceEndpoint(caller, endpoint.id, rate).catch(() => undefined) : undefined;
    if (status === 404) continue;
    kept.push(status !== undefined && status < 300 ? { ...endpoint, rate } : endpoint);
  }
  return kept;
};

/** Asks Svix to send the endpoint what it missed since then: undefined when it does, else why it did not. */
const catchUp = async (caller: Caller, endpointId: string, since: number): Promise<Missed | undefined> => {
  for (let attempt = 1; ; attempt += 1) {
    const answer = await replayMissing(caller, endpointId, since).catch(() => 500);
    if (answer === true) return undefined;
    if (answer === 401 || answer === 403) return 'not-permitted';
    // A failure of a moment (Svix busy or out of reach) is asked again: Svix sends nothing twice that it sent once,
    // and a catch-up skipped in silence loses what it was for.
    const passing = answer === 429 || answer >= 500;
    if (!passing || attempt >= CATCH_UP_TRIES || caller.deadline.remainingMs() < 2 * CATCH_UP_PAUSE_MS)
      return 'refused';
    await new Promise((resolve) => setTimeout(resolve, CATCH_UP_PAUSE_MS * attempt));
  }
};
/** How often a catch-up is asked of Svix when it fails for a moment, and the pause before the next try (doubling). */
const CATCH_UP_TRIES = 3;
const CATCH_UP_PAUSE_MS = 500;

/** Since when a Zap's endpoint has run events, as its metadata keeps it. */
const onOf = (endpoint: EndpointOut): number | undefined => {
  const on = Number(endpoint.metadata?.on);
  return Number.isFinite(on) ? onAtSvix(on, endpoint.id) : undefined;
};

/**
 * The Zap's endpoints from before this subscription (the registry's): those Svix disabled are removed (an
 * unsubscribe that never ran), as are those gone; one still live is an edit's old version, which its unsubscribe
 * removes: since when it ran events is kept.
 */
const earlierOfZap = async (caller: Caller, endpoints: Paced[], scope: string) => {
  const others: Paced[] = [];
  const live: EndpointOut[] = [];
  const disabled: EndpointOut[] = [];
  for (const endpoint of endpoints) {
    const found = endpoint.zap === scope ? await findEndpoint(caller, endpoint.id) : undefined;
    if (found?.disabled === true) {
      await deleteEndpoint(caller, endpoint.id);
      disabled.push(found);
    }
    if (found?.disabled === false) live.push(found);
    if (endpoint.zap !== scope || found?.disabled === false) others.push(endpoint);
  }
  /** The earliest `on` the endpoints' metadata keeps, if any does. */
  const earliest = (of: EndpointOut[]) => {
    const ons = of.flatMap((endpoint) => onOf(endpoint) ?? []);
    return ons.length > 0 ? Math.min(...ons) : undefined;
  };
  return { others, earlier: earliest(live), disabledOn: earliest(disabled) };
};

/** A Zap turned on (performSubscribe): its own endpoint, paced with the others, and what it missed, if wanted. */
export const subscribeZap = async (z: ZObject, bundle: Bundle, now: number): Promise<SubscribeData> => {
  const caller = callerOf(z, bundle, 'zap-editor');
  if (!bundle.targetUrl) throw new z.errors.Error(MESSAGES.missingTargetUrl, 'MissingTargetUrl', 400);
  const { io } = caller;
  const zap = zapMetaOf(bundle);
  const scope = zapScopeOf(zap, bundle.targetUrl);
  // Unknown: this Zap is paced as if alone, and the next subscribe or unsubscribe lists them again.
  const known = await readRegistry(caller);
  const { others, earlier, disabledOn } = await earlierOfZap(caller, known ?? [], scope);
  const filters = readFilters(bundle.inputData);
  const asked = filters.ok && filters.filters.catchUp;
  const off = Off.decode(await cached(() => io.cache.get(offKey(caller.connection, scope))));
  // An endpoint of this Zap Svix had disabled is off since it was disabled: as long as Svix keeps its messages.
  const disabled = disabledOn === undefined ? undefined : { at: now, claims: scope, since: 0, on: disabledOn };
  const { since, on } = catchUpOf({
    ...{ now, scope, asked },
    ...{ earlier, off: (asked ? disabled : undefined) ?? (isRight(off) ? off.right : undefined) },
  });
  const rate = shareOf(others.length + 1);
  const endpoint = await subscribeEndpoint(caller, bundle.targetUrl, { meta: zap, scope, on, rate });
  const paced = await repace(caller, others, rate, true);
  const own = { id: endpoint.id, zap: scope, rate: endpoint.paced ? rate : null };
  if (known) await writeRegistry(caller, [...paced, own]);
  const missed = since === undefined ? undefined : await catchUp(caller, endpoint.id, since);
  // Learnt once here, so that deliveries claim a message in one round trip.
  const cacheHonoursNx = await probeNx(io);
  return {
    ...{ id: endpoint.id, secret: endpoint.secret, checkedAt: now, zap: scope, on: onAtSvix(on, endpoint.id) },
    // Said where it was asked for: an edit's catch-up Svix refused is not the person's to act on.
    ...(missed === undefined || !asked ? {} : { missed }),
    ...(cacheHonoursNx === undefined ? {} : { cacheHonoursNx }),
  };
};

/**
 * A Zap turned off (performUnsubscribe): its endpoint deleted, with any this integration made earlier for the same
 * target URL (a subscribe whose answer was lost, retried: no unsubscribe would ever remove it), the others paced
 * again, and when it went off kept (from days before, if Svix had disabled it).
 */
export const unsubscribeZap = async (z: ZObject, bundle: Bundle, now: number): Promise<{ removed: boolean }> => {
  const caller = callerOf(z, bundle, 'zap-editor');
  const id = zapEndpointOf(bundle.subscribeData, bundle.targetUrl);
  const all = await listEndpoints(caller).catch(() => undefined);
  const own = all?.find((endpoint) => endpoint.id === id || endpoint.uid === id);
  const madeAt = (endpoint: EndpointOut) => timeOfProviderId(endpoint.id) ?? Infinity;
  const zapOf = (endpoint: EndpointOut) => endpoint.metadata?.zap;
  // Older endpoints of this Zap at this URL (a lost subscribe answer's): another Zap's at the same URL is its own.
  const orphans = (all ?? []).filter(
    (endpoint) =>
      own !== undefined &&
      endpoint !== own &&
      isZapEndpoint(endpoint) &&
      endpoint.url === bundle.targetUrl &&
      zapOf(endpoint) === zapOf(own) &&
      madeAt(endpoint) < madeAt(own),
  );
  // Handed the subscription of an edit's new version at the same URL (Zapier keeps one per URL, it may be): an
  // endpoint made in the last 2 minutes with an older one of its Zap there is the new version's, and stays.
  const edited =
    own !== undefined && now - madeAt(own) < CATCH_UP.editWithinMs && orphans.some((o) => zapOf(o) === zapOf(own));
  const removed = edited || (id ? (await deleteEndpoint(caller, own?.id ?? id)) === 'deleted' : false);
  for (const orphan of orphans) await deleteEndpoint(caller, orphan.id);
  const gone = new Set([...(edited ? [] : [own?.id ?? id]), ...orphans.map((orphan) => orphan.id)]);
  const left = (all ? pacedOf(all) : await readRegistry(caller))?.filter((endpoint) => !gone.has(endpoint.id));
  if (left) await writeRegistry(caller, await repace(caller, left, shareOf(left.length), false));
  const stored = SubscribeData.decode(bundle.subscribeData);
  if (!edited && isRight(stored) && bundle.targetUrl) {
    const scope = stored.right.zap ?? zapScopeOf(zapMetaOf(bundle), bundle.targetUrl);
    const since = own?.disabled === true ? 0 : now - CATCH_UP.inFlightMs;
    const on = stored.right.on ?? (own && onOf(own)) ?? stored.right.checkedAt ?? now;
    const off: Off = { at: now, claims: claimScopeOf(stored.right), since, on };
    await cached(() => caller.io.cache.set(offKey(caller.connection, scope), off, CLAIM_TTL_SECONDS, false));
  }
  return { removed };
};
