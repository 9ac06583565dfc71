import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import { SubscribeData } from '../models/inbound';
import type { Caller } from './request';
import {
  CREATE_ENDPOINT,
  createEndpoint,
  endpointIsReady,
  getEndpoint,
  getEndpointSecret,
  newEndpointSecret,
  restoreEndpoint,
  transportOf,
} from './api';
import { EVENT_TYPE_NAME, ensureEventType } from './eventType';
import { describeStatus } from './failures';
import { endpointUid, isEndpointId } from './ids';
import { raise } from './request';

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

/**
 * Creates this Zap's endpoint with a signing secret made here, paced at THROTTLE_RATE, so that the usual
 * subscribe makes one provider call. When Svix refuses it: for lack of the event type, it registers it (when its
 * key may) and tries again; for pacing (a plan without endpoint throttling), it tries once without, and logs that.
 * When Zapier retries a subscribe whose answer was lost (the uid already exists), it reuses that endpoint, turned
 * back on and filtered to AUCTION_STATUS_CHANGE, and reads its secret.
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
  // Each remedy is tried once: the event type registered, then pacing left out.
  for (;;) {
    const created = await createEndpoint(caller, paced ? { ...plain, throttleRate: THROTTLE_RATE } : plain);
    if (created.kind === 'created') return { id: created.endpoint.id, secret };
    if (created.kind === 'exists') break;
    if (created.status === 422 && !eventTypeChecked) {
      eventTypeChecked = true;
      const state = await ensureEventType(transportOf(caller), { updateSchema: false });
      if (state === 'not-permitted')
        throw new caller.io.errors.Error(EVENT_TYPE_NOT_PERMITTED, 'EventTypeMissing', 400);
      if (state === 'created') continue;
    }
    if (!paced) {
      return raise(
        caller.io,
        describeStatus(created.status, created.body, { action: CREATE_ENDPOINT, reader: caller.reader }),
      );
    }
    paced = false;
    caller.io.log(
      `Svix refused this Zap's endpoint with throttleRate ${THROTTLE_RATE} (${created.status}): making it without pacing, as on a plan without endpoint throttling.`,
    );
  }
  const existing = await getEndpoint(caller, uid);
  if (!endpointIsReady(existing, targetUrl)) await restoreEndpoint(caller, existing.id, targetUrl);
  return { id: existing.id, secret: await getEndpointSecret(caller, existing.id) };
};
