import * as t from 'io-ts';
import { AddressModel } from './AddressModel';
import { AuctioneerApiModel } from './AuctioneerApiModel';
import { ClassNames } from './classNames';
import { CountryModel } from './CountryModel';
import { CurrencyModel } from './CurrencyModel';
import { UrlAttachmentApiModel } from './UrlAttachmentApiModel';

export type ApiModel = AuctioneerApiModel | UrlAttachmentApiModel | AddressModel | CountryModel | CurrencyModel;

const byClass: Record<string, t.Decoder<unknown, ApiModel>> = {
  [ClassNames.AuctioneerApiModel]: AuctioneerApiModel,
  [ClassNames.UrlAttachmentApiModel]: UrlAttachmentApiModel,
  [ClassNames.AddressModel]: AddressModel,
  [ClassNames.CountryModel]: CountryModel,
  [ClassNames.CurrencyModel]: CurrencyModel,
};

const classOf = (input: unknown): unknown =>
  typeof input === 'object' && input !== null && Object.prototype.hasOwnProperty.call(input, '@class')
    ? Object.getOwnPropertyDescriptor(input, '@class')?.value
    : undefined;

/**
 * Any published model, chosen by its `@class` first, so a failure names the
 * model it was meant to be (`AddressModel.postcode: …`), not every candidate.
 */
export const ApiModel = new t.Type<ApiModel, unknown, unknown>(
  'ApiModel',
  (input): input is ApiModel => {
    const name = classOf(input);
    const codec =
      typeof name === 'string' && Object.prototype.hasOwnProperty.call(byClass, name) ? byClass[name] : undefined;
    return codec !== undefined && 'is' in codec && typeof codec.is === 'function' && Boolean(codec.is(input));
  },
  (input, context) => {
    const name = classOf(input);
    const codec =
      typeof name === 'string' && Object.prototype.hasOwnProperty.call(byClass, name) ? byClass[name] : undefined;
    if (!codec) {
      return t.failure(
        name,
        [...context, { key: '@class', type: t.string, actual: name }],
        'expected one of the published model names (com.vendor.scaffold.…)',
      );
    }
    return codec.decode(input);
  },
  t.identity,
);
