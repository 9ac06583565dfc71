import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import type { AuctionStatusChangedItem } from '../fields/auctionStatusChanged';

/** The trigger's optional filters, as the Zap editor stores them in `bundle.inputData`. */
export const FilterInput = t.partial(
  {
    statuses: t.union([t.array(t.unknown), t.string, t.null]),
    auctioneerUuid: t.union([t.string, t.null]),
  },
  'FilterInput',
);

export interface Filters {
  /** Normalised statuses; empty means every status triggers. */
  statuses: ReadonlySet<string>;
  /** Normalised auctioneer UUID; undefined means every auctioneer. */
  auctioneerUuid?: string;
}

/**
 * Case, spaces, dashes and underscores do not matter: "open for bidding",
 * "Open-For-Bidding" and OPEN_FOR_BIDDING are the same status to a person.
 */
export const normaliseStatus = (status: string): string =>
  status
    .trim()
    .replace(/[\s_-]+/gu, '_')
    .toLocaleLowerCase('en');

export const readFilters = (inputData: unknown): Filters => {
  const decoded = FilterInput.decode(inputData);
  const input = isRight(decoded) ? decoded.right : {};
  const raw = input.statuses;
  const listed: unknown[] = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : [];
  const statuses = new Set(
    listed
      .filter((value): value is string => typeof value === 'string')
      .map(normaliseStatus)
      .filter((value) => value !== ''),
  );
  const auctioneer = (input.auctioneerUuid ?? '').trim().toLowerCase();
  return auctioneer === '' ? { statuses } : { statuses, auctioneerUuid: auctioneer };
};

export const passesFilters = (item: AuctionStatusChangedItem, filters: Filters): boolean =>
  (filters.statuses.size === 0 || filters.statuses.has(normaliseStatus(item.status))) &&
  (filters.auctioneerUuid === undefined || filters.auctioneerUuid === item.auctioneerUuid.trim().toLowerCase());
