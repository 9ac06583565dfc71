import { normaliseStatus } from './filters';
import { shortTime, statusLabel, type AuctionStatusChangedItem } from './auctionStatusChanged';

/**
 * The dropdowns' entries, from recent events (src/triggers/choices.ts): the statuses and the auctioneers seen,
 * so nobody has to type a status or copy a UUID by hand.
 */

/** One dropdown entry: `id` is the value the Zap stores, `name` what the person reads. */
export interface Choice {
  id: string;
  name: string;
}

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

/**
 * Each auctioneer by name when recent events carry one (with the start of the UUID, as names may repeat), or by
 * UUID, saying that no name came with it: the field's help says who can tell whose it is (inputFields.ts).
 */
export const auctioneerChoices = (items: readonly AuctionStatusChangedItem[]): Choice[] => {
  const keyOf = (item: AuctionStatusChangedItem) => item.auctioneerUuid.trim().toLowerCase();
  return distinct(items, keyOf).map((item) => {
    const name = nameOf(items, keyOf(item));
    const last = `last event ${shortTime(item.occurredAt)}`;
    return {
      id: item.auctioneerUuid,
      name: name
        ? `${name} (${item.auctioneerUuid.slice(0, 8)}…, ${last})`
        : `${item.auctioneerUuid} (no name sent, ${last})`,
    };
  });
};
