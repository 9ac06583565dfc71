import type * as t from 'io-ts';
import { isDeepStrictEqual } from 'node:util';
import { EventTypeOut } from './codecs';

/**
 * The AUCTION_STATUS_CHANGE event type exactly as §4.2 of the auction
 * service's published interface registers it (schema version "1").
 */
export const EVENT_TYPE_NAME = 'AUCTION_STATUS_CHANGE';

/** What each call on the event type does, as a phrase in the messages a person reads. */
export const EVENT_TYPE_ACTIONS = {
  read: `reading the ${EVENT_TYPE_NAME} event type`,
  register: `registering the ${EVENT_TYPE_NAME} event type`,
  update: `updating the ${EVENT_TYPE_NAME} event type to the published schema`,
  unarchive: `un-archiving the ${EVENT_TYPE_NAME} event type`,
};
export const SCHEMA_VERSION = '1';

export const auctionStatusChangeEventType = {
  name: EVENT_TYPE_NAME,
  description: 'An auction was created, or its status changed, in the auction service.',
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

/**
 * Making sure AUCTION_STATUS_CHANGE is registered, for the trigger (through
 * z.request) and for the set-up (through fetch) alike: each passes its own
 * way of calling Svix, and decides at the call site what a key that
 * may not manage event types (403) means for it.
 */
export interface SvixTransport {
  call(call: {
    method: 'GET' | 'POST' | 'PUT' | 'PATCH';
    path: string;
    body?: object;
    action: string;
    accept?: readonly number[];
  }): Promise<{ status: number; body: unknown }>;
  decode<A>(codec: t.Decoder<unknown, A>, body: unknown, action: string): A;
}

/**
 * What became of the event type: `unarchived` when it was archived and is live again; `not-permitted` when it is
 * missing (or unreadable) and the key may not register it; `archived-not-permitted` when it is archived and the key
 * may not un-archive it. Svix counts an archived type as missing for an endpoint's eventTypes (a 422), yet reads it
 * back (200, `archived: true`): see docs/svix-fidelity.md.
 */
export type EventTypeState =
  'created' | 'updated' | 'unarchived' | 'unchanged' | 'not-permitted' | 'archived-not-permitted';

export interface EventTypePolicy {
  /** Bring an existing event type's schema back to the published one (the set-up does; a Zap never changes it). */
  updateSchema: boolean;
}

const EVENT_TYPE_PATH = `/api/v1/event-type/${EVENT_TYPE_NAME}`;

export const ensureEventType = async (transport: SvixTransport, policy: EventTypePolicy): Promise<EventTypeState> => {
  const action = EVENT_TYPE_ACTIONS.read;
  const read = await transport.call({ method: 'GET', path: EVENT_TYPE_PATH, action, accept: [403, 404] });
  if (read.status === 403) return 'not-permitted';
  if (read.status === 404) {
    const created = await transport.call({
      method: 'POST',
      path: '/api/v1/event-type',
      body: auctionStatusChangeEventType,
      action: EVENT_TYPE_ACTIONS.register,
      accept: [403, 409],
    });
    if (created.status === 403) return 'not-permitted';
    // 409: registered by someone else since it was read.
    return created.status === 409 ? 'unchanged' : 'created';
  }
  const existing = transport.decode(EventTypeOut, read.body, action);
  const archived = existing.archived === true;
  if (!policy.updateSchema) {
    if (!archived) return 'unchanged';
    // Only `archived` changes: the description and schemas its owner gave it stay.
    const unarchived = await transport.call({
      method: 'PATCH',
      path: EVENT_TYPE_PATH,
      body: { archived: false },
      action: EVENT_TYPE_ACTIONS.unarchive,
      accept: [403],
    });
    return unarchived.status === 403 ? 'archived-not-permitted' : 'unarchived';
  }
  const schemas = typeof existing.schemas === 'object' && existing.schemas !== null ? existing.schemas : {};
  const published = auctionStatusChangeEventType.schemas[SCHEMA_VERSION];
  const current: unknown = Object.entries(schemas).find(([version]) => version === SCHEMA_VERSION)?.[1];
  if (!archived && isDeepStrictEqual(current, published)) return 'unchanged';
  const updated = await transport.call({
    method: 'PUT',
    path: EVENT_TYPE_PATH,
    body: {
      // The description may be customised (§4.2): keep whatever is there.
      description: existing.description || auctionStatusChangeEventType.description,
      archived: false,
      schemas: { ...schemas, [SCHEMA_VERSION]: published },
    },
    action: EVENT_TYPE_ACTIONS.update,
    accept: [403],
  });
  if (updated.status === 403) return archived ? 'archived-not-permitted' : 'not-permitted';
  return 'updated';
};
