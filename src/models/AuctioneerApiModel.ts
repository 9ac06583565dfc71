import * as t from 'io-ts';
import { ClassNames } from './classNames';
import { Long, optional, Text } from './primitives';

/** §2.1: an auctioneer. `id` is "not marked" as required, so it is optional here. */
export const AuctioneerApiModel = t.exact(
  t.intersection([
    t.type({ '@class': t.literal(ClassNames.AuctioneerApiModel) }),
    t.partial({ id: optional(Long), name: optional(Text) }),
  ]),
  'AuctioneerApiModel',
);
export type AuctioneerApiModel = t.TypeOf<typeof AuctioneerApiModel>;
