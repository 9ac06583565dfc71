import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { errorPath } from '../../../models/decode';
import { UID_PATTERN } from '../../../svix/ids';
import { isGraceSeconds, isThrottleRate } from '../../svix/rules';

/**
 * Request bodies the emulator accepts, decoded at its edge with the
 * Svix's rules (field names, required fields and patterns from the API
 * contract's ApplicationIn, EventTypeIn, EventTypeUpsertIn, EndpointIn,
 * EndpointPatch, EndpointSecretRotateIn, MessageIn, IntegrationIn and
 * IntegrationUpdate). Unknown fields are ignored, as Svix does.
 */

const nullable = <C extends t.Mixed>(codec: C) => t.union([codec, t.null, t.undefined]);

const matching = (pattern: RegExp, name: string) =>
  new t.Type<string, string, unknown>(
    name,
    (value): value is string => typeof value === 'string' && pattern.test(value),
    (value, context) =>
      typeof value === 'string' && pattern.test(value) ? t.success(value) : t.failure(value, context),
    t.identity,
  );

export const Uid = matching(UID_PATTERN, 'Uid');
export const EventTypeName = matching(/^[a-zA-Z0-9\-_.]{1,256}$/, 'EventTypeName');
const NonEmpty = matching(/\S/, 'NonEmptyString');
const Metadata = t.record(t.string, t.string, 'Metadata');

export const ApplicationIn = t.intersection(
  [
    t.type({ name: NonEmpty }),
    t.partial({ uid: nullable(Uid), metadata: nullable(Metadata), throttleRate: nullable(t.number) }),
  ],
  'ApplicationIn',
);
export type ApplicationIn = t.TypeOf<typeof ApplicationIn>;

const eventTypeFields = {
  archived: nullable(t.boolean),
  deprecated: nullable(t.boolean),
  schemas: nullable(t.UnknownRecord),
  groupName: nullable(t.string),
  featureFlags: nullable(t.array(t.string)),
};

export const EventTypeIn = t.intersection(
  [t.type({ name: EventTypeName, description: t.string }), t.partial(eventTypeFields)],
  'EventTypeIn',
);
export type EventTypeIn = t.TypeOf<typeof EventTypeIn>;

/** EventTypePatch: only the fields sent change (`archived: false` alone un-archives it, keeping the rest). */
export const EventTypePatch = t.partial(
  {
    description: t.string,
    archived: t.boolean,
    deprecated: t.boolean,
    schemas: nullable(t.UnknownRecord),
    featureFlags: nullable(t.array(t.string)),
  },
  'EventTypePatch',
);
export type EventTypePatch = t.TypeOf<typeof EventTypePatch>;

export const EventTypeUpsertIn = t.intersection(
  [t.type({ description: t.string }), t.partial(eventTypeFields)],
  'EventTypeUpsertIn',
);
export type EventTypeUpsertIn = t.TypeOf<typeof EventTypeUpsertIn>;

const HttpUrl = matching(/^https?:\/\/[^\s/?#]+[^\s]*$/, 'Url');

const satisfying = <A>(is: (value: unknown) => value is A, name: string) =>
  new t.Type<A, A, unknown>(
    name,
    is,
    (value, context) => (is(value) ? t.success(value) : t.failure(value, context)),
    t.identity,
  );

/** A whole number of messages a second from 1 to 65,535, as the server takes `throttleRate` (and `rateLimit`). */
const ThrottleRate = satisfying(isThrottleRate, 'ThrottleRate');

/** At least one event type: the server refuses `eventTypes: []` (to listen to every type, leave it out or null). */
const EventTypeNames = satisfying(
  (value: unknown): value is string[] =>
    Array.isArray(value) && value.length > 0 && value.every((name) => EventTypeName.is(name)),
  'EventTypeNames',
);
export const SecretText = matching(/^(whsec_)?[a-zA-Z0-9+/=]{32,100}$/, 'EndpointSecret');

export const EndpointIn = t.intersection(
  [
    t.type({ url: HttpUrl }),
    t.partial({
      uid: nullable(Uid),
      description: nullable(t.string),
      disabled: nullable(t.boolean),
      eventTypes: nullable(EventTypeNames),
      // The field's name before 2026; Svix still accepts it, but not both.
      filterTypes: nullable(EventTypeNames),
      channels: nullable(t.array(t.string)),
      secret: nullable(SecretText),
      metadata: nullable(Metadata),
      throttleRate: nullable(ThrottleRate),
      // The older name of throttleRate, still taken; throttleRate wins when both are sent.
      rateLimit: nullable(ThrottleRate),
    }),
  ],
  'EndpointIn',
);
export type EndpointIn = t.TypeOf<typeof EndpointIn>;

/** A whole number from `min` to `max`, as the contract bounds its integer fields. */
const intFrom = (min: number, max: number, name: string) => {
  const isIn = (value: unknown): value is number =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
  return new t.Type<number, number, unknown>(
    name,
    isIn,
    (value, context) => (isIn(value) ? t.success(value) : t.failure(value, context)),
    t.identity,
  );
};

/**
 * EndpointPatch: only the fields sent change. `null` clears a nullable field
 * (uid, throttleRate, rateLimit, eventTypes, channels); the others may not be null.
 */
export const EndpointPatch = t.partial(
  {
    url: HttpUrl,
    description: t.string,
    disabled: t.boolean,
    metadata: Metadata,
    uid: nullable(Uid),
    throttleRate: nullable(ThrottleRate),
    rateLimit: nullable(ThrottleRate),
    eventTypes: nullable(EventTypeNames),
    // The older name, as for EndpointIn; not both.
    filterTypes: nullable(EventTypeNames),
    channels: nullable(t.array(t.string)),
  },
  'EndpointPatch',
);
export type EndpointPatch = t.TypeOf<typeof EndpointPatch>;

/** How long a replaced secret keeps signing: 0 (it stops at once) to 7 days, in whole seconds. */
const GraceSeconds = satisfying(isGraceSeconds, 'GracePeriodSeconds');

export const EndpointSecretRotateIn = t.partial(
  { key: nullable(SecretText), gracePeriodSeconds: nullable(GraceSeconds) },
  'EndpointSecretRotateIn',
);
export type EndpointSecretRotateIn = t.TypeOf<typeof EndpointSecretRotateIn>;

const DateTime = matching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/, 'DateTime');

/** RecoverIn: resend what failed since then (until now, unless told). */
export const RecoverIn = t.intersection(
  [t.type({ since: DateTime }), t.partial({ until: nullable(DateTime) })],
  'RecoverIn',
);
export type RecoverIn = t.TypeOf<typeof RecoverIn>;

export const MessageIn = t.intersection(
  [
    t.type({ eventType: EventTypeName, payload: t.UnknownRecord }),
    t.partial({
      eventId: nullable(Uid),
      channels: nullable(t.array(t.string)),
      tags: nullable(t.array(t.string)),
      /** Days the payload is kept (1 to 90, 90 by default); not together with payloadRetentionHours. */
      payloadRetentionPeriod: nullable(intFrom(1, 90, 'PayloadRetentionDays')),
      /** Hours the payload is kept (1 to 2160). */
      payloadRetentionHours: nullable(intFrom(1, 2160, 'PayloadRetentionHours')),
    }),
  ],
  'MessageIn',
);
export type MessageIn = t.TypeOf<typeof MessageIn>;

const isFeatureFlags = (value: unknown): value is string[] =>
  Array.isArray(value) &&
  value.length >= 1 &&
  value.length <= 25 &&
  value.every((flag) => EventTypeName.is(flag)) &&
  new Set(value).size === value.length;

/** 1 to 25 distinct names of up to 256 of `a-zA-Z0-9-_.`, as the contract says. */
const FeatureFlags = new t.Type<string[], string[], unknown>(
  'FeatureFlags',
  isFeatureFlags,
  (value, context) => (isFeatureFlags(value) ? t.success(value) : t.failure(value, context)),
  t.identity,
);

export const IntegrationIn = t.intersection(
  [t.type({ name: NonEmpty }), t.partial({ featureFlags: nullable(FeatureFlags) })],
  'IntegrationIn',
);
export type IntegrationIn = t.TypeOf<typeof IntegrationIn>;

/** A PUT: the whole integration, so flags left out are cleared. */
export const IntegrationUpdate = t.intersection(
  [t.type({ name: NonEmpty }), t.partial({ featureFlags: nullable(FeatureFlags) })],
  'IntegrationUpdate',
);
export type IntegrationUpdate = t.TypeOf<typeof IntegrationUpdate>;

/** One entry of a 422 answer, `{loc, msg, type}`, as Svix words it. */
export interface ValidationIssue {
  /** Where the problem is: `body` or `query`, then field names (list positions as text, as Svix's schema says). */
  loc: string[];
  msg: string;
  type: string;
}

const issueOf = (error: t.ValidationError): ValidationIssue => {
  const loc = ['body', ...errorPath(error)];
  return error.value === undefined
    ? { loc, msg: 'field required', type: 'value_error.missing' }
    : { loc, msg: `not a valid ${error.context[error.context.length - 1]?.type.name ?? 'value'}`, type: 'type_error' };
};

export type Decoded<A> = { ok: true; value: A } | { ok: false; issues: ValidationIssue[] };

export const decodeBody = <A>(codec: t.Decoder<unknown, A>, body: unknown): Decoded<A> => {
  const decoded = codec.decode(body);
  if (isRight(decoded)) return { ok: true, value: decoded.right };
  const seen = new Set<string>();
  const issues = decoded.left.map(issueOf).filter((issue) => {
    const key = issue.loc.join('.');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { ok: false, issues };
};
