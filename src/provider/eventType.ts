/**
 * The AUCTION_STATUS_CHANGE event type exactly as §4.2 of the auction
 * service's published interface registers it (schema version "1").
 */
export const EVENT_TYPE_NAME = 'AUCTION_STATUS_CHANGE';
export const SCHEMA_VERSION = '1';

export const auctionStatusChangeEventType = {
  name: EVENT_TYPE_NAME,
  description: 'An auction was created, or its status changed, in the auction back-end.',
  archived: false,
  schemas: {
    [SCHEMA_VERSION]: {
      description:
        'Sent when an auction is created (with its initial status) and whenever its status changes (with the new status).',
      title: 'Auction Status Change',
      type: 'object',
      properties: {
        auctioneerUuid: { type: 'string', description: 'UUID of the auctioneer the auction belongs to.' },
        auctionUuid: { type: 'string', description: 'UUID of the auction.' },
        status: { type: 'string', description: "The auction's new status (its registration status)." },
      },
      required: ['auctionUuid', 'auctioneerUuid', 'status'],
    },
  },
} as const;
