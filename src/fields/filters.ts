import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import type { AuctionStatusChangedFields } from '../fields/auctionStatusChanged';

/**
 * The trigger's optional input fields, as the Zap editor stores them in
 * `bundle.inputData`. They fail closed: a field that cannot be read stops
 * the run with a message naming it, and never lets the Zap run for every
 * event instead.
 */

/** Each input field's key, and its label as the Zap editor shows it. */
export const FILTER_LABELS = {
  statuses: 'Only These Statuses',
  auctioneerUuid: 'Only This Auctioneer',
  skipOutdated: 'Skip Outdated Events',
  catchUp: 'Run Events Missed While Off',
  showSkipped: 'Show Skipped Events',
} as const;
export type FilterField = keyof typeof FILTER_LABELS;

const Absent = t.union([t.undefined, t.null]);
const Statuses = t.union([Absent, t.string, t.array(t.union([t.string, t.null]))]);
const Auctioneer = t.union([Absent, t.string]);
/** Zapier's boolean forms: a boolean, or text such as "true", "yes", "false" or "no". */
const YesNo = t.union([Absent, t.boolean, t.string]);

const YES = new Set(['true', 'yes', 'y', '1']);
const NO = new Set(['false', 'no', 'n', '0', '']);

export interface Filters {
  /** Normalised statuses; empty means every status triggers. */
  statuses: ReadonlySet<string>;
  /** Normalised auctioneer UUID; undefined means every auctioneer. */
  auctioneerUuid?: string;
  /** Skip an event older than the newest this Zap has run for the same auction. */
  skipOutdated: boolean;
  /** When the Zap is turned on, also run the events sent while it was off (src/zap/life.ts). */
  catchUp: boolean;
  /** Show each event the options skip in the Zap's history, halted with the reason, instead of quietly. */
  showSkipped: boolean;
}

type FilterResult = { ok: true; filters: Filters } | { ok: false; field: FilterField };

/**
 * Case, spaces, dashes and underscores do not matter: "open for bidding",
 * "Open-For-Bidding" and OPEN_FOR_BIDDING are the same status to a person.
 */
export const normaliseStatus = (status: string): string =>
  status
    .trim()
    .replace(/[\s_-]+/gu, '_')
    .toLocaleLowerCase('en');

const field = (inputData: unknown, key: FilterField): unknown =>
  typeof inputData === 'object' && inputData !== null && Object.prototype.hasOwnProperty.call(inputData, key)
    ? Object.getOwnPropertyDescriptor(inputData, key)?.value
    : undefined;

/** A Yes/No option; unset, No (the Zap editor saves each option's default in a new Zap). */
const yesOrNo = (value: unknown): boolean | undefined => {
  const decoded = YesNo.decode(value);
  if (!isRight(decoded)) return undefined;
  const answer = decoded.right;
  if (answer === undefined || answer === null) return false;
  if (typeof answer === 'boolean') return answer;
  const word = answer.trim().toLowerCase();
  return YES.has(word) ? true : NO.has(word) ? false : undefined;
};

export const readFilters = (inputData: unknown): FilterResult => {
  const statuses = Statuses.decode(field(inputData, 'statuses'));
  if (!isRight(statuses)) return { ok: false, field: 'statuses' };
  const auctioneer = Auctioneer.decode(field(inputData, 'auctioneerUuid'));
  if (!isRight(auctioneer)) return { ok: false, field: 'auctioneerUuid' };
  const skipOutdated = yesOrNo(field(inputData, 'skipOutdated'));
  if (skipOutdated === undefined) return { ok: false, field: 'skipOutdated' };
  const catchUp = yesOrNo(field(inputData, 'catchUp'));
  if (catchUp === undefined) return { ok: false, field: 'catchUp' };
  const showSkipped = yesOrNo(field(inputData, 'showSkipped'));
  if (showSkipped === undefined) return { ok: false, field: 'showSkipped' };

  const listed = statuses.right ?? [];
  const chosen = (typeof listed === 'string' ? listed.split(',') : listed)
    .filter((value): value is string => value !== null)
    .map(normaliseStatus)
    .filter((value) => value !== '');
  const auctioneerUuid = (auctioneer.right ?? '').trim().toLowerCase();
  const filters: Filters = { statuses: new Set(chosen), skipOutdated, catchUp, showSkipped };
  return { ok: true, filters: auctioneerUuid === '' ? filters : { ...filters, auctioneerUuid } };
};

/** Which option skips the event, if one does. */
export type Skipped = 'statuses' | 'auctioneerUuid' | 'skipOutdated';
export const skippedBy = (item: AuctionStatusChangedFields, filters: Filters): Skipped | undefined =>
  filters.statuses.size > 0 && !filters.statuses.has(normaliseStatus(item.status))
    ? 'statuses'
    : filters.auctioneerUuid !== undefined && filters.auctioneerUuid !== item.auctioneerUuid.trim().toLowerCase()
      ? 'auctioneerUuid'
      : undefined;
export const passesFilters = (item: AuctionStatusChangedFields, filters: Filters): boolean =>
  skippedBy(item, filters) === undefined;
