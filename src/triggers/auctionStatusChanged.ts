import { isRight } from 'fp-ts/Either';
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import { clock } from '../clock';
import {
  auctionStatusChangedOutputFields,
  auctionStatusChangedSample,
  eventTimeMs,
  toTriggerItem,
  type AuctionStatusChangedItem,
} from '../fields/auctionStatusChanged';
import { deleteEndpoint } from '../provider/api';
import { subscribeEndpoint, ZapMeta } from '../provider/zapEndpoint';
import type { OutputField } from '../fields/zapFields';
import { connectionScope } from '../provider/connection';
import { endpointUid, isEndpointId } from '../provider/ids';
import { callerOf, requestSettings, type Caller } from '../provider/request';
import { checkEnvelope, signatureCount, signedWith, signingHeaders } from '../provider/signature';
import { decodePayload, parseBody, RawRequest, refuse, SubscribeData, type PayloadResult } from './delivery';
import { recentAuctioneers, recentStatuses } from './choices';
import { claimMessage, isTooOldToRemember, probeNx, SIGNING_WINDOW } from './claim';
import { verify, type Verdict } from './verify';
import { FILTER_LABELS, passesFilters, readFilters, unreadableFilter, type Filters } from './filters';
import { isOutdated, recordNewest } from './outdated';
import { recentEvents } from './recentEvents';

export const TRIGGER_KEY = 'auction_status_changed';

/** Recent events read to label extra fields: a few are enough to see what the service sends. */
const EXTRA_FIELDS_LIMIT = 25;

/** What a person reads in Zapier when turning the Zap on or a delivery cannot go ahead (see also delivery.ts). */
export const MESSAGES = {
  missingTargetUrl: 'Turn the Zap on again: Zapier gave no address to send auction events to.',
  missingSubscription:
    "Turn the Zap off and on again: its subscription lacks the endpoint's signing secret, so deliveries cannot be checked.",
};

const performSubscribe = async (z: ZObject, bundle: Bundle): Promise<SubscribeData> => {
  const caller = callerOf(z, bundle, 'zap-editor');
  const targetUrl = bundle.targetUrl;
  if (!targetUrl) {
    throw new z.errors.Error(MESSAGES.missingTargetUrl, 'MissingTargetUrl', 400);
  }
  const zap = ZapMeta.decode(bundle.meta?.zap);
  const endpoint = await subscribeEndpoint(caller, targetUrl, isRight(zap) ? zap.right : undefined);
  const checkedAt = Date.now();
  // Learnt once here, so that deliveries know how to claim a message in one round trip.
  const cacheHonoursNx = await probeNx(z);
  return { ...endpoint, checkedAt, ...(cacheHonoursNx === undefined ? {} : { cacheHonoursNx }) };
};

const performUnsubscribe = async (z: ZObject, bundle: Bundle): Promise<{ removed: boolean }> => {
  const caller = callerOf(z, bundle, 'zap-editor');
  const stored = SubscribeData.decode(bundle.subscribeData);
  // Without a stored id, the uid derived from the target URL still names the endpoint.
  const endpointId =
    isRight(stored) && isEndpointId(stored.right.id)
      ? stored.right.id
      : bundle.targetUrl
        ? endpointUid('zapier', bundle.targetUrl)
        : undefined;
  if (endpointId === undefined) return { removed: false };
  const outcome = await deleteEndpoint(caller, endpointId);
  return { removed: outcome === 'deleted' };
};

/**
 * Verify, then decode at the edge: the delivered body when the current secret signed it, else Svix's copy.
 * The usual delivery is decided at once, with no promise of its own (the platform tracks every one).
 */
const checkedEvent = (z: ZObject, bundle: Bundle, subscription: SubscribeData, startedAt: number) => {
  const raw = RawRequest.decode(bundle.rawRequest);
  if (!isRight(raw)) return refuse(z, 'no-body');
  const body = raw.right.content;
  const envelope = checkEnvelope(signingHeaders(raw.right.headers ?? {}), Math.floor(startedAt / 1000), SIGNING_WINDOW);
  if (!envelope.ok) return refuse(z, envelope.refusal);
  const { id: messageId, timestamp, signature } = envelope;
  const occurredAtMs = eventTimeMs(messageId, envelope.seconds * 1000);
  if (isTooOldToRemember(occurredAtMs, clock.now())) return refuse(z, 'event-too-old');
  const deadline = startedAt + requestSettings.operationBudgetMs;
  const signedBy = (secret: string) => signedWith(secret, messageId, timestamp, signature, body);
  const signedAt = envelope.seconds * 1000;
  const signatures = signatureCount(signature);
  const delivery = { id: messageId, signedAt, signatures, signedWith: signedBy, arrivedAt: startedAt };
  const endpoint = { ...subscription, connection: connectionScope(bundle.authData) };
  // One caller, and so one deadline (counted from the start, waits included), for every provider call.
  let caller: Caller | undefined;
  const callerFor = () => (caller ??= callerOf(z, bundle, 'zap-run', startedAt));
  const decoded = (verdict: Verdict) => {
    const parsed = verdict.kind === 'signed' ? parseBody(body) : { ok: true as const, body: verdict.event };
    if (!parsed.ok) throw new z.errors.Error(parsed.message, 'InvalidPayload', 400);
    const payload = decodePayload(parsed.body);
    if (!payload.ok) throw new z.errors.Error(payload.message, 'InvalidPayload', 400);
    return runOnce(z, bundle, subscription, { ...payload, messageId, occurredAtMs, deadline });
  };
  const checked = verify(z, callerFor, endpoint, { ...delivery, deadline, looked: false });
  return checked instanceof Promise ? checked.then(decoded) : decoded(checked);
};

type Items = AuctionStatusChangedItem[] | Promise<AuctionStatusChangedItem[]>;
// Not async: the usual delivery makes no promise beyond its claim's (the platform tracks each one); core
// runs it inside a promise, so a throw reaches Zapier as a rejection does.
const perform = (z: ZObject, bundle: Bundle): Items => {
  const startedAt = clock.now();
  if (bundle.rawRequest === undefined || bundle.rawRequest === null) {
    // A live Zap's run always carries a delivery: without one, nothing is checked, so nothing runs.
    if (isSubscribed(bundle)) return refuse(z, 'no-delivery');
    // The CLI's bare `invoke trigger` (no subscription, no delivery): answer as "Test trigger" does.
    return performList(z, bundle);
  }
  const stored = SubscribeData.decode(bundle.subscribeData);
  if (!isRight(stored)) throw new z.errors.Error(MESSAGES.missingSubscription, 'MissingSubscription', 400);
  return checkedEvent(z, bundle, stored.right, startedAt);
};

type CheckedEvent = Extract<PayloadResult, { ok: true }> & {
  messageId: string;
  occurredAtMs: number;
  deadline: number;
};
/** The Zap's filters fail closed. Map, then filter: a delivery this Zap does not want costs no round trip. */
const runOnce = (z: ZObject, bundle: Bundle, zap: SubscribeData, event: CheckedEvent): Items => {
  const filters = filtersOf(z, bundle);
  const item = toTriggerItem(event.payload, event, event.extras.values);
  if (!passesFilters(item, filters)) return [];
  if (filters.skipOutdated) return runIfNewest(z, zap, item, event);
  // Run each message once per Zap, however often it is delivered.
  return claimMessage(z, zap.id, item.id, zap.cacheHonoursNx, event.deadline).then((claimed) =>
    claimed ? [item] : [],
  );
};

const runIfNewest = async (z: ZObject, zap: SubscribeData, item: AuctionStatusChangedItem, event: CheckedEvent) => {
  if (await isOutdated(z, zap.id, item.auctionUuid, event.occurredAtMs)) return [];
  if (!(await claimMessage(z, zap.id, item.id, zap.cacheHonoursNx, event.deadline))) return [];
  await recordNewest(z, zap.id, item.auctionUuid, event.occurredAtMs);
  return [item];
};

/** Whether the bundle is a turned-on Zap's: it carries what its subscribe returned, or the address it listens on. */
const isSubscribed = (bundle: Bundle): boolean =>
  (bundle.subscribeData !== undefined && bundle.subscribeData !== null) || Boolean(bundle.targetUrl);

/** The trigger's filters, or an error naming the field that cannot be read. */
const filtersOf = (z: ZObject, bundle: Bundle): Filters => {
  const read = readFilters(bundle.inputData);
  if (!read.ok) throw new z.errors.Error(unreadableFilter(read.field), 'InvalidFilter', 400);
  return read.filters;
};

const performList = async (z: ZObject, bundle: Bundle): Promise<AuctionStatusChangedItem[]> => {
  const filters = filtersOf(z, bundle);
  const { items, firstProblem } = await recentEvents(z, bundle);
  if (items.length === 0 && firstProblem !== undefined) {
    throw new z.errors.Error(firstProblem, 'InvalidPayload', 400);
  }
  if (items.length === 0) return [auctionStatusChangedSample];
  return items.filter((item) => passesFilters(item, filters));
};

/**
 * Labels for the extra fields the auction service has sent lately (beyond the
 * published three), so the Zap editor offers them by name before a sample
 * has them. Read from the recent message log; the editor is never held up by
 * it: anything that goes wrong gives no extra fields.
 */
const extraOutputFields = async (z: ZObject, bundle: Bundle): Promise<OutputField[]> => {
  try {
    const { items, extraLabels } = await recentEvents(z, bundle, EXTRA_FIELDS_LIMIT);
    return Object.entries(extraLabels).map(([key, label]) => {
      const value = items.find((item) => item[key] !== undefined && item[key] !== null)?.[key];
      const type = typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'string';
      return Array.isArray(value) ? { key, label, type, list: true } : { key, label, type };
    });
  } catch {
    return [];
  }
};

/** The trigger's functions, typed, for tests and the sandbox's hook runner. */
export const auctionStatusChangedOperations = {
  performSubscribe,
  performUnsubscribe,
  perform,
  performList,
  extraOutputFields,
};

export const auctionStatusChanged = defineTrigger({
  key: TRIGGER_KEY,
  noun: 'Auction',
  display: {
    label: 'Auction Status Changed',
    description: 'Triggers when an auction is created or its status changes.',
  },
  operation: {
    type: 'hook',
    inputFields: [
      {
        key: 'statuses',
        label: FILTER_LABELS.statuses,
        list: true,
        required: false,
        dynamic: `${recentStatuses.key}.id.name`,
        helpText:
          'Run the Zap only for these statuses. Pick from the statuses your auctions have had recently, or type one that has not happened yet (capitals, spaces and underscores do not matter). Leave empty to run it for every status.',
      },
      {
        key: 'auctioneerUuid',
        label: FILTER_LABELS.auctioneerUuid,
        required: false,
        dynamic: `${recentAuctioneers.key}.id.name`,
        helpText:
          "Run the Zap only for this auctioneer's auctions. Pick from the auctioneers seen in recent events, or paste an auctioneer's UUID. Leave empty to run it for every auctioneer.",
      },
      {
        key: 'skipOutdated',
        label: FILTER_LABELS.skipOutdated,
        type: 'boolean',
        required: false,
        default: 'false',
        helpText:
          "For Zaps that keep another system in sync: events can arrive late and out of order, so an auction's earlier status could arrive after a newer one and undo it. Choose **Yes** to skip an event that happened before the newest one this Zap has already run for the same auction. Leave it at **No** to run the Zap for every event, in the order they arrive.",
      },
    ],
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: auctionStatusChangedSample,
    // Zapier's schema takes no help text for output fields: it is for the guide (docs/guide.md).
    outputFields: [...auctionStatusChangedOutputFields.map(({ helpText, ...field }) => field), extraOutputFields],
  },
});
