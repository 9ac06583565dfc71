/** The fixed `@class` names of the published data models (§2), written once. */
export const ClassNames = {
  AuctioneerApiModel: 'com.vendor.scaffold.models.auctionapi.AuctioneerApiModel',
  UrlAttachmentApiModel: 'com.vendor.scaffold.models.auctionapi.UrlAttachmentApiModel',
  AddressModel: 'com.vendor.scaffold.models.address.AddressModel',
  CountryModel: 'com.vendor.scaffold.models.address.CountryModel',
  CurrencyModel: 'com.vendor.scaffold.models.reference.CurrencyModel',
} as const;

export type ClassName = (typeof ClassNames)[keyof typeof ClassNames];
