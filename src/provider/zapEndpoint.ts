import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import { SubscribeData } from '../models/inbound';
import type { Bundle, ZObject } from 'zapier-platform-core';
import { MESSAGES } from '../messages';
import { probeNx } from './cache';
import { callerOf, ioOf, raise, type Caller } from './request';
import {
  ACTIONS,
  CREATE_ENDPOINT,
  createEndpoint,
  deleteEndpoint,
  endpointIsReady,
  findEndpoint,
  getEndpoint,
  getEndpointSecret,
  newEndpointSecret,
  restoreEndpoint,
  transportOf,
} from './api';
import { EVENT_TYPE_NAME, ensureEventType } from './eventType';
import { describeStatus, invalidFields } from './failures';
import { endpointUid, isEndpointId } from './ids';

/** The endpoint a Zap adds to the Consumer App when it is turned on. */

/**
 * Messages a second Svix sends a Zap's endpoint at most (its `throttleRate`): a burst, such as a sale of
 * hundreds of lots closing at once, then reaches Zapier under what it takes for one hook (about 30 a second,
 * and 10,000 in 5 minutes); past that, Zapier refuses deliveries and Svix retries them hours later.
 */
export const THROTTLE_RATE = 25;

/** What Zapier tells a subscribe of the Zap (`bundle.meta.zap`): its id is documented; a name, where given, is used. */
export const ZapMeta = t.partial({ id: t.union([t.string, t.number]), name: t.string }, 'ZapMeta');
export type ZapMeta = t.TypeOf<typeof ZapMeta>;

/** The endpoint a Zap's subscribe made: the id it stored, or else the uid its address gives (none: neither known). */
export const zapEndpointOf = (subscribeData: unknown, targetUrl: string | undefined): string | undefined => {
  const stored = SubscribeData.decode(subscribeData);
  if (isRight(stored) && isEndpointId(stored.right.id)) return stored.right.id;
  return targetUrl ? endpointUid('zapier', targetUrl) : undefined;
};

/** What Test trigger of a Zap says when Svix disabled the Zap's endpoint. */
export const THIS_ZAP_DISABLED =
  'Turn this Zap off and on again: Svix disabled its endpoint after its deliveries failed for days, so no auction event reaches it. Events sent meanwhile are not sent again by themselves: ask whoever set up your Consumer App to resend any you need.';

/**
 * Test trigger of a Zap that is on: says so when Svix disabled its endpoint, as it does after deliveries failed for
 * days (turning the Zap off and on re-enables it). A Zap not yet on has no endpoint to check.
 */
export const checkZapEndpoint = async (caller: Caller, subscribeData: unknown, targetUrl?: string): Promise<void> => {
  const id = zapEndpointOf(subscribeData, targetUrl);
  const endpoint = id === undefined ? undefined : await findEndpoint(caller, id);
  if (endpoint?.disabled === true) throw new caller.io.errors.Error(THIS_ZAP_DISABLED, 'EndpointDisabled', 400);
};

/** How the endpoint reads in Svix's dashboard: which Zap it serves. */
export const endpointDescription = (zap: ZapMeta = {}): string => {
  const name = (zap.name ?? '')
    .replace(/"/g, "'")
    .replace(/[\p{Cc}\s]+/gu, ' ')
    .trim()
    .slice(0, 80);
  const which = name !== '' ? ` (Zap "${name}")` : zap.id !== undefined ? ` (Zap ${String(zap.id).slice(0, 40)})` : '';
  return `Zapier: Auction Status Changed${which}. Added when the Zap was turned on; removed when it is turned off.`;
};

/** The event type is missing, and this connection's key may not register it. */
export const EVENT_TYPE_NOT_PERMITTED = `Ask whoever set up your Consumer App to register the ${EVENT_TYPE_NAME} event type in Svix, then turn the Zap on again: it is not registered, and this connection's key may not register it.`;

/** The event type is archived (Svix then sends it to no new endpoint), and this connection's key may not un-archive it. */
export const EVENT_TYPE_ARCHIVED = `Ask whoever owns your Svix account to un-archive the ${EVENT_TYPE_NAME} event type in Svix, then turn the Zap on again: it is archived, and this connection's key may not un-archive it.`;

/** Whether a 422 names this field (`eventTypes`, or `eventTypes.0` as some servers give it). */
const names = (refusal: { status: number; body: unknown }, field: string): boolean =>
  refusal.status === 422 && invalidFields(refusal.body).some((name) => name === field || name.startsWith(`${field}.`));

/**
 * Makes AUCTION_STATUS_CHANGE live when Svix refused an endpoint for it: registers it when missing, un-archives it
 * when archived (Svix counts an archived type as missing), where the key may. True when it changed something, so
 * the call is worth making again; a plain error naming who does what when the key may not.
 */
const makeEventTypeLive = async (caller: Caller): Promise<boolean> => {
  const state = await ensureEventType(transportOf(caller), { updateSchema: false });
  if (state === 'not-permitted') throw new caller.io.errors.Error(EVENT_TYPE_NOT_PERMITTED, 'EventTypeMissing', 400);
  if (state === 'archived-not-permitted')
    throw new caller.io.errors.Error(EVENT_TYPE_ARCHIVED, 'EventTypeArchived', 400);
  if (state === 'unarchived') caller.io.log(`Un-archived the ${EVENT_TYPE_NAME} event type to turn this Zap on.`);
  return state === 'created' || state === 'unarchived';
};

/**
 * Creates this Zap's endpoint with a signing secret made here, paced at THROTTLE_RATE, so that the usual
 * subscribe makes one provider call. When Svix refuses it with a 422: one naming throttleRate (no source says
 * any plan answers so, but should one) makes it once more without pacing, and logs that; any other makes sure
 * the event type is live (registered, or un-archived) where the key may, and tries again if that changed it.
 * When Zapier retries a subscribe whose answer was lost, or a Zap is turned off and on while its endpoint
 * stayed (the uid exists), it reuses that endpoint, turned back on (Svix disables one whose deliveries failed
 * for days) and filtered to AUCTION_STATUS_CHANGE, and reads its secret.
 */
export const subscribeEndpoint = async (
  caller: Caller,
  targetUrl: string,
  zap?: ZapMeta,
): Promise<{ id: string; secret: string }> => {
  const uid = endpointUid('zapier', targetUrl);
  const secret = newEndpointSecret();
  const plain = { url: targetUrl, uid, description: endpointDescription(zap), secret };
  let paced = true;
  let eventTypeChecked = false;
  const refused = (refusal: { status: number; body: unknown }, action: string): never =>
    raise(caller.io, describeStatus(refusal.status, refusal.body, { action, reader: caller.reader }));
  // Each remedy is tried once: pacing left out, the event type made live.
  for (;;) {
    const created = await createEndpoint(caller, paced ? { ...plain, throttleRate: THROTTLE_RATE } : plain);
    if (created.kind === 'created') return { id: created.endpoint.id, secret };
    if (created.kind === 'exists') break;
    if (paced && names(created, 'throttleRate')) {
      paced = false;
      caller.io.log(
        `Svix refused this Zap's endpoint with throttleRate ${THROTTLE_RATE} (${created.status}): making it without pacing.`,
      );
      continue;
    }
    if (created.status === 422 && !eventTypeChecked) {
      eventTypeChecked = true;
      if (await makeEventTypeLive(caller)) continue;
    }
    return refused(created, CREATE_ENDPOINT);
  }
  const existing = await getEndpoint(caller, uid);
  if (!endpointIsReady(existing, targetUrl)) {
    let restored = await restoreEndpoint(caller, existing.id, targetUrl);
    if (restored.kind === 'refused' && (await makeEventTypeLive(caller)))
      restored = await restoreEndpoint(caller, existing.id, targetUrl);
    if (restored.kind === 'refused') refused(restored, ACTIONS.restoreEndpoint);
  }
  return { id: existing.id, secret: await getEndpointSecret(caller, existing.id) };
};

/** A Zap turned on (performSubscribe): its endpoint, the time it was checked, and whether z.cache honours `nx`. */
export const subscribeZap = async (z: ZObject, bundle: Bundle, now: number): Promise<SubscribeData> => {
  const caller = callerOf(z, bundle, 'zap-editor');
  if (!bundle.targetUrl) throw new z.errors.Error(MESSAGES.missingTargetUrl, 'MissingTargetUrl', 400);
  const zap = ZapMeta.decode(bundle.meta?.zap);
  const endpoint = await subscribeEndpoint(caller, bundle.targetUrl, isRight(zap) ? zap.right : undefined);
  // Learnt once here, so that deliveries claim a message in one round trip.
  const cacheHonoursNx = await probeNx(ioOf(z));
  return { ...endpoint, checkedAt: now, ...(cacheHonoursNx === undefined ? {} : { cacheHonoursNx }) };
};

/** A Zap turned off (performUnsubscribe): its endpoint deleted, if it has one. */
export const unsubscribeZap = async (z: ZObject, bundle: Bundle): Promise<{ removed: boolean }> => {
  const id = zapEndpointOf(bundle.subscribeData, bundle.targetUrl);
  return { removed: id ? (await deleteEndpoint(callerOf(z, bundle, 'zap-editor'), id)) === 'deleted' : false };
};
