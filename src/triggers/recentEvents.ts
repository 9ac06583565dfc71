import type { Bundle, ZObject } from 'zapier-platform-core';
import { toTriggerItem, type AuctionStatusChangedItem } from '../fields/auctionStatusChanged';
import { listRecentMessages } from '../provider/api';
import { EVENT_TYPE_NAME } from '../provider/eventType';
import { callerOf } from '../provider/request';
import { decodePayload } from './delivery';

/** How many recent messages are read from the provider's log (its maximum page is 250). */
export const RECENT_LIMIT = 50;

export interface RecentEvents {
  /** Decoded and mapped exactly as a live delivery is, newest first. */
  items: AuctionStatusChangedItem[];
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
  let firstProblem: string | undefined;
  for (const message of messages) {
    if (message.eventType !== EVENT_TYPE_NAME) continue;
    const payload = decodePayload(message.payload);
    const sentAtMs = Date.parse(message.timestamp);
    if (!payload.ok || Number.isNaN(sentAtMs)) {
      firstProblem ??= payload.ok ? 'A recent auction event has no valid time.' : payload.message;
      continue;
    }
    items.push(toTriggerItem(payload.payload, { messageId: message.id, sentAtMs }));
  }
  return firstProblem === undefined ? { items } : { items, firstProblem };
};
