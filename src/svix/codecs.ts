import * as t from 'io-ts';

/**
 * The few response shapes this integration reads from Svix, decoded at
 * the edge. Each is a tolerant reader of the matching schema in Svix's
 * API contract: only the fields used here are required, extra fields pass.
 */

/** A field Svix may send as null, or leave out. */
export const nullable = <C extends t.Mixed>(codec: C) => t.union([codec, t.null, t.undefined]);

export const ApplicationOut = t.type({ id: t.string, name: t.string }, 'ApplicationOut');
export type ApplicationOut = t.TypeOf<typeof ApplicationOut>;

export const EndpointOut = t.intersection(
  [
    t.type({ id: t.string, url: t.string }),
    t.partial({
      uid: nullable(t.string),
      description: nullable(t.string),
      disabled: nullable(t.boolean),
      eventTypes: nullable(t.array(t.string)),
      // The field's name before 2026, still sent by some servers.
      filterTypes: nullable(t.array(t.string)),
      throttleRate: nullable(t.number),
      metadata: nullable(t.record(t.string, t.string)),
      updatedAt: t.string,
    }),
  ],
  'EndpointOut',
);
export type EndpointOut = t.TypeOf<typeof EndpointOut>;

export const ListResponseEndpointOut = t.intersection(
  [t.type({ data: t.array(EndpointOut), done: t.boolean }), t.partial({ iterator: nullable(t.string) })],
  'ListResponse_EndpointOut_',
);
export type ListResponseEndpointOut = t.TypeOf<typeof ListResponseEndpointOut>;

export const EndpointSecretOut = t.type({ key: t.string }, 'EndpointSecretOut');
export type EndpointSecretOut = t.TypeOf<typeof EndpointSecretOut>;

export const EventTypeOut = t.intersection(
  [
    t.type({ name: t.string }),
    t.partial({ description: nullable(t.string), archived: nullable(t.boolean), schemas: t.unknown }),
  ],
  'EventTypeOut',
);
export type EventTypeOut = t.TypeOf<typeof EventTypeOut>;

export const MessageOut = t.intersection(
  [
    t.type({ id: t.string, eventType: t.string, payload: t.unknown, timestamp: t.string }),
    t.partial({ eventId: nullable(t.string) }),
  ],
  'MessageOut',
);
export type MessageOut = t.TypeOf<typeof MessageOut>;

export const ListResponseMessageOut = t.intersection(
  [t.type({ data: t.array(MessageOut), done: t.boolean }), t.partial({ iterator: nullable(t.string) })],
  'ListResponse_MessageOut_',
);
export type ListResponseMessageOut = t.TypeOf<typeof ListResponseMessageOut>;

/** What Svix answers in place of a payload it no longer keeps (after its retention, or once deleted). */
export const ExpiredPayload = t.strict({ expired: t.literal(true) }, 'ExpiredPayload');

/** `{code, detail}`: Svix's error body for most statuses. */
export const HttpErrorOut = t.type({ code: t.string, detail: t.unknown }, 'HttpErrorOut');
export type HttpErrorOut = t.TypeOf<typeof HttpErrorOut>;

/** `{detail: [{loc, msg, type}]}`: Svix's 422 body. */
export const HTTPValidationError = t.type(
  {
    detail: t.array(t.type({ loc: t.array(t.union([t.string, t.number])), msg: t.string, type: t.string })),
  },
  'HTTPValidationError',
);
export type HTTPValidationError = t.TypeOf<typeof HTTPValidationError>;
