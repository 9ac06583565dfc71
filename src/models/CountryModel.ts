import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { ClassNames } from './classNames';
import { CountryCode, Long, optional, Text } from './primitives';

const CountryFields = t.exact(
  t.intersection([
    t.type({ '@class': t.literal(ClassNames.CountryModel) }),
    t.partial({ id: optional(Long), code: optional(CountryCode), name: optional(Text) }),
  ]),
);
export type CountryModel = t.TypeOf<typeof CountryFields>;

/**
 * §2.4: a country, identified by its two-letter `code` or, instead, by the
 * `id` of its record in the reference data API: one of the two is needed.
 */
export const CountryModel = new t.Type<CountryModel, t.OutputOf<typeof CountryFields>, unknown>(
  'CountryModel',
  (input): input is CountryModel => CountryFields.is(input) && (input.code !== undefined || input.id !== undefined),
  (input, context) => {
    const decoded = CountryFields.validate(input, context);
    if (!isRight(decoded)) return decoded;
    if (decoded.right.code === undefined && decoded.right.id === undefined) {
      return t.failure(
        undefined,
        [...context, { key: 'code', type: CountryCode, actual: undefined }],
        'missing: give the two-letter code, or the id from the reference data API',
      );
    }
    return t.success(decoded.right);
  },
  (country) => CountryFields.encode(country),
);
