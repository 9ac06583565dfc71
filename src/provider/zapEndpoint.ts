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
import { endpointUid } from './ids';
import { raise } from './request';

/** The endpoint a Zap adds to the Consumer App when it is turned on. */

export const ENDPOINT_DESCRIPTION =
  'Zapier: Auction Status Changed. Created when a Zap was turned on; removed when it is turned off.';

/** The event type is missing, and this connection's key may not register it. */
export const EVENT_TYPE_NOT_PERMITTED =
  `The ${EVENT_TYPE_NAME} event type is not registered in your Svix account, and this connection's key may not register it (an integration key cannot). ` +
  "Ask whoever set up your Consumer App to add it (in Svix's dashboard, under Event Types, or with this integration's set-up), then turn the Zap on again.";

/**
 * Creates this Zap's endpoint with a signing secret made here, so that the
 * usual subscribe makes one provider call. When the event type is missing it
 * registers it and tries once more; when Zapier retries a subscribe whose
 * answer was lost (the uid already exists), it reuses that endpoint, turned
 * back on and filtered to AUCTION_STATUS_CHANGE, and reads its secret.
 */
export const subscribeEndpoint = async (caller: Caller, targetUrl: string): Promise<{ id: string; secret: string }> => {
  const uid = endpointUid('zapier', targetUrl);
  const secret = newEndpointSecret();
  const wanted = { url: targetUrl, uid, description: ENDPOINT_DESCRIPTION, secret };
  let created = await createEndpoint(caller, wanted);
  if (created.kind === 'refused') {
    // Most likely the event type is not registered: the trigger registers it when its key may.
    const state = await ensureEventType(transportOf(caller), { updateSchema: false });
    if (state === 'not-permitted') throw new caller.z.errors.Error(EVENT_TYPE_NOT_PERMITTED, 'EventTypeMissing', 400);
    if (state === 'created') created = await createEndpoint(caller, wanted);
    if (created.kind === 'refused') {
      return raise(caller.z, describeStatus(422, created.body, { action: CREATE_ENDPOINT, reader: caller.reader }));
    }
  }
  if (created.kind === 'created') return { id: created.endpoint.id, secret };
  const existing = await getEndpoint(caller, uid);
  if (!endpointIsReady(existing, targetUrl)) await restoreEndpoint(caller, existing.id, targetUrl);
  return { id: existing.id, secret: await getEndpointSecret(caller, existing.id) };
};
