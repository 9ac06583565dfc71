import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import { SubscribeData } from '../models/inbound';
import { type Caller } from '../svix/client';
import { raise } from '../zapier/io';
import { CREATE_ENDPOINT, createEndpoint, findEndpoint, newEndpointSecret, transportOf } from '../svix/api';
import { EVENT_TYPE_NAME, ensureEventType } from '../svix/eventType';
import { describeStatus, invalidFields } from '../svix/failures';
import { isEndpointId } from '../svix/ids';
import { inWords, PACE_PER_SECOND, SWEEP_PARKED_AFTER_MS } from '../limits';

/** The endpoint a Zap adds to the Consumer App when it is turned on. */

/**
 * Messages a second Svix sends all of this integration's endpoints in a Consumer App together at most (their
 * `throttleRate`s add up to it, zap/life.ts): a burst, such as a sale of hundreds of lots closing at once, then
 * reaches Zapier under what it takes for one hook (about 30 a second) and for one person (10,000 in 5 minutes);
 * past that, Zapier refuses deliveries and Svix retries them hours later.
 */
export const THROTTLE_RATE = PACE_PER_SECOND;

/** What Zapier tells a subscribe of the Zap (`bundle.meta.zap`): its id is documented; a name, where given, is used. */
export const ZapMeta = t.partial({ id: t.union([t.string, t.number]), name: t.string }, 'ZapMeta');
export type ZapMeta = t.TypeOf<typeof ZapMeta>;

/** The endpoint a Zap's subscribe made, by the id it stored (none: the Zap is not on). */
export const zapEndpointOf = (subscribeData: unknown): string | undefined => {
  const stored = SubscribeData.decode(subscribeData);
  return isRight(stored) && isEndpointId(stored.right.id) ? stored.right.id : undefined;
};

/** What Test trigger of a Zap says when Svix disabled the Zap's endpoint. */
export const THIS_ZAP_DISABLED =
  'Turn this Zap off and on again so that auction events reach it: Svix disabled its link after its deliveries failed for days. Events sent while it was disabled do not run; the auction service can send them again.';

/**
 * Test trigger of a Zap that is on: says so when Svix disabled its endpoint, as it does after deliveries failed for
 * days (turning the Zap off and on enables it again). A Zap not yet on has no endpoint to check.
 */
export const checkZapEndpoint = async (caller: Caller, subscribeData: unknown): Promise<void> => {
  const id = zapEndpointOf(subscribeData);
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
  return `Zapier: Auction Status Changed${which}. Added when the Zap was turned on. While the Zap is off, it points at parked.invalid and fails on purpose; removed ${inWords(SWEEP_PARKED_AFTER_MS)} after, unless the Zap runs events missed while off.`;
};

/** The event type is missing, and this connection's key may not register it. */
export const EVENT_TYPE_NOT_PERMITTED = `Ask whoever set up your Consumer App to register the ${EVENT_TYPE_NAME} event type in Svix, then turn the Zap on again: it is not registered, and this connection's key may not register it.`;

/** The event type is archived (Svix then sends it to no new endpoint), and this connection's key may not un-archive it. */
export const EVENT_TYPE_ARCHIVED = `Ask whoever set up your Consumer App to un-archive the ${EVENT_TYPE_NAME} event type in Svix, then turn the Zap on again: it is archived, and this connection's key may not un-archive it.`;

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
 * Creates a Zap's endpoint (zap/policy.ts: one per Zap, its uid from the Zap's scope) with a signing secret made
 * here, paced at `rate` and labelled with its Zap, so that a first subscribe makes one Svix call to make it;
 * `exists` when Svix already has the Zap's endpoint (409). When Svix refuses it with a 422: one naming throttleRate
 * (no source says any plan answers so, but should one) makes it once more without pacing, and logs that; any other
 * makes sure the event type is live (registered, or un-archived) where the key may, and tries again if that changed
 * it.
 */
export const createZapEndpoint = async (
  caller: Caller,
  endpoint: { url: string; uid: string; meta: ZapMeta | undefined; metadata: Record<string, string>; rate: number },
): Promise<{ kind: 'created'; id: string; secret: string; paced: boolean } | { kind: 'exists' }> => {
  const secret = newEndpointSecret();
  const { url, uid, metadata } = endpoint;
  const plain = { url, uid, description: endpointDescription(endpoint.meta), secret, metadata };
  let paced = true;
  let eventTypeChecked = false;
  // Each remedy is tried once: pacing left out, the event type made live.
  for (;;) {
    const created = await createEndpoint(caller, paced ? { ...plain, throttleRate: endpoint.rate } : plain);
    if (created.kind === 'created') return { kind: 'created', id: created.endpoint.id, secret, paced };
    if (created.status === 409) return { kind: 'exists' };
    if (paced && names(created, 'throttleRate')) {
      paced = false;
      caller.io.log(
        `Svix refused this Zap's endpoint with throttleRate ${endpoint.rate} (${created.status}): making it without pacing.`,
      );
      continue;
    }
    if (created.status === 422 && !eventTypeChecked) {
      eventTypeChecked = true;
      if (await makeEventTypeLive(caller)) continue;
    }
    const action = CREATE_ENDPOINT;
    return raise(caller.io, describeStatus(created.status, created.body, { action, reader: caller.reader }));
  }
};
