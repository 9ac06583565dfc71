import type { MessageOut } from '../svix/codecs';
import { EVENT_TYPE_NAME } from '../svix/eventType';
import { eventTimeMs, extraItemKey, toTriggerItem, type AuctionStatusChangedItem } from './auctionStatusChanged';
import { decodePayload } from './payload';

/** The items of the Consumer App's recent messages, mapped as a live delivery is: for Test trigger and dropdowns. */

/** A message of the log without a valid time: Svix's answer was not what it documents. */
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

/** The AUCTION_STATUS_CHANGE events among recent messages, as items, newest first. */
export const recentItems = (messages: readonly MessageOut[]): RecentEvents => {
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
