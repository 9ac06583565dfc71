export * from './AuctionStatusChange';
export * from './decode';
export * from './primitives';
