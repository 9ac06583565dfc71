import * as t from 'io-ts';
import { ClassNames } from './classNames';
import { Long, NonEmptyText, optional, Text } from './primitives';

/** §2.5: a currency. */
export const CurrencyModel = t.exact(
  t.intersection([
    t.type({ '@class': t.literal(ClassNames.CurrencyModel), code: NonEmptyText }),
    t.partial({ id: optional(Long), name: optional(Text) }),
  ]),
  'CurrencyModel',
);
export type CurrencyModel = t.TypeOf<typeof CurrencyModel>;
