import type { Bundle, ZObject } from 'zapier-platform-core';
import {
  eventTimeMs,
  extraItemKey,
  toTriggerItem,
  type AuctionStatusChangedItem,
} from '../fields/auctionStatusChanged';
import { listRecentMessages } from '../provider/api';
import { EVENT_TYPE_NAME } from '../provider/eventType';
import { callerOf } from '../provider/request';
import { decodePayload } from '../fields/payload';

/** How many recent messages are read from the provider's log (its maximum page is 250). */
export const RECENT_LIMIT = 50;

/** A message of the log without a valid time: the provider's answer was not what it documents. */
export const NO_TIME =
  "If this keeps happening, show this to whoever set up your Consumer App in Svix: a recent auction event in Svix's log has no valid time, so it could not be shown.";

export interface RecentEvents {
  /** Decoded and mapped exactly as a live delivery is, newest first. */
  items: AuctionStatusChangedItem[];
  /** The labels of the extra fields these events carried, by their key in the items. */
  extraLabels: Record<string, string>;
  /** The first reason a message was skipped, when one was. */
  firstProblem?: string;
}

/**
 * The Consumer App's recent AUCTION_STATUS_CHANGE events from the provider's
 * message log: what "Test trigger" shows and what the dropdowns offer.
 */
export const recentEvents = async (z: ZObject, bundle: Bundle, limit = RECENT_LIMIT): Promise<RecentEvents> => {
  const messages = await listRecentMessages(callerOf(z, bundle, 'zap-editor'), limit);
  const items: AuctionStatusChangedItem[] = [];
  const extraLabels = new Map<string, string>();
  let firstProblem: string | undefined;
  for (const message of messages) {
    if (message.eventType !== EVENT_TYPE_NAME) continue;
    const payload = decodePayload(message.payload);
    const createdAtMs = Date.parse(message.timestamp);
    if (!payload.ok || Number.isNaN(createdAtMs)) {
      firstProblem ??= payload.ok ? NO_TIME : payload.message;
      continue;
    }
    const occurredAtMs = eventTimeMs(message.id, createdAtMs);
    items.push(toTriggerItem(payload.payload, { messageId: message.id, occurredAtMs }, payload.extras.values));
    for (const [key, label] of Object.entries(payload.extras.labels)) {
      const itemKey = extraItemKey(key);
      if (!extraLabels.has(itemKey)) extraLabels.set(itemKey, itemKey === key ? label : `Payload ${label}`);
    }
  }
  const found = { items, extraLabels: Object.fromEntries(extraLabels) };
  return firstProblem === undefined ? found : { ...found, firstProblem };
};
