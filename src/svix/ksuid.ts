/**
 * Svix's ids: a prefix, `_`, and a KSUID in svix-ksuid's millisecond
 * variant (KsuidMs). 27 base62 characters (0-9, A-Z, a-z) hold 20 bytes,
 * big-endian: bytes 0-3 are seconds since SVIX_EPOCH_SECONDS, byte 4
 * counts 4 ms units, the other 15 are random. No tables and no regexes: this
 * runs on every delivery.
 */

/** 2014-05-13T16:53:20Z, the KSUID epoch. */
export const SVIX_EPOCH_SECONDS = 1_400_000_000;

const BYTES = 20;
const LENGTH = 27;
const MAX_SECONDS = 0xffffffff;

/** The value of one base62 character, or -1. */
const digitOf = (code: number): number => {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  if (code >= 65 && code <= 90) return code - 55; // A-Z
  if (code >= 97 && code <= 122) return code - 61; // a-z
  return -1;
};

const charOf = (digit: number): string =>
  String.fromCharCode(digit < 10 ? digit + 48 : digit < 36 ? digit + 55 : digit + 61);

/** Base62 digits read at a time: eight make a number below 2^53, exact in a double. */
const CHUNK = 8;
const MAX_VALUE = (1n << BigInt(BYTES * 8)) - 1n;

/** A KSUID's value from `start` in `text`; undefined unless 27 base62 characters whose value fits in 160 bits. */
const ksuidValue = (text: string, start: number): bigint | undefined => {
  if (text.length - start !== LENGTH) return undefined;
  let value = 0n;
  for (let from = start; from < text.length; from += CHUNK) {
    const to = Math.min(from + CHUNK, text.length);
    let chunk = 0;
    for (let index = from; index < to; index += 1) {
      const digit = digitOf(text.charCodeAt(index));
      if (digit < 0) return undefined;
      chunk = chunk * 62 + digit;
    }
    value = value * 62n ** BigInt(to - from) + BigInt(chunk);
  }
  return value <= MAX_VALUE ? value : undefined;
};

/** The 20 bytes of a KSUID's text, or undefined unless it is 27 base62 characters whose value fits in 160 bits. */
export const decodeKsuid = (text: string): Uint8Array | undefined => {
  const value = ksuidValue(text, 0);
  if (value === undefined) return undefined;
  const bytes = new Uint8Array(BYTES);
  for (let at = 0; at < BYTES; at += 1) bytes[at] = Number((value >> BigInt((BYTES - 1 - at) * 8)) & 0xffn);
  return bytes;
};

/** A KsuidMs for the given time (epoch milliseconds) and 15 random bytes. */
export const encodeKsuidMs = (epochMs: number, random15: Uint8Array): string => {
  if (random15.length !== 15) throw new RangeError('A KSUID needs exactly 15 random bytes.');
  const ms = Math.floor(epochMs);
  const seconds = Math.floor(ms / 1000) - SVIX_EPOCH_SECONDS;
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_SECONDS)
    throw new RangeError('The time is outside what a KSUID can hold.');
  const bytes = new Uint8Array(BYTES);
  bytes[0] = Math.floor(seconds / 0x1000000) & 0xff;
  bytes[1] = (seconds >>> 16) & 0xff;
  bytes[2] = (seconds >>> 8) & 0xff;
  bytes[3] = seconds & 0xff;
  bytes[4] = Math.floor((ms - Math.floor(ms / 1000) * 1000) / 4);
  bytes.set(random15, 5);
  // Base62 by repeated division, least significant digit first.
  let text = '';
  for (let count = 0; count < LENGTH; count += 1) {
    let remainder = 0;
    for (let at = 0; at < BYTES; at += 1) {
      const value = remainder * 256 + (bytes[at] ?? 0);
      bytes[at] = Math.floor(value / 62);
      remainder = value % 62;
    }
    text = charOf(remainder) + text;
  }
  return text;
};

const isLetter = (code: number): boolean => (code >= 97 && code <= 122) || (code >= 65 && code <= 90);

/**
 * When a Svix id (`msg_…`, `ep_…`) was made, in epoch milliseconds, or
 * undefined when it is not a prefix of letters, `_` and a KSUID.
 */
export const timeOfSvixId = (id: string): number | undefined => {
  const separator = id.length - LENGTH - 1;
  if (separator < 1 || id.charCodeAt(separator) !== 95) return undefined; // '_'
  for (let index = 0; index < separator; index += 1) if (!isLetter(id.charCodeAt(index))) return undefined;
  const value = ksuidValue(id, separator + 1);
  if (value === undefined) return undefined;
  // Bytes 0-3 (the top 32 bits) count seconds; byte 4 counts 4 ms units.
  const seconds = Number(value >> 128n);
  return (seconds + SVIX_EPOCH_SECONDS) * 1000 + ((Number((value >> 120n) & 0xffn) * 4) % 1000);
};
