import type { Bundle, ZObject } from 'zapier-platform-core';
import { recentItems, type RecentEvents } from '../fields/recentItems';
import { listRecentMessages } from '../svix/api';
import { callerOf } from '../svix/client';

/** How many recent messages are read from Svix's log (its maximum page is 250). */
export const RECENT_LIMIT = 50;

/** The Consumer App's recent AUCTION_STATUS_CHANGE events from Svix's message log: what "Test trigger"
 * shows and what the dropdowns offer. */
export const recentEvents = async (z: ZObject, bundle: Bundle, limit = RECENT_LIMIT): Promise<RecentEvents> =>
  recentItems(await listRecentMessages(callerOf(z, bundle, 'zap-editor'), limit));
