import type * as LosslessJson from 'lossless-json';

/**
 * JSON from outside (a delivery's body, Svix's answers), read without
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
 * Text nested more than MAX_JSON_DEPTH levels deep is refused (JsonTooDeep):
 * lossless-json follows some thousands of levels, so within the limit every
 * number stays exact, and nothing is ever left to a reader that rounds.
 */

export const MAX_JSON_DEPTH = 1_000;

/** Text nested deeper than MAX_JSON_DEPTH. */
export class JsonTooDeep extends Error {
  constructor() {
    super(`JSON nested more than ${MAX_JSON_DEPTH} levels deep`);
    this.name = 'JsonTooDeep';
  }
}

/** How deeply arrays and objects nest in JSON text (brackets inside strings do not count). */
const depthOf = (text: string): number => {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 92)
        index += 1; // a backslash escapes the next character
      else if (char === 34) inString = false;
    } else if (char === 34) inString = true;
    else if (char === 91 || char === 123) deepest = Math.max(deepest, (depth += 1));
    else if (char === 93 || char === 125) depth -= 1;
  }
  return deepest;
};

/**
 * Text that may hold a number a double cannot keep: a number (where JSON puts one: first, or after `:`, `[` or `,`)
 * of 16 digits or more, or with an exponent of 3 digits. A string holding such text is a false alarm, and only costs
 * the slower parse; ids and UUIDs (`…4e512…`) no longer raise one.
 */
const MAY_HOLD_INEXACT_NUMBER = /(?:^|[:,[])\s*-?(?:\d{16}|[\d.]+[eE][+-]?\d{3})/;

/** lossless-json, loaded only for text that needs it: most deliveries never do, and every process starts faster. */
let library: typeof LosslessJson | undefined;
const lossless = (): typeof LosslessJson => (library ??= require('lossless-json'));

/** Parses JSON text; throws SyntaxError when it is not JSON, as JSON.parse does, and JsonTooDeep. */
export const parseJson = (text: string): unknown => {
  // Each level takes two characters at least: only longer text can be too deep.
  if (text.length > 2 * MAX_JSON_DEPTH && depthOf(text) > MAX_JSON_DEPTH) throw new JsonTooDeep();
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
  return parse(text, null, { parseNumber: exactNumber, onDuplicateKey: ({ newValue }) => newValue });
};

/**
 * The exact text of a number parseJson kept exact (an integer beyond ±2^53,
 * 1e400…), or undefined. Only parseJson makes such numbers, and only once it
 * has loaded lossless-json.
 */
export const exactText = (value: unknown): string | undefined =>
  library?.isLosslessNumber(value) ? value.value : undefined;
