import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { decodeKsuid, encodeKsuidMs, SVIX_EPOCH_SECONDS, timeOfSvixId } from '../../src/svix/ksuid';

const MAX_160 = 'aWgEPTl1tmebfsQzFP4bxwgy80V';
const ZEROS = '0'.repeat(27);
/** The last millisecond a KSUID can hold: 2^32 - 1 seconds after its epoch, plus 996 ms. */
const LAST_MS = (SVIX_EPOCH_SECONDS + 0xffffffff) * 1000 + 996;
const toUnit = (ms: number): number => Math.floor(ms / 4) * 4;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A second, plainer base62 encoder (BigInt) to check the module against. */
const base62 = (value: bigint): string => {
  let text = '';
  for (let rest = value; rest > 0n; rest /= 62n) text = ALPHABET[Number(rest % 62n)] + text;
  return text.padStart(27, '0');
};
const bigOf = (bytes: Uint8Array): bigint => bytes.reduce((value, byte) => value * 256n + BigInt(byte), 0n);

describe('timeOfSvixId', () => {
  it("reads the second of the contract's example id", () => {
    const time = timeOfSvixId('msg_1srOrx2ZWZBpBUvZwXKQmoEYga2');
    if (time === undefined) throw new Error('the example id did not decode');
    // A plain KSUID: its fifth byte is random, so only the second is meaningful.
    expect(Math.floor(time / 1000) * 1000).toBe(Date.parse('2021-05-21T20:04:03Z'));
  });

  it('reads an id minted now to its 4 ms unit', () => {
    const at = Date.now();
    expect(timeOfSvixId(`msg_${encodeKsuidMs(at, randomBytes(15))}`)).toBe(toUnit(at));
    expect(timeOfSvixId(`integ_${encodeKsuidMs(at, randomBytes(15))}`)).toBe(toUnit(at));
  });

  it('reads any time a KSUID can hold, with any random part', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: SVIX_EPOCH_SECONDS * 1000, max: LAST_MS + 3 }),
        fc.uint8Array({ minLength: 15, maxLength: 15 }),
        fc.stringMatching(/^[a-z]{1,8}$/),
        (at, random, prefix) => {
          const text = encodeKsuidMs(at, random);
          expect(text).toMatch(/^[0-9A-Za-z]{27}$/);
          expect(timeOfSvixId(`${prefix}_${text}`)).toBe(toUnit(at));
          expect(decodeKsuid(text)?.slice(5)).toEqual(random);
          const seconds = BigInt(Math.floor(at / 1000) - SVIX_EPOCH_SECONDS);
          const unit = BigInt(Math.floor((at % 1000) / 4));
          expect(text).toBe(base62((seconds << 128n) + (unit << 120n) + bigOf(random)));
        },
      ),
    );
  });

  it('reads the smallest and largest values', () => {
    expect(timeOfSvixId(`ep_${ZEROS}`)).toBe(SVIX_EPOCH_SECONDS * 1000);
    // All 0xff: 2^32 - 1 seconds, and 255 units of 4 ms is 1020 ms, counted modulo a second.
    expect(timeOfSvixId(`ep_${MAX_160}`)).toBe((SVIX_EPOCH_SECONDS + 0xffffffff) * 1000 + 20);
    expect(encodeKsuidMs(SVIX_EPOCH_SECONDS * 1000, new Uint8Array(15))).toBe(ZEROS);
    const last = encodeKsuidMs(LAST_MS, new Uint8Array(15).fill(255));
    expect(last).toBe(base62(2n ** 160n - 1n - 6n * 2n ** 120n));
    expect(decodeKsuid(last)?.[4]).toBe(249);
  });

  it.each([
    ['no prefix', MAX_160],
    ['an empty prefix', `_${MAX_160}`],
    ['a prefix that is not letters', `m-g_${ZEROS}`],
    ['a prefix with a digit', `msg1_${ZEROS}`],
    ['no separator', `msg${ZEROS}`],
    ['one character short', `msg_${ZEROS.slice(1)}`],
    ['one character too many', `msg_${ZEROS}0`],
    ['a character outside base62', `msg_${ZEROS.slice(1)}-`],
    ['a non-ASCII letter', `msg_${ZEROS.slice(1)}é`],
    ['a value above 160 bits', 'msg_aWgEPTl1tmebfsQzFP4bxwgy80W'],
    ['the largest 27-character text', `msg_${'z'.repeat(27)}`],
    ['an empty string', ''],
  ])('refuses %s', (_name, id) => {
    expect(timeOfSvixId(id)).toBeUndefined();
  });
});

describe('decodeKsuid', () => {
  it('agrees with a plain BigInt reading', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 160n - 1n }), (value) => {
        const bytes = decodeKsuid(base62(value));
        expect(bytes && bigOf(bytes)).toBe(value);
      }),
    );
  });

  it('decodes the boundaries to 20 bytes', () => {
    expect(decodeKsuid(ZEROS)).toEqual(new Uint8Array(20));
    expect(decodeKsuid(MAX_160)).toEqual(new Uint8Array(20).fill(255));
    expect(base62(2n ** 160n - 1n)).toBe(MAX_160);
  });

  it.each([
    ['one above the largest value', 'aWgEPTl1tmebfsQzFP4bxwgy80W'],
    ['26 characters', ZEROS.slice(1)],
    ['28 characters', `${ZEROS}0`],
    ['a space', `${ZEROS.slice(1)} `],
    ['an underscore', `${ZEROS.slice(1)}_`],
    ['a character just past the alphabet', `${ZEROS.slice(1)}{`],
  ])('refuses %s', (_name, text) => {
    expect(decodeKsuid(text)).toBeUndefined();
  });

  it('decodes what it encodes, byte for byte', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (bytes) => {
        const seconds =
          ((bytes[0] ?? 0) * 0x1000000 + ((bytes[1] ?? 0) << 16) + ((bytes[2] ?? 0) << 8) + (bytes[3] ?? 0)) >>> 0;
        // Byte 4 is only ever 0-249 when minted from a time.
        const unit = (bytes[4] ?? 0) % 250;
        const at = (seconds + SVIX_EPOCH_SECONDS) * 1000 + unit * 4;
        const decoded = decodeKsuid(encodeKsuidMs(at, bytes.slice(5)));
        expect(decoded).toEqual(Uint8Array.from([...bytes.slice(0, 4), unit, ...bytes.slice(5)]));
      }),
    );
  });
});

describe('encodeKsuidMs', () => {
  it('refuses times a KSUID cannot hold, and a random part of the wrong size', () => {
    const random = new Uint8Array(15);
    expect(() => encodeKsuidMs(SVIX_EPOCH_SECONDS * 1000 - 1, random)).toThrow(RangeError);
    expect(() => encodeKsuidMs(LAST_MS + 4, random)).toThrow(RangeError);
    expect(() => encodeKsuidMs(Number.NaN, random)).toThrow(RangeError);
    expect(() => encodeKsuidMs(Date.now(), new Uint8Array(14))).toThrow(RangeError);
  });
});
