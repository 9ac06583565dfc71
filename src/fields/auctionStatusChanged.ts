import type { AuctionStatusChange } from '../models/AuctionStatusChange';
import { EVENT_TYPE_NAME } from '../provider/eventType';
import type { OutputField } from './zapFields';

/** One Zap trigger item: what a Zap step can map from "Auction Status Changed". */
export type AuctionStatusChangedItem = {
  /** The provider's message id (`msg_…`): the same in live runs and in samples, and Zapier's dedupe key. */
  id: string;
  auctionUuid: string;
  auctioneerUuid: string;
  status: string;
  statusLabel: string;
  eventType: string;
  occurredAt: string;
};

export type ItemOutputField = OutputField & { key: keyof AuctionStatusChangedItem };

export const auctionStatusChangedOutputFields: ItemOutputField[] = [
  { key: 'id', label: 'Event ID', type: 'string' },
  { key: 'auctionUuid', label: 'Auction UUID', type: 'string' },
  { key: 'auctioneerUuid', label: 'Auctioneer UUID', type: 'string' },
  { key: 'status', label: 'Status', type: 'string' },
  { key: 'statusLabel', label: 'Status Label', type: 'string' },
  { key: 'eventType', label: 'Event Type', type: 'string' },
  { key: 'occurredAt', label: 'Occurred At', type: 'datetime' },
];

/** `OPEN_FOR_BIDDING` → `Open For Bidding`; text without separators keeps its letters' case past the first. */
export const statusLabel = (status: string): string =>
  status
    .split(/[\s_-]+/u)
    .filter((word) => word !== '')
    .map((word) => {
      const first = String.fromCodePoint(word.codePointAt(0) ?? 0);
      // Unicode's default case mapping: the same everywhere, and much cheaper than a locale's.
      return first.toUpperCase() + word.slice(first.length).toLowerCase();
    })
    .join(' ');

/** ISO 8601 with an explicit offset, to the second: 2026-11-22T17:41:58+00:00. */
export const isoWithOffset = (epochMilliseconds: number): string => {
  const iso = new Date(Math.floor(epochMilliseconds / 1000) * 1000).toISOString();
  // `YYYY-MM-DDTHH:mm:ss.sssZ` in every year from 0 to 9999; other years have a longer form.
  return iso.length === 24 ? `${iso.slice(0, 19)}+00:00` : iso.replace(/\.\d{3}Z$/, '+00:00');
};

export interface EventEnvelope {
  messageId: string;
  /** When the provider sent the event, in milliseconds since the epoch. */
  sentAtMs: number;
}

/** Maps a decoded payload and its envelope to the trigger item; every key is always present. */
export const toTriggerItem = (payload: AuctionStatusChange, envelope: EventEnvelope): AuctionStatusChangedItem => ({
  id: envelope.messageId,
  auctionUuid: payload.auctionUuid,
  auctioneerUuid: payload.auctioneerUuid,
  status: payload.status,
  statusLabel: statusLabel(payload.status),
  eventType: EVENT_TYPE_NAME,
  occurredAt: isoWithOffset(envelope.sentAtMs),
});

export const auctionStatusChangedSample: AuctionStatusChangedItem = toTriggerItem(
  {
    auctionUuid: '5b0f1c1e-8d2a-4c59-9a37-2f1f7e0b6c11',
    auctioneerUuid: '0e7c2f44-3b8e-4f6d-a1d2-9c5b8e7a4f20',
    status: 'OPEN_FOR_BIDDING',
  },
  { messageId: 'msg_2nQ8sVx4YbK1tLmP0cRz7hJwE3a', sentAtMs: Date.UTC(2026, 10, 22, 9, 30, 0) },
);
