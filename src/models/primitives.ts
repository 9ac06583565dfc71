import * as t from 'io-ts';

/** A string with at least one character. Named "text" so errors read "expected text". */
export const NonEmptyText = new t.Type<string, string, unknown>(
  'text',
  (input): input is string => typeof input === 'string' && input.length > 0,
  (input, context) => (typeof input === 'string' && input.length > 0 ? t.success(input) : t.failure(input, context)),
  t.identity,
);
export type NonEmptyText = t.TypeOf<typeof NonEmptyText>;
