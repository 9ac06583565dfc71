import { ClassNames } from '../../src/models';
import {
  addressOutputFields,
  addressSample,
  auctioneerOutputFields,
  auctioneerSample,
  countryOutputFields,
  countrySample,
  currencyOutputFields,
  currencySample,
  mapAddress,
  urlAttachmentOutputFields,
  urlAttachmentSample,
} from '../../src/fields/models';
import { mapFields, nested, outputFieldsOf, type FieldSpec } from '../../src/fields/zapFields';

const TITLE_CASE = /^(?:[A-Z0-9][A-Za-z0-9]*|ID|URL|or)(?: (?:[A-Z0-9][A-Za-z0-9]*|ID|URL|or))*$/;

describe('Zap fields for the published models', () => {
  it.each([
    ['auctioneer', auctioneerSample, auctioneerOutputFields],
    ['url attachment', urlAttachmentSample, urlAttachmentOutputFields],
    ['address', addressSample, addressOutputFields],
    ['country', countrySample, countryOutputFields],
    ['currency', currencySample, currencyOutputFields],
  ])('%s: sample and outputFields agree, every field labelled in title case', (_name, sample, outputFields) => {
    expect(Object.keys(sample)).toEqual(outputFields.map((field) => field.key));
    for (const field of outputFields) expect(field.label).toMatch(TITLE_CASE);
  });

  it('keeps every key present, null where the model has no value', () => {
    const fields = mapAddress({
      '@class': ClassNames.AddressModel,
      addressLine1: 'a',
      addressLine2: 'b',
      postcode: 'p',
      countryCode: 'uk',
    });
    expect(fields.city).toBeNull();
    expect(fields.addressLine3).toBeNull();
    expect(fields.countryCode).toBe('uk');
    expect(Object.keys(fields)).toEqual(addressOutputFields.map((field) => field.key));
  });

  it('flattens nested structures with __ and prefixed labels', () => {
    interface Lot {
      title: string;
      image?: { url: string };
    }
    const image: FieldSpec<{ url: string }>[] = [{ key: 'url', label: 'URL', type: 'string', read: (m) => m.url }];
    const lot: FieldSpec<Lot>[] = [
      { key: 'title', label: 'Title', type: 'string', read: (m) => m.title },
      ...nested('image', 'Image', image, (m: Lot) => m.image),
    ];
    expect(mapFields(lot, { title: 'Clock', image: { url: 'u' } })).toEqual({ title: 'Clock', image__url: 'u' });
    expect(mapFields(lot, { title: 'Clock' })).toEqual({ title: 'Clock', image__url: null });
    expect(outputFieldsOf(lot)).toEqual([
      { key: 'title', label: 'Title', type: 'string' },
      { key: 'image__url', label: 'Image URL', type: 'string' },
    ]);
  });
});
