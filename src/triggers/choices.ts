import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import { shortTime, statusLabel, type AuctionStatusChangedItem } from '../fields/auctionStatusChanged';
import { normaliseStatus } from './filters';
import { recentEvents } from './recentEvents';

/**
 * Hidden triggers that feed the Auction Status Changed trigger's dropdowns:
 * the statuses and the auctioneers seen in the Consumer App's recent events,
 * so nobody has to type a status or copy a UUID by hand. Zapier still lets a
 * person type a value the list does not hold (a status not seen yet).
 */

/** One dropdown entry: `id` is the value the Zap stores, `name` what the person reads. */
export interface Choice {
  id: string;
  name: string;
}

/** Enough events to find every status and auctioneer in use, within one provider page. */
const CHOICES_LIMIT = 250;

/** The first (newest) item for each key, in the order they came. */
const distinct = (items: readonly AuctionStatusChangedItem[], keyOf: (item: AuctionStatusChangedItem) => string) => {
  const seen = new Map<string, AuctionStatusChangedItem>();
  for (const item of items) if (!seen.has(keyOf(item))) seen.set(keyOf(item), item);
  return [...seen.values()];
};

export const statusChoices = (items: readonly AuctionStatusChangedItem[]): Choice[] =>
  distinct(items, (item) => normaliseStatus(item.status)).map((item) => ({
    id: item.status,
    name: `${statusLabel(item.status)} (${item.status})`,
  }));

/**
 * Where an event may carry the auctioneer's name: the published
 * AuctioneerApiModel under `auctioneer` (flattened to `auctioneer__name`), or
 * a plain `auctioneerName`. The published event itself carries only the UUID.
 */
const NAME_FIELDS = ['auctioneer__name', 'auctioneerName'] as const;

/** The auctioneer's name as the newest event that carries one gives it. */
const nameOf = (items: readonly AuctionStatusChangedItem[], auctioneer: string): string | undefined => {
  for (const item of items) {
    if (item.auctioneerUuid.trim().toLowerCase() !== auctioneer) continue;
    for (const field of NAME_FIELDS) {
      const name = item[field];
      if (typeof name === 'string' && name.trim() !== '') return name.trim();
    }
  }
  return undefined;
};

/** Each auctioneer by name when recent events carry one (with the start of the UUID, as names may repeat), or by UUID. */
export const auctioneerChoices = (items: readonly AuctionStatusChangedItem[]): Choice[] => {
  const keyOf = (item: AuctionStatusChangedItem) => item.auctioneerUuid.trim().toLowerCase();
  return distinct(items, keyOf).map((item) => {
    const name = nameOf(items, keyOf(item));
    const last = `last event ${shortTime(item.occurredAt)}`;
    return {
      id: item.auctioneerUuid,
      name: name ? `${name} (${item.auctioneerUuid.slice(0, 8)}…, ${last})` : `${item.auctioneerUuid} (${last})`,
    };
  });
};

const listStatuses = async (z: ZObject, bundle: Bundle): Promise<Choice[]> =>
  statusChoices((await recentEvents(z, bundle, CHOICES_LIMIT)).items);

const listAuctioneers = async (z: ZObject, bundle: Bundle): Promise<Choice[]> =>
  auctioneerChoices((await recentEvents(z, bundle, CHOICES_LIMIT)).items);

export const choiceOperations = { listStatuses, listAuctioneers };

const choiceOutputFields = [
  { key: 'id', label: 'Value' },
  { key: 'name', label: 'Name' },
];

export const recentStatuses = defineTrigger({
  key: 'recent_statuses',
  noun: 'Status',
  display: {
    label: 'Recent Auction Statuses',
    description: 'Triggers when a status first appears among recent auction events (feeds a dropdown).',
    hidden: true,
  },
  operation: {
    perform: listStatuses,
    sample: { id: 'OPEN_FOR_BIDDING', name: 'Open For Bidding (OPEN_FOR_BIDDING)' },
    outputFields: choiceOutputFields,
  },
});

export const recentAuctioneers = defineTrigger({
  key: 'recent_auctioneers',
  noun: 'Auctioneer',
  display: {
    label: 'Recent Auctioneers',
    description: 'Triggers when an auctioneer first appears among recent auction events (feeds a dropdown).',
    hidden: true,
  },
  operation: {
    perform: listAuctioneers,
    sample: {
      id: '0e7c2f44-3b8e-4f6d-a1d2-9c5b8e7a4f20',
      name: '0e7c2f44-3b8e-4f6d-a1d2-9c5b8e7a4f20 (last event 22 Nov 2026, 09:30 UTC)',
    },
    outputFields: choiceOutputFields,
  },
});
