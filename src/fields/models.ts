import { isRight } from 'fp-ts/Either';
import type { AddressModel, AuctioneerApiModel, CountryModel, CurrencyModel, UrlAttachmentApiModel } from '../models';
import { ApiModel, ClassNames } from '../models';
import type { ModelMapper } from './extraFields';
import { mapFields, outputFieldsOf, type FieldSpec, type ZapFields } from './zapFields';

/**
 * Zap fields for each published model (§2). Ids are LONG values kept as text,
 * so they are string fields. `@class` is not a Zap field: it only says which
 * model the data is.
 */

const auctioneerFieldSpecs: FieldSpec<AuctioneerApiModel>[] = [
  { key: 'id', label: 'ID', type: 'string', read: (m) => m.id },
  { key: 'name', label: 'Name', type: 'string', read: (m) => m.name },
];

const urlAttachmentFieldSpecs: FieldSpec<UrlAttachmentApiModel>[] = [
  { key: 'url', label: 'URL or Video ID', type: 'string', read: (m) => m.url },
  { key: 'label', label: 'Label', type: 'string', read: (m) => m.label },
];

const addressFieldSpecs: FieldSpec<AddressModel>[] = [
  { key: 'id', label: 'ID', type: 'string', read: (m) => m.id },
  { key: 'addressLine1', label: 'Address Line 1', type: 'string', read: (m) => m.addressLine1 },
  { key: 'addressLine2', label: 'Address Line 2', type: 'string', read: (m) => m.addressLine2 },
  { key: 'addressLine3', label: 'Address Line 3', type: 'string', read: (m) => m.addressLine3 },
  { key: 'addressLine4', label: 'Address Line 4', type: 'string', read: (m) => m.addressLine4 },
  { key: 'city', label: 'City', type: 'string', read: (m) => m.city },
  { key: 'county', label: 'County', type: 'string', read: (m) => m.county },
  { key: 'postcode', label: 'Postcode', type: 'string', read: (m) => m.postcode },
  { key: 'countryCode', label: 'Country Code', type: 'string', read: (m) => m.countryCode },
  { key: 'latitude', label: 'Latitude', type: 'string', read: (m) => m.latitude },
  { key: 'longitude', label: 'Longitude', type: 'string', read: (m) => m.longitude },
];

const countryFieldSpecs: FieldSpec<CountryModel>[] = [
  { key: 'id', label: 'ID', type: 'string', read: (m) => m.id },
  { key: 'code', label: 'Code', type: 'string', read: (m) => m.code },
  { key: 'name', label: 'Name', type: 'string', read: (m) => m.name },
];

const currencyFieldSpecs: FieldSpec<CurrencyModel>[] = [
  { key: 'id', label: 'ID', type: 'string', read: (m) => m.id },
  { key: 'code', label: 'Code', type: 'string', read: (m) => m.code },
  { key: 'name', label: 'Name', type: 'string', read: (m) => m.name },
];

const mapAuctioneer = (m: AuctioneerApiModel): ZapFields => mapFields(auctioneerFieldSpecs, m);
const mapUrlAttachment = (m: UrlAttachmentApiModel): ZapFields => mapFields(urlAttachmentFieldSpecs, m);
export const mapAddress = (m: AddressModel): ZapFields => mapFields(addressFieldSpecs, m);
const mapCountry = (m: CountryModel): ZapFields => mapFields(countryFieldSpecs, m);
const mapCurrency = (m: CurrencyModel): ZapFields => mapFields(currencyFieldSpecs, m);

export const auctioneerOutputFields = outputFieldsOf(auctioneerFieldSpecs);
export const urlAttachmentOutputFields = outputFieldsOf(urlAttachmentFieldSpecs);
export const addressOutputFields = outputFieldsOf(addressFieldSpecs);
export const countryOutputFields = outputFieldsOf(countryFieldSpecs);
export const currencyOutputFields = outputFieldsOf(currencyFieldSpecs);

/** Typed example models, and the Zap fields they give: what a Zap step would show. */
const sampleModels = {
  auctioneer: { '@class': ClassNames.AuctioneerApiModel, id: '1042', name: 'Harbour Street Auctions' },
  urlAttachment: {
    '@class': ClassNames.UrlAttachmentApiModel,
    url: 'https://images.example.com/lot-12.jpg',
    label: 'Lot 12',
  },
  address: {
    '@class': ClassNames.AddressModel,
    id: '77',
    addressLine1: '12 Harbour Street',
    addressLine2: 'Old Town',
    city: 'Whitby',
    postcode: 'YO21 3PU',
    countryCode: 'uk',
    latitude: '54.4858',
    longitude: '-0.6206',
  },
  country: { '@class': ClassNames.CountryModel, code: 'fr', name: 'France' },
  currency: { '@class': ClassNames.CurrencyModel, code: 'GBP', name: 'Pound Sterling' },
} satisfies {
  auctioneer: AuctioneerApiModel;
  urlAttachment: UrlAttachmentApiModel;
  address: AddressModel;
  country: CountryModel;
  currency: CurrencyModel;
};

export const auctioneerSample = mapAuctioneer(sampleModels.auctioneer);
export const urlAttachmentSample = mapUrlAttachment(sampleModels.urlAttachment);
export const addressSample = mapAddress(sampleModels.address);
export const countrySample = mapCountry(sampleModels.country);
export const currencySample = mapCurrency(sampleModels.currency);

const labelsOf = (fields: readonly { key: string; label: string }[]): Record<string, string> =>
  Object.fromEntries(fields.map((field) => [field.key, field.label]));

/**
 * A structure's Zap fields and their labels, when its `@class` names a
 * published model and it decodes with that model's codec (normalised, with
 * its defaults); undefined otherwise.
 */
export const mapPublishedModel: ModelMapper = (value) => {
  const decoded = ApiModel.decode(value);
  if (!isRight(decoded)) return undefined;
  const model = decoded.right;
  switch (model['@class']) {
    case ClassNames.AuctioneerApiModel:
      return { values: mapAuctioneer(model), labels: labelsOf(auctioneerOutputFields) };
    case ClassNames.UrlAttachmentApiModel:
      return { values: mapUrlAttachment(model), labels: labelsOf(urlAttachmentOutputFields) };
    case ClassNames.AddressModel:
      return { values: mapAddress(model), labels: labelsOf(addressOutputFields) };
    case ClassNames.CountryModel:
      return { values: mapCountry(model), labels: labelsOf(countryOutputFields) };
    case ClassNames.CurrencyModel:
      return { values: mapCurrency(model), labels: labelsOf(currencyOutputFields) };
  }
};
