import { isRight } from 'fp-ts/Either';
import type * as t from 'io-ts';
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
import { withinDeadline } from '../zapier/cache';
import { Deadline, raise, requestSettings, type Io } from '../zapier/io';
import {
  EDIT_GRACE_MS,
  inWords,
  PACE_PER_SECOND,
  SWEEP_EVERY_MS,
  SWEEP_PARKED_AFTER_MS,
  ZAP_MARKS_KEPT_MS,
} from '../limits';
import { createZapEndpoint, endpointDescription, ZapMeta } from './endpoint';
import {
  encodeMetadata,
  isOneZapEndpoint,
  metadataOf,
  namesZap,
  OffMark,
  onSubscribe,
  onSweep,
  onUnsubscribe,
  OnMark,
  paceOf,
  parkedUrlOf,
  zapScopeOf,
  zapUidOf,
  type Found,
  type Marks,
  type OnSweep,
  type ZapEndpointMetadata,
} from './policy';

/**
 * A Zap's life as Zapier runs it: turned on (performSubscribe), off (performUnsubscribe), edited while on (the two,
 * in either order), and a sweep of the Consumer App after each, by the rules of zap/policy.ts. Every Svix call is
 * tried again after a failure of a moment; what Svix still fails, z.cache's marks let the next operation make good.
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

/** Svix had the Zap's endpoint, then did not, twice over: something else is removing it at this very moment. */
const ENDPOINT_RACED =
  'Turn the Zap on again in a minute: its link to Svix was being removed while the Zap was turned on.';

/** A Zap turned on (performSubscribe): its one endpoint made, or pointed at this subscription, by policy.onSubscribe. */
export const subscribeZap = async (z: ZObject | Io, bundle: ZapBundle, clock: Clock): Promise<SubscribeData> => {
  const now = clock.now();
  const caller = callerOf(z, bundle, 'zap-editor', now, clock.now);
  const { targetUrl } = bundle;
  if (!targetUrl) throw new caller.io.errors.Error(MESSAGES.missingTargetUrl, 'MissingTargetUrl', 400);
  const meta = zapMetaOf(bundle);
  const scope = zapScopeOf(meta, targetUrl);
  const filters = readFilters(bundle.inputData);
  // Run Missed needs the Zap named: a Zap known only by its target URL is another one each time it is turned on.
  const keep = filters.ok && filters.filters.catchUp && namesZap(scope);
  const zap: ZapOn = { caller, clock, url: targetUrl, scope, meta, now, keep };
  const pointed = await pointZapEndpoint(zap);
  await writeMark(caller, clock, 'on', zapUidOf(scope), { id: pointed.id, gen: pointed.gen, url: targetUrl });
  // A listing after the change: the pace, leftovers gone, and this endpoint as this subscribe left it (an unsubscribe
  // of the Zap's older version at the same moment may have parked it after this pointed it).
  const listed = await sweep(caller, clock);
  const own = listed?.find((endpoint) => endpoint.id === pointed.id);
  const kept = own && metadataOf(own);
  // A newer subscribe of the Zap (a higher generation) owns it now: this one leaves it be.
  const newer = kept !== undefined && kept.gen > pointed.gen;
  if (own && !newer && (own.url !== targetUrl || kept?.gen !== pointed.gen || kept.parked !== undefined))
    await again(caller, clock, () => change(caller, own.id, pointing(zap, pointed), ACTIONS.pointEndpoint));
  const { id, secret, gen, on } = pointed;
  return { id, secret, checkedAt: now, zap: scope, on, gen };
};

type ZapOn = { caller: Caller; clock: Clock; url: string; scope: string; meta: ZapMeta | undefined } & {
  now: number;
  keep: boolean;
};
/** Where the Zap's endpoint now points, and what the subscription keeps of it. */
type Pointed = { id: string; secret: string; gen: number; on: number };

/** What pointing the endpoint at a subscription changes: its URL, enabled (Svix may have disabled it), its label. */
const pointing = (zap: ZapOn, pointed: Pick<Pointed, 'gen' | 'on'>): EndpointChange => ({
  url: zap.url,
  disabled: false,
  description: endpointDescription(zap.meta),
  metadata: encodeMetadata({ zap: zap.scope, gen: pointed.gen, on: pointed.on, ...(zap.keep ? { keep: '1' } : {}) }),
});

/**
 * Makes the Zap's endpoint (one Svix call, for a Zap's first time on), or, where Svix has it already (409), points it
 * at this subscription or replaces it, as policy.onSubscribe says.
 */
const pointZapEndpoint = async (zap: ZapOn): Promise<Pointed> => {
  const { caller, clock, now } = zap;
  const uid = zapUidOf(zap.scope);
  const marks = await readMarks(caller, clock, uid);
  let gen = (marks.on?.gen ?? 0) + 1;
  // Made, or found and pointed; found and replaced, then made; found gone between the calls, then made.
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    const metadata = encodeMetadata({ zap: zap.scope, gen, on: now, ...(zap.keep ? { keep: '1' } : {}) });
    const created = await again(caller, clock, () =>
      createZapEndpoint(caller, { url: zap.url, uid, meta: zap.meta, metadata, rate: PACE_PER_SECOND }),
    );
    if (created.kind === 'created') return { id: created.id, secret: created.secret, gen, on: now };
    // Svix has it: made by this Zap before, or by this subscribe's own try whose answer was lost.
    const found = await again(caller, clock, () => findEndpoint(caller, uid));
    const state = found && foundOf(found);
    if (!found || !state) continue;
    gen = Math.max(gen, state.metadata.gen + 1);
    if (onSubscribe(state, marks, now, zap.keep) === 'replace') {
      await again(caller, clock, () => deleteEndpoint(caller, found.id));
      caller.io.log(`This Zap was off for over ${inWords(EDIT_GRACE_MS)}: what Svix held for it is not run.`);
      continue;
    }
    // An edit, or a Zap off briefly or with Run Missed: what it held keeps its time of the Zap being on. The secret is
    // read first, so that a subscribe that fails leaves the endpoint as it found it (parked, say).
    const on = state.metadata.on;
    const secret = await again(caller, clock, () => getEndpointSecret(caller, found.id));
    const { status } = await again(caller, clock, () =>
      change(caller, found.id, pointing(zap, { gen, on }), ACTIONS.pointEndpoint),
    );
    if (status !== 404) return { id: found.id, secret, gen, on };
  }
  // Deleted or made by someone else between the calls, over and over: the person's to retry.
  throw new caller.io.errors.Error(ENDPOINT_RACED, 'EndpointRaced', 409);
};

/** The Zap's endpoint as policy.ts reads it. */
const foundOf = (endpoint: EndpointOut): Found | undefined => {
  const metadata = metadataOf(endpoint);
  return metadata && { id: endpoint.id, metadata, disabled: endpoint.disabled === true };
};

/** A PATCH of the endpoint: Svix's answer, 404 when it is gone; a refusal (422) is the person's to read. */
const change = async (caller: Caller, id: string, what: EndpointChange, action: string) => {
  const changed = await changeEndpoint(caller, id, what, action);
  if (changed.status === 422) raise(caller.io, describeStatus(422, undefined, { action, reader: caller.reader }));
  return changed;
};

/**
 * A Zap turned off (performUnsubscribe): its mark first, then its endpoint parked if this subscription is the one it
 * points at (policy.onUnsubscribe). Should Svix fail the park, the mark lets the next sweep or subscribe make it good.
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
  const uid = scope === undefined ? undefined : zapUidOf(scope);
  const stored = subscription && isEndpointId(subscription.id) ? subscription.id : undefined;
  const id = stored ?? uid;
  if (id === undefined) return { removed: false };
  const marked =
    uid !== undefined && stored !== undefined && subscription?.gen !== undefined
      ? await writeMark(caller, clock, 'off', uid, { id: stored, gen: subscription.gen, at: now })
      : false;
  const parked = await again(caller, clock, async () => {
    // Read again on each try: an edit's new version may have pointed it elsewhere meanwhile.
    const found = await findEndpoint(caller, id);
    const state = found && foundOf(found);
    const decision = onUnsubscribe(found && state && { ...state, url: found.url }, {
      gen: subscription?.gen,
      url: bundle.targetUrl,
    });
    return found && state && decision === 'park' ? park(caller, found, state.metadata, now) : false;
  }).catch((error: unknown) => {
    // Svix failing for longer than a moment: the mark stands for it, and the next operation on this Consumer App
    // parks or removes the endpoint. A refusal (the key revoked, say) is the person's to read.
    if (marked && mayPassAgain(error)) return false;
    throw error;
  });
  await sweep(caller, clock);
  return { removed: parked };
};

/** Parks the endpoint where nothing answers, kept with when: Svix retries what it sends meanwhile until the Zap is on
 * again (or, should Svix refuse that URL, leaves it at the Zap's old hook, which Zapier answers 410). */
const park = async (caller: Caller, endpoint: EndpointOut, kept: ZapEndpointMetadata, now: number) => {
  const metadata = encodeMetadata({ ...kept, parked: now });
  const description = parkedDescription(endpoint.description ?? endpointDescription(), kept.keep === '1', now);
  const parked = { url: parkedUrlOf(kept.zap), metadata, description };
  const { status } = await changeEndpoint(caller, endpoint.id, parked, ACTIONS.parkEndpoint);
  if (status !== 422) return status < 300;
  return (await changeEndpoint(caller, endpoint.id, { metadata, description }, ACTIONS.parkEndpoint)).status < 300;
};

/** How a parked endpoint reads in Svix's dashboard: since when, and what becomes of it. */
const OFF_SINCE = ' Off since ';
const parkedDescription = (description: string, keep: boolean, now: number): string =>
  `${description.split(OFF_SINCE)[0] ?? description}${OFF_SINCE}${new Date(now).toISOString()}: ${
    keep
      ? 'kept for Run Events Missed While Off until the Zap is on again (safe to delete if the Zap is gone).'
      : `removed ${inWords(SWEEP_PARKED_AFTER_MS)} later, at the next thing the integration does here (safe to delete).`
  }`;

/**
 * Sweeps the Consumer App (policy.onSweep for each Zap endpoint, by its marks), then paces the live ones to share 25
 * a second, until a listing shows every one at its share (Zaps turned on at once each change what the others
 * listed: the last listing of all decides). What it last listed; undefined when Svix could not list them.
 */
export const sweep = async (
  caller: Caller,
  clock: Clock,
  /** A listing the operation has just made, if it has (the connection test's). */
  first?: EndpointOut[],
  /** Tries of each Svix call: a sweep from a delivery makes one, and leaves the rest to the next. */
  tries = TRIES,
): Promise<EndpointOut[] | undefined> => {
  // A listing handed in was begun by the operation, at the latest when it called this.
  const start = caller.deadline.endsAt - requestSettings.operationBudgetMs;
  for (let round = 0; round < SWEEP_ROUNDS; round += 1) {
    // Tried again after a failure of a moment: an unchecked pace may stay over 25 until the next change.
    const listedAt = clock.now();
    const listed =
      round === 0 && first
        ? first
        : await again(caller, clock, () => listEndpoints(caller), tries).catch(() => undefined);
    if (!listed) {
      caller.io.log("Svix did not list this Consumer App's endpoints: the next operation here sweeps and paces them.");
      return undefined;
    }
    const { endpoints: changed, unfinished } = await sweepListed(
      caller,
      clock,
      { listed, listedAt: round === 0 && first ? start : listedAt },
      tries,
    );
    const live = changed.filter((endpoint) => {
      const metadata = isOneZapEndpoint(endpoint) ? metadataOf(endpoint) : undefined;
      return metadata !== undefined && metadata.parked === undefined && endpoint.disabled !== true;
    });
    const { rate, pace } = paceOf(live);
    // Done once a listing needs nothing more: a change Svix failed is tried again on a new listing.
    if (
      pace.length === 0 &&
      !unfinished &&
      changed.length === listed.length &&
      changed.every((each, i) => each === listed[i])
    )
      return changed;
    for (const id of pace)
      await again(caller, clock, () => paceEndpoint(caller, id, rate), tries).catch(() => undefined);
  }
  caller.io.log('The Zaps of this Consumer App changed while they were being paced: the next change paces them.');
  return undefined;
};
/** A sweep within a few seconds, each Svix call tried once: the operation's answer (a delivery's run) must not wait
 * long for it, and the next such sweep takes up what it left. */
export const sweepBriefly = async (caller: Caller, clock: Clock): Promise<void> => {
  const deadline = new Deadline(Math.min(caller.deadline.endsAt, clock.now() + SWEEP_BUDGET_MS), clock.now);
  await sweep({ ...caller, deadline }, clock, undefined, 1).catch(() => undefined);
};
/** A sweep from a dropdown: at most once every SWEEP_EVERY_MS per process and Consumer App (`last`: when this process
 * last swept each). */
export const sweepNowAndThen = async (caller: Caller, clock: Clock, last: Map<string, number>): Promise<void> => {
  const now = clock.now();
  const app = caller.connection.appId;
  if (now - (last.get(app) ?? -Infinity) < SWEEP_EVERY_MS) return;
  if (last.size >= SWEEPS_REMEMBERED) last.clear();
  last.set(app, now);
  await sweepBriefly(caller, clock);
};
const SWEEP_BUDGET_MS = 5_000;
const SWEEPS_REMEMBERED = 1_000;
/** Listings a sweep makes at most: one, and one after each round of changes. */
const SWEEP_ROUNDS = 4;

/** Carries out policy.onSweep on a listing: the endpoints as they are after it (those deleted left out). */
const sweepListed = async (
  caller: Caller,
  clock: Clock,
  { listed, listedAt }: { listed: EndpointOut[]; listedAt: number },
  tries: number,
): Promise<{ endpoints: EndpointOut[]; unfinished: boolean }> => {
  const now = clock.now();
  const zaps = listed.map((endpoint) => (isOneZapEndpoint(endpoint) ? foundOf(endpoint) : undefined));
  const marks = await Promise.all(
    listed.map((endpoint, index) =>
      zaps[index] && endpoint.uid ? readMarks(caller, clock, endpoint.uid) : Promise.resolve<Marks>({}),
    ),
  );
  // Whether a change Svix failed (tried again, on a new listing).
  let unfinished = false;
  const tried = async (run: () => Promise<unknown>): Promise<boolean> => {
    try {
      await again(caller, clock, run, tries);
      return true;
    } catch {
      unfinished = true;
      return false;
    }
  };
  const result: EndpointOut[] = [];
  for (const [index, endpoint] of listed.entries()) {
    const found = zaps[index];
    const decision: OnSweep = found ? onSweep(found, marks[index] ?? {}, listedAt) : { do: 'leave' };
    if (!found || decision.do === 'leave') {
      result.push(endpoint);
    } else if (decision.do === 'delete') {
      if (!(await tried(() => deleteEndpoint(caller, endpoint.id)))) result.push(endpoint);
    } else if (decision.do === 'park') {
      // Its unsubscribe's mark says when the Zap was turned off; Svix failed the park then.
      const since = marks[index]?.off?.at ?? now;
      const parked = await tried(() => park(caller, endpoint, found.metadata, since));
      result.push(parked ? { ...endpoint, metadata: encodeMetadata({ ...found.metadata, parked: since }) } : endpoint);
    } else if (decision.do === 'point') {
      const { parked: _, ...live } = found.metadata;
      const metadata = encodeMetadata({ ...live, gen: decision.gen });
      const description = (endpoint.description ?? endpointDescription()).split(OFF_SINCE)[0] ?? '';
      const to = { url: decision.url, disabled: false, metadata, description };
      const pointed = await tried(() => changeEndpoint(caller, endpoint.id, to, ACTIONS.pointEndpoint));
      if (pointed) caller.io.log("An edit's two calls crossed: this Zap's endpoint points at Zapier again.");
      result.push(pointed ? { ...endpoint, url: decision.url, metadata, disabled: false } : endpoint);
    }
  }
  return { endpoints: result, unfinished };
};

/** The marks of a Zap's endpoint in z.cache (none where it fails or holds none). */
const readMarks = async (caller: Caller, clock: Clock, uid: string): Promise<Marks> => {
  const { cache } = withinDeadline(clock, caller.io, caller.deadline.endsAt);
  const read = async <A>(kind: 'on' | 'off', codec: t.Decoder<unknown, A>): Promise<A | undefined> => {
    // Asked twice where the first read finds none: z.cache answers a throttled read as it answers an absent key, and
    // a mark missed may leave live what a Zap's off should not (or point back what an edit's crossing calls left).
    const key = markKey(caller, kind, uid);
    const once = async () => {
      const decoded = codec.decode(await cache.get(key).catch(() => undefined));
      return isRight(decoded) ? decoded.right : undefined;
    };
    return (await once()) ?? once();
  };
  const [on, off] = await Promise.all([read('on', OnMark), read('off', OffMark)]);
  return { on, off };
};
/** Writes a mark, twice where z.cache does not say it stored it the first time; whether it said so. */
const writeMark = async (caller: Caller, clock: Clock, kind: 'on' | 'off', uid: string, value: OnMark | OffMark) => {
  const { cache } = withinDeadline(clock, caller.io, caller.deadline.endsAt);
  const ttl = Math.round(ZAP_MARKS_KEPT_MS / 1_000);
  const write = () =>
    cache.set(markKey(caller, kind, uid), value, ttl, false).then(
      (stored) => stored === true,
      () => false,
    );
  return (await write()) || write();
};
const markKey = (caller: Caller, kind: 'on' | 'off', uid: string) => `zap-${kind}:${caller.connection.appId}:${uid}`;

/** Runs `attempt` again after a failure of a moment (up to 3 tries, 300 ms and 600 ms apart) while the operation has
 * time: a Zap turned on or off is a step the person sees fail, and an endpoint left pointing at Zapier is one no
 * later operation knows to park unless its mark was kept. */
const again = async <T>(caller: Caller, clock: Clock, attempt: () => Promise<T>, most = TRIES): Promise<T> => {
  for (let tries = 1; ; tries += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (!mayPassAgain(error) || tries >= most || caller.deadline.remainingMs() < 2 * PAUSE_MS * tries) throw error;
      await clock.sleep(PAUSE_MS * tries).done;
    }
  }
};
const TRIES = 3;
const PAUSE_MS = 300;
/** Whether a failed Svix call may pass if made again: Svix unavailable, unreachable or throttling; never a refusal. */
const mayPassAgain = (error: unknown): boolean => {
  if (!(error instanceof Error)) return false;
  if (error.name === 'ThrottledError') return true;
  if (error.name !== 'AppError') return false;
  const code: unknown = (() => {
    try {
      return Reflect.get(Object(JSON.parse(error.message)), 'code');
    } catch {
      return undefined;
    }
  })();
  return code === 'SvixUnavailable' || code === 'SvixUnreachable';
};
