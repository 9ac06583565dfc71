import * as t from 'io-ts';
import fc from 'fast-check';
import { isLeft, isRight } from 'fp-ts/Either';
import {
  AddressModel,
  ApiModel,
  AuctioneerApiModel,
  AuctionStatusChange,
  ClassNames,
  CountryModel,
  CurrencyModel,
  Long,
  UrlAttachmentApiModel,
  decodeWith,
} from '../../src/models';

const SECRET_VALUE = 'SECRET-VALUE-123';

/** The decoded value, or a test failure that shows the error lines. */
const ok = <A>(codec: t.Decoder<unknown, A>, input: unknown): A => {
  const result = decodeWith(codec, input);
  if (isLeft(result)) throw new Error(`expected to decode, got: ${result.left.join('; ')}`);
  return result.right;
};
const errors = <A>(codec: t.Decoder<unknown, A>, input: unknown): string[] => {
  const result = decodeWith(codec, input);
  if (isRight(result)) throw new Error('expected a decode failure');
  return result.left;
};

const address = {
  '@class': ClassNames.AddressModel,
  addressLine1: '12 Harbour Street',
  addressLine2: 'Old Town',
  postcode: 'YO21 3PU',
};

describe('@class', () => {
  it.each([
    [AuctioneerApiModel, ClassNames.AuctioneerApiModel, {}],
    [UrlAttachmentApiModel, ClassNames.UrlAttachmentApiModel, { url: 'x' }],
    [AddressModel, ClassNames.AddressModel, { addressLine1: 'a', addressLine2: 'b', postcode: 'p' }],
    [CountryModel, ClassNames.CountryModel, { code: 'fr' }],
    [CurrencyModel, ClassNames.CurrencyModel, { code: 'GBP' }],
  ])('is required and must be the exact fixed name (%#)', (codec: t.Decoder<unknown, unknown>, className, rest) => {
    expect(isRight(codec.decode({ '@class': className, ...rest }))).toBe(true);
    expect(errors(codec, rest).join()).toMatch(/@class: missing/);
    expect(errors(codec, { '@class': `${className}X`, ...rest }).join()).toMatch(/@class: expected exactly/);
  });
});

describe('LONG ids', () => {
  it('accepts a safe JSON integer and a string of digits, as exact text', () => {
    expect(ok(Long, 42)).toBe('42');
    expect(ok(Long, '9007199254740993')).toBe('9007199254740993');
    expect(ok(Long, '9223372036854775807')).toBe('9223372036854775807');
    expect(ok(Long, '-9223372036854775808')).toBe('-9223372036854775808');
  });

  it('refuses fractions, unsafe JSON numbers, non-digits and values beyond 64 bits', () => {
    expect(isLeft(Long.decode(1.5))).toBe(true);
    // A JSON number past 2^53 (as JSON.parse would read 9007199254740993).
    expect(errors(Long, 2 ** 53 + 2).join()).toMatch(/must be sent as a string of digits/);
    expect(isLeft(Long.decode('12a'))).toBe(true);
    expect(isLeft(Long.decode('1.0'))).toBe(true);
    expect(isLeft(Long.decode('9223372036854775808'))).toBe(true);
  });

  it('keeps any 64-bit id exactly, never rounded', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (value) => {
        expect(ok(Long, value.toString())).toBe(value.toString());
      }),
    );
  });
});

describe('AddressModel', () => {
  it('needs addressLine1, addressLine2 and postcode; naming each missing one', () => {
    expect(errors(AddressModel, { '@class': ClassNames.AddressModel }).sort()).toEqual([
      'AddressModel.addressLine1: missing',
      'AddressModel.addressLine2: missing',
      'AddressModel.postcode: missing',
    ]);
  });

  it('stores countryCode in lower case and defaults it to uk', () => {
    expect(ok(AddressModel, { ...address, countryCode: 'UK' }).countryCode).toBe('uk');
    expect(ok(AddressModel, { ...address, countryCode: 'Fr' }).countryCode).toBe('fr');
    expect(ok(AddressModel, address).countryCode).toBe('uk');
    expect(ok(AddressModel, { ...address, countryCode: null }).countryCode).toBe('uk');
    expect(errors(AddressModel, { ...address, countryCode: 'GBR' })).toEqual([
      'AddressModel.countryCode: expected a two-letter country code',
    ]);
  });

  it('keeps latitude and longitude as strings', () => {
    const decoded = ok(AddressModel, { ...address, latitude: '54.4858', longitude: '-0.6206' });
    expect(decoded.latitude).toBe('54.4858');
    expect(errors(AddressModel, { ...address, latitude: 54.4858 })).toEqual(['AddressModel.latitude: expected text']);
  });

  it('reads null in an optional field as absent, and lets unknown fields pass without keeping them', () => {
    const decoded = ok(AddressModel, { ...address, city: null, addressLine3: null, somethingNew: 'x' });
    expect(decoded.city).toBeUndefined();
    expect(Object.keys(decoded)).not.toContain('somethingNew');
  });

  it('reports paths and expected types, never the values', () => {
    const lines = errors(AddressModel, { ...address, postcode: { SECRET_VALUE }, county: 7, id: SECRET_VALUE });
    expect(lines.sort()).toEqual([
      'AddressModel.county: expected text',
      'AddressModel.id: expected a whole number or a string of digits',
      'AddressModel.postcode: expected text',
    ]);
    expect(lines.join()).not.toContain(SECRET_VALUE);
  });
});

describe('CountryModel', () => {
  it('accepts a code, or only an id from the reference data API', () => {
    expect(ok(CountryModel, { '@class': ClassNames.CountryModel, code: 'US' }).code).toBe('us');
    expect(ok(CountryModel, { '@class': ClassNames.CountryModel, id: 250 }).id).toBe('250');
  });

  it('needs one of them, and says so naming code', () => {
    expect(errors(CountryModel, { '@class': ClassNames.CountryModel, name: 'France' })).toEqual([
      'CountryModel.code: missing: give the two-letter code, or the id from the reference data API',
    ]);
  });
});

describe('UrlAttachmentApiModel', () => {
  it('accepts a bare hosted-video id as url, refuses an empty one', () => {
    expect(ok(UrlAttachmentApiModel, { '@class': ClassNames.UrlAttachmentApiModel, url: 'dQw4w9WgXcQ' }).url).toBe(
      'dQw4w9WgXcQ',
    );
    expect(errors(UrlAttachmentApiModel, { '@class': ClassNames.UrlAttachmentApiModel, url: '' })).toEqual([
      'UrlAttachmentApiModel.url: expected text',
    ]);
  });
});

describe('AuctioneerApiModel and CurrencyModel', () => {
  it('read their optional and required fields as published', () => {
    expect(ok(AuctioneerApiModel, { '@class': ClassNames.AuctioneerApiModel })).toEqual({
      '@class': ClassNames.AuctioneerApiModel,
    });
    expect(errors(CurrencyModel, { '@class': ClassNames.CurrencyModel, name: 'Euro' })).toEqual([
      'CurrencyModel.code: missing',
    ]);
  });
});

describe('ApiModel (dispatch on @class)', () => {
  it('decodes with the model that @class names, and errors name that model', () => {
    expect(ok(ApiModel, { '@class': ClassNames.CurrencyModel, code: 'EUR' })).toEqual({
      '@class': ClassNames.CurrencyModel,
      code: 'EUR',
    });
    expect(errors(ApiModel, { '@class': ClassNames.AddressModel, addressLine1: 'a', addressLine2: 'b' })).toEqual([
      'AddressModel.postcode: missing',
    ]);
  });

  it('refuses an unknown @class without repeating it', () => {
    const lines = errors(ApiModel, { '@class': SECRET_VALUE });
    expect(lines).toEqual(['ApiModel.@class: expected one of the published model names (com.vendor.scaffold.…)']);
  });
});

describe('AuctionStatusChange (the event payload)', () => {
  const event = { auctioneerUuid: 'a', auctionUuid: 'b', status: 'OPEN_FOR_BIDDING' };

  it('needs all three fields as non-empty text', () => {
    expect(ok(AuctionStatusChange, event)).toEqual(event);
    expect(errors(AuctionStatusChange, { ...event, status: '' })).toEqual([
      'AuctionStatusChange.status: expected text',
    ]);
    expect(errors(AuctionStatusChange, { status: 'x' }).sort()).toEqual([
      'AuctionStatusChange.auctionUuid: missing',
      'AuctionStatusChange.auctioneerUuid: missing',
    ]);
  });

  it('never lets __proto__ or constructor keys reach the decoded value or any prototype', () => {
    const hostile: unknown = JSON.parse(
      '{"auctioneerUuid":"a","auctionUuid":"b","status":"c","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
    );
    const decoded = ok(AuctionStatusChange, hostile);
    expect(Object.keys(decoded).sort()).toEqual(['auctionUuid', 'auctioneerUuid', 'status']);
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('properties', () => {
  const codecs: t.Decoder<unknown, unknown>[] = [
    AuctioneerApiModel,
    UrlAttachmentApiModel,
    AddressModel,
    CountryModel,
    CurrencyModel,
    ApiModel,
    AuctionStatusChange,
  ];

  it('decoding any JSON never throws, and errors never repeat a string from the input', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(...codecs), (input, codec) => {
        const result = decodeWith(codec, input);
        if (isLeft(result)) {
          const text = result.left.join('\n');
          const strings: string[] = [];
          JSON.stringify(input, (_key, value: unknown) => {
            if (typeof value === 'string' && value.length >= 6) strings.push(value);
            return value;
          });
          for (const value of strings) expect(text).not.toContain(value);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('any address with the required fields decodes, with a lower-case country code', () => {
    fc.assert(
      fc.property(
        fc.record({ addressLine1: fc.string(), addressLine2: fc.string(), postcode: fc.string() }),
        fc.option(fc.stringMatching(/^[A-Za-z]{2}$/), { nil: undefined }),
        (lines, countryCode) => {
          const decoded = ok(AddressModel, {
            '@class': ClassNames.AddressModel,
            ...lines,
            ...(countryCode ? { countryCode } : {}),
          });
          expect(decoded.countryCode).toBe(countryCode ? countryCode.toLowerCase() : 'uk');
        },
      ),
    );
  });
});
