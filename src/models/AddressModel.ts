import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { ClassNames } from './classNames';
import { CountryCode, Long, optional, Text } from './primitives';

/** The documented default of `countryCode` (§2.3). */
export const DEFAULT_COUNTRY_CODE = 'uk';

const AddressFields = t.exact(
  t.intersection([
    t.type({
      '@class': t.literal(ClassNames.AddressModel),
      addressLine1: Text,
      addressLine2: Text,
      postcode: Text,
    }),
    t.partial({
      id: optional(Long),
      addressLine3: optional(Text),
      addressLine4: optional(Text),
      county: optional(Text),
      city: optional(Text),
      // Carried as strings (§2.3), never parsed into numbers.
      longitude: optional(Text),
      latitude: optional(Text),
      countryCode: optional(CountryCode),
    }),
  ]),
);

export type AddressModel = Omit<t.TypeOf<typeof AddressFields>, 'countryCode'> & { countryCode: string };

/** §2.3: a postal address; `countryCode` is lower case, `uk` when absent. */
export const AddressModel = new t.Type<AddressModel, t.OutputOf<typeof AddressFields>, unknown>(
  'AddressModel',
  (input): input is AddressModel => AddressFields.is(input) && typeof input.countryCode === 'string',
  (input, context) => {
    const decoded = AddressFields.validate(input, context);
    return isRight(decoded)
      ? t.success({ ...decoded.right, countryCode: decoded.right.countryCode ?? DEFAULT_COUNTRY_CODE })
      : decoded;
  },
  (address) => AddressFields.encode(address),
);
