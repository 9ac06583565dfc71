import * as t from 'io-ts';
import { exactText } from './json';

/** A string with at least one character. Named "text" so errors read "expected text". */
export const NonEmptyText = new t.Type<string, string, unknown>(
  'text',
  (input): input is string => typeof input === 'string' && input.length > 0,
  (input, context) => (typeof input === 'string' && input.length > 0 ? t.success(input) : t.failure(input, context)),
  t.identity,
);
export type NonEmptyText = t.TypeOf<typeof NonEmptyText>;

/** Any string, named "text" for readable errors. */
export const Text = new t.Type<string, string, unknown>(
  'text',
  (input): input is string => typeof input === 'string',
  (input, context) => (typeof input === 'string' ? t.success(input) : t.failure(input, context)),
  t.identity,
);

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/**
 * A LONG (64-bit integer) id, decoded to its canonical decimal text so that
 * nothing beyond 2^53 is ever rounded. Accepted: a JSON integer, within the
 * safe range or kept exact by parseJson beyond it, or a string of decimal
 * digits (optionally signed). Refused: a fraction, a number already rounded
 * (JSON.parse's reading of an integer beyond 2^53), anything outside the
 * signed 64-bit range.
 */
export const Long = new t.Type<string, string, unknown>(
  'Long',
  (input): input is string => typeof input === 'string' && /^-?(0|[1-9]\d*)$/.test(input),
  (input, context) => {
    let digits: string;
    const exact = exactText(input);
    if (exact !== undefined) {
      // Kept exact by parseJson: an integer beyond 2^53, as a Java long is sent.
      if (!/^-?\d{1,20}$/.test(exact)) return t.failure(input, context);
      digits = exact;
    } else if (typeof input === 'number') {
      if (Number.isInteger(input) && !Number.isSafeInteger(input)) {
        return t.failure(input, context, 'a whole number this large must be sent as a string of digits to stay exact');
      }
      if (!Number.isInteger(input)) return t.failure(input, context);
      digits = String(input);
    } else if (typeof input === 'string' && /^[+-]?\d{1,20}$/.test(input.trim())) {
      digits = input.trim();
    } else {
      return t.failure(input, context);
    }
    const value = BigInt(digits);
    return value < LONG_MIN || value > LONG_MAX ? t.failure(input, context) : t.success(value.toString());
  },
  t.identity,
);
export type Long = t.TypeOf<typeof Long>;

/** A two-letter country code, any case in, lower case out (`UK` reads as `uk`). */
export const CountryCode = new t.Type<string, string, unknown>(
  'CountryCode',
  (input): input is string => typeof input === 'string' && /^[a-z]{2}$/.test(input),
  (input, context) =>
    typeof input === 'string' && /^[A-Za-z]{2}$/.test(input.trim())
      ? t.success(input.trim().toLowerCase())
      : t.failure(input, context),
  t.identity,
);

/**
 * An optional field where `null` reads as absent: use inside `t.partial`.
 * The decoded value is `undefined` for both null and absent.
 */
export const optional = <C extends t.Mixed>(codec: C) =>
  new t.Type<t.TypeOf<C> | undefined, t.OutputOf<C> | undefined, unknown>(
    codec.name,
    (input): input is t.TypeOf<C> | undefined => input === undefined || codec.is(input),
    (input, context) => (input === null || input === undefined ? t.success(undefined) : codec.validate(input, context)),
    (value) => (value === undefined ? undefined : codec.encode(value)),
  );
