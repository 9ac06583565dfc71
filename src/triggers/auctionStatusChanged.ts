import { createHash } from 'node:crypto';
import { isRight } from 'fp-ts/Either';
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import {
  auctionStatusChangedOutputFields,
  auctionStatusChangedSample,
  toTriggerItem,
  type AuctionStatusChangedItem,
} from '../fields/auctionStatusChanged';
import { createEndpoint, deleteEndpoint, ensureEventType, getEndpointSecret } from '../provider/api';
import { isEndpointId } from '../provider/ids';
import { connectionOf } from '../provider/request';
import { checkEnvelope, signedWith, signingHeaders } from '../provider/signature';
import { decodePayload, parseBody, RawRequest, refuse, SubscribeData } from './delivery';
import { cacheGet, cacheSet } from './cache';
import { recentAuctioneers, recentStatuses } from './choices';
import { firstDelivery } from './dedupe';
import { passesFilters, readFilters } from './filters';
import { recentEvents } from './recentEvents';

export const TRIGGER_KEY = 'auction_status_changed';

/** A secret re-read after a signature mismatch is kept this long, so a flood of forgeries costs one provider call. */
export const REREAD_SECRET_TTL_SECONDS = 10 * 60;

/**
 * A stable endpoint uid for a Zap's target URL: a retried subscribe asks for the
 * same uid, the provider answers 409, and the first endpoint is reused.
 */
export const endpointUid = (targetUrl: string): string =>
  `zapier-${createHash('sha256').update(targetUrl, 'utf8').digest('hex').slice(0, 40)}`;

export const ENDPOINT_DESCRIPTION =
  'Zapier: Auction Status Changed. Created when a Zap was turned on; removed when it is turned off.';

const performSubscribe = async (z: ZObject, bundle: Bundle): Promise<SubscribeData> => {
  const connection = connectionOf(z, bundle);
  const targetUrl = bundle.targetUrl;
  if (!targetUrl) {
    throw new z.errors.Error(
      'Zapier did not provide an address to send auction events to. Turn the Zap on again.',
      'MissingTargetUrl',
      400,
    );
  }
  await ensureEventType(z, connection);
  const endpoint = await createEndpoint(z, connection, {
    url: targetUrl,
    uid: endpointUid(targetUrl),
    description: ENDPOINT_DESCRIPTION,
  });
  const secret = await getEndpointSecret(z, connection, endpoint.id);
  return { id: endpoint.id, secret };
};

const performUnsubscribe = async (z: ZObject, bundle: Bundle): Promise<{ removed: boolean }> => {
  const connection = connectionOf(z, bundle);
  const stored = SubscribeData.decode(bundle.subscribeData);
  // Without a stored id, the uid derived from the target URL still names the endpoint.
  const endpointId =
    isRight(stored) && isEndpointId(stored.right.id)
      ? stored.right.id
      : bundle.targetUrl
        ? endpointUid(bundle.targetUrl)
        : undefined;
  if (endpointId === undefined) return { removed: false };
  const outcome = await deleteEndpoint(z, connection, endpointId);
  return { removed: outcome === 'deleted' };
};

/**
 * The secret to check a mismatched delivery against once more: the endpoint's
 * secret may have been rotated since the Zap was turned on.
 */
const currentSecret = async (z: ZObject, bundle: Bundle, endpointId: string): Promise<string> => {
  const cacheKey = `endpoint-secret:${endpointId}`;
  const cached = await cacheGet(z, cacheKey);
  if (typeof cached === 'string') return cached;
  const secret = await getEndpointSecret(z, connectionOf(z, bundle), endpointId);
  await cacheSet(z, cacheKey, secret, REREAD_SECRET_TTL_SECONDS);
  return secret;
};

const perform = async (z: ZObject, bundle: Bundle): Promise<AuctionStatusChangedItem[]> => {
  const stored = SubscribeData.decode(bundle.subscribeData);
  if (!isRight(stored)) {
    throw new z.errors.Error(
      "This Zap's subscription is missing its signing secret, so deliveries cannot be checked. Turn the Zap off and on again.",
      'MissingSubscription',
      400,
    );
  }
  const subscription = stored.right;
  const raw = RawRequest.decode(bundle.rawRequest);
  if (!isRight(raw)) {
    throw new z.errors.Error(
      'The delivery reached Zapier without a body, so the Zap did not run.',
      'EmptyDelivery',
      400,
    );
  }
  const headers = signingHeaders(raw.right.headers ?? {});
  const body = raw.right.content;

  // 1. Verify: nothing unsigned, stale or forged reaches the Zap.
  const envelope = checkEnvelope({ ...headers, body }, Math.floor(Date.now() / 1000));
  if (!envelope.ok) return refuse(z, envelope.refusal);
  const { id: messageId, timestamp, signature } = envelope;
  if (!signedWith(subscription.secret, messageId, timestamp, signature, body)) {
    const latest = await currentSecret(z, bundle, subscription.id);
    if (latest === subscription.secret || !signedWith(latest, messageId, timestamp, signature, body)) {
      return refuse(z, 'no-valid-signature');
    }
  }

  // 2. Decode the payload at the edge.
  const parsed = parseBody(body);
  if (!parsed.ok) throw new z.errors.Error(parsed.message, 'InvalidPayload', 400);
  const payload = decodePayload(parsed.body);
  if (!payload.ok) throw new z.errors.Error(payload.message, 'InvalidPayload', 400);

  // 3. Map, then filter: a delivery this Zap does not want costs no cache round trip.
  const item = toTriggerItem(payload.payload, { messageId, sentAtMs: envelope.seconds * 1000 });
  if (!passesFilters(item, readFilters(bundle.inputData))) return [];

  // 4. Run each message once per Zap, however often it is delivered.
  return (await firstDelivery(z, subscription.id, messageId)) ? [item] : [];
};

const performList = async (z: ZObject, bundle: Bundle): Promise<AuctionStatusChangedItem[]> => {
  const { items, firstProblem } = await recentEvents(z, bundle);
  if (items.length === 0 && firstProblem !== undefined) {
    throw new z.errors.Error(firstProblem, 'InvalidPayload', 400);
  }
  if (items.length === 0) return [auctionStatusChangedSample];
  const filters = readFilters(bundle.inputData);
  return items.filter((item) => passesFilters(item, filters));
};

/** The trigger's functions, typed, for tests and the sandbox's hook runner. */
export const auctionStatusChangedOperations = { performSubscribe, performUnsubscribe, perform, performList };

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
        label: 'Only These Statuses',
        list: true,
        required: false,
        dynamic: `${recentStatuses.key}.id.name`,
        helpText:
          'Run the Zap only for these statuses. Pick from the statuses your auctions have had recently, or type one that has not happened yet (capitals, spaces and underscores do not matter). Leave empty to run it for every status.',
      },
      {
        key: 'auctioneerUuid',
        label: 'Only This Auctioneer',
        required: false,
        dynamic: `${recentAuctioneers.key}.id.name`,
        helpText:
          "Run the Zap only for this auctioneer's auctions. Pick from the auctioneers seen in recent events, or paste an auctioneer's UUID. Leave empty to run it for every auctioneer.",
      },
    ],
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: auctionStatusChangedSample,
    outputFields: auctionStatusChangedOutputFields,
  },
});
