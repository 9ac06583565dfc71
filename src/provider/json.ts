import type * as LosslessJson from 'lossless-json';

/**
 * JSON from outside (a delivery's body, the provider's answers), read without
 * losing a digit. JSON.parse reads every number as a double, so an integer
 * beyond ±2^53, which Java services send for a `long`, reaches a Zap rounded
 * (9007199254740993 becomes 9007199254740992), and 1e400 becomes Infinity.
 * Here such a number is read as a LosslessNumber (lossless-json's), which
 * holds its exact text: it is still a number, not text, so a codec that wants
 * text refuses it as it refuses any number; a LONG id takes its digits; and a
 * Zap field gets its exact text (exactText). Every other number is a number,
 * as JSON.parse gives it.
 *
 * JSON.parse reads the text first: it is fast, it decides what is JSON, and
 * it follows any depth of nesting. Only text that may hold such a number (a
 * run of 16 digits, or an exponent of three digits) is read again with
 * lossless-json. Duplicate keys keep the last value, as with JSON.parse.
 * Nested deeper than lossless-json can follow (some thousands of levels), the
 * text keeps what JSON.parse read.
 */

/** Text that may hold a number a double cannot keep: every such number has one of these. */
const MAY_HOLD_INEXACT_NUMBER = /\d{16}|[eE][+-]?\d{3}/;

/** lossless-json, loaded only for text that needs it: most deliveries never do, and every process starts faster. */
let library: typeof LosslessJson | undefined;
const lossless = (): typeof LosslessJson => (library ??= require('lossless-json'));

/** Parses JSON text; throws SyntaxError when it is not JSON, as JSON.parse does. */
export const parseJson = (text: string): unknown => {
  const read: unknown = JSON.parse(text);
  if (!MAY_HOLD_INEXACT_NUMBER.test(text)) return read;
  const { getUnsafeNumberReason, LosslessNumber, parse, UnsafeNumberReason } = lossless();
  // A number as JSON.parse reads it, or kept exact when a double would change its value.
  const exactNumber = (number: string): number | LosslessJson.LosslessNumber => {
    const unsafe = getUnsafeNumberReason(number);
    return unsafe === undefined || unsafe === UnsafeNumberReason.truncate_float
      ? Number(number)
      : new LosslessNumber(number);
  };
  try {
    return parse(text, null, { parseNumber: exactNumber, onDuplicateKey: ({ newValue }) => newValue });
  } catch {
    return read;
  }
};

/**
 * The exact text of a number parseJson kept exact (an integer beyond ±2^53,
 * 1e400…), or undefined. Only parseJson makes such numbers, and only once it
 * has loaded lossless-json.
 */
export const exactText = (value: unknown): string | undefined =>
  library?.isLosslessNumber(value) ? value.value : undefined;
