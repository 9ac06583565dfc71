import type { AuctionStatusChange } from '../models/AuctionStatusChange';
import { EVENT_TYPE_NAME } from '../svix/eventType';
import { timeOfSvixId } from '../svix/ksuid';
import { CLOCK_ALLOWANCE_SECONDS } from '../svix/signature';
import type { ExtraValue } from './extraFields';
import type { OutputField } from './zapFields';

/** The fields every item has: what a Zap step can always map from "Auction Status Changed". */
export type AuctionStatusChangedFields = {
  /** Svix's message id (`msg_…`): the same in live runs and in samples, and Zapier's dedupe key. */
  id: string;
  auctionUuid: string;
  auctioneerUuid: string;
  status: string;
  statusLabel: string;
  eventType: string;
  occurredAt: string;
};

/** One Zap trigger item: the fields above, and every other field the event carried (see extraFields). */
export type AuctionStatusChangedItem = AuctionStatusChangedFields & { [extra: string]: ExtraValue };

type ItemOutputField = OutputField & { key: keyof AuctionStatusChangedFields };

export const auctionStatusChangedOutputFields: ItemOutputField[] = [
  {
    key: 'id',
    label: 'Event ID',
    type: 'string',
    helpText: "Svix's ID for this event: the same for every copy of it, so it tells events apart.",
  },
  {
    key: 'auctionUuid',
    label: 'Auction UUID',
    type: 'string',
    helpText: "The auction's identifier in the auction service.",
  },
  {
    key: 'auctioneerUuid',
    label: 'Auctioneer UUID',
    type: 'string',
    helpText: 'The identifier, in the auction service, of the auctioneer the auction belongs to.',
  },
  {
    key: 'status',
    label: 'Status',
    type: 'string',
    helpText:
      "The auction's status after the change (for a new auction, its first status), as the auction service writes it.",
  },
  {
    key: 'statusLabel',
    label: 'Status Label',
    type: 'string',
    helpText: 'The status in words, for emails and web pages: OPEN_FOR_BIDDING reads Open For Bidding.',
  },
  {
    key: 'eventType',
    label: 'Event Type',
    type: 'string',
    helpText: 'The kind of event: always AUCTION_STATUS_CHANGE.',
  },
  {
    key: 'occurredAt',
    label: 'Occurred At',
    type: 'datetime',
    helpText: 'When the auction was created or its status changed, in UTC: the same for every copy of the event.',
  },
];

/** `OPEN_FOR_BIDDING` → `Open For Bidding`; text without separators keeps its letters' case past the first. */
export const statusLabel = (status: string): string =>
  status
    .split(/[\s_-]+/u)
    .filter((word) => word !== '')
    .map((word) => {
      const first = String.fromCodePoint(word.codePointAt(0) ?? 0);
      // Unicode's default case mapping: the same everywhere, whatever the locale.
      return first.toUpperCase() + word.slice(first.length).toLowerCase();
    })
    .join(' ');

/** ISO 8601 with an explicit offset, to the second: 2026-11-22T17:41:58+00:00 (a RangeError past a Date's reach). */
export const isoWithOffset = (epochMilliseconds: number): string => {
  // A time Date refuses is refused before its second is taken (the last second's start would pass).
  if (Number.isNaN(new Date(epochMilliseconds).getTime())) throw new RangeError('Invalid time value');
  const iso = new Date(Math.floor(epochMilliseconds / 1000) * 1000).toISOString();
  return `${iso.slice(0, iso.length - '.000Z'.length)}+00:00`;
};

/** `2026-11-22T09:30:00+00:00` → `22 Nov 2026, 09:30 UTC`. */
export const shortTime = (iso: string): string => {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][at.getUTCMonth()];
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${at.getUTCDate()} ${month} ${at.getUTCFullYear()}, ${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())} UTC`;
};

/** Ids before this are not Svix's: its KSUIDs only came into use later. */
const EARLIEST_ID_MS = Date.UTC(2020, 0, 1);

/**
 * When the event happened: the creation time Svix's message id
 * (`msg_` + KsuidMs) carries, the same for the first delivery, every retry and
 * the message log. `fallbackMs` (the delivery's signing time, or the log's
 * timestamp) stands in when the id is not of that kind, or its time is not
 * plausible: before Svix's KSUIDs, or after the delivery was signed.
 */
export const eventTimeMs = (messageId: string, fallbackMs: number): number =>
  eventTimeOf(messageId.startsWith('msg_') ? timeOfSvixId(messageId) : undefined, fallbackMs);
/** The same, from the time a message id holds (none: it holds no time). */
export const eventTimeOf = (fromId: number | undefined, fallbackMs: number): number => {
  const plausible =
    fromId !== undefined && fromId >= EARLIEST_ID_MS && fromId <= fallbackMs + CLOCK_ALLOWANCE_SECONDS * 1000;
  return plausible ? fromId : fallbackMs;
};

interface EventEnvelope {
  messageId: string;
  /** When the event happened, in milliseconds since the epoch (see eventTimeMs). */
  occurredAtMs: number;
}

/**
 * The key an extra field gets in the item: one that would take a key of the
 * integration's own fields is kept under `payload__<key>` instead.
 */
export const extraItemKey = (key: string): string =>
  Object.prototype.hasOwnProperty.call(auctionStatusChangedSample, key) ? `payload__${key}` : key;

/**
 * Maps a decoded payload, its extra fields and its envelope to the trigger
 * item. Every documented key is always present, and no payload field
 * overwrites one of them; of two extra fields given the same key, the first
 * is kept.
 */
export const toTriggerItem = (
  payload: AuctionStatusChange,
  envelope: EventEnvelope,
  extras: Readonly<Record<string, ExtraValue>> = {},
): AuctionStatusChangedItem => {
  const fields: AuctionStatusChangedFields = {
    id: envelope.messageId,
    auctionUuid: payload.auctionUuid,
    auctioneerUuid: payload.auctioneerUuid,
    status: payload.status,
    statusLabel: statusLabel(payload.status),
    eventType: EVENT_TYPE_NAME,
    occurredAt: isoWithOffset(envelope.occurredAtMs),
  };
  const entries = Object.entries(extras);
  if (entries.length === 0) return fields;
  const renamed = new Map<string, ExtraValue>();
  for (const [key, value] of entries) {
    const target = extraItemKey(key);
    if (!renamed.has(target)) renamed.set(target, value);
  }
  return { ...fields, ...Object.fromEntries(renamed) };
};

export const auctionStatusChangedSample: AuctionStatusChangedFields = toTriggerItem(
  {
    auctionUuid: '5b0f1c1e-8d2a-4c59-9a37-2f1f7e0b6c11',
    auctioneerUuid: '0e7c2f44-3b8e-4f6d-a1d2-9c5b8e7a4f20',
    status: 'OPEN_FOR_BIDDING',
  },
  // A message id as Svix makes them: it says when the event happened (the time below).
  { messageId: 'msg_3MSN2JDsvJW4XNEMzggy1WnjNfx', occurredAtMs: Date.UTC(2026, 10, 22, 9, 30, 0) },
);
