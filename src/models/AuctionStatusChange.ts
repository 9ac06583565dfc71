import * as t from 'io-ts';
import { NonEmptyText } from './primitives';

/**
 * The AUCTION_STATUS_CHANGE payload (§6.1): the three promised fields, all
 * required. Any other field an event carries is read by fields/extraFields.
 */
export const AuctionStatusChange = t.exact(
  t.type({ auctioneerUuid: NonEmptyText, auctionUuid: NonEmptyText, status: NonEmptyText }),
  'AuctionStatusChange',
);
export type AuctionStatusChange = t.TypeOf<typeof AuctionStatusChange>;
