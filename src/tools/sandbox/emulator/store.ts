import { randomBytes } from 'node:crypto';
import { encodeKsuidMs } from '../../../svix/ksuid';
import {
  GRACE_SECONDS,
  keysSigningAt,
  listById,
  listMessages,
  rotateKeys,
  type ExpiringKey,
  type Listed,
} from '../../svix/rules';
import type {
  ApplicationIn,
  EndpointIn,
  EndpointPatch,
  EventTypeIn,
  EventTypePatch,
  EventTypeUpsertIn,
  IntegrationIn,
  IntegrationUpdate,
  MessageIn,
  ValidationIssue,
} from './inputs';

/**
 * The emulator's state: one account's Consumer Apps, event types, endpoints
 * and message log, in memory and bounded. Answers are shaped like the
 * Svix's (ApplicationOut, EventTypeOut, EndpointOut, MessageOut,
 * IntegrationOut, ListResponse_*), and failures are ApiErrors with the
 * Svix's bodies.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { code: string; detail: string } | { detail: ValidationIssue[] },
  ) {
    super(`Svix emulator answered ${status}`);
  }

  static notFound(): ApiError {
    return new ApiError(404, { code: 'not_found', detail: 'Entity not found' });
  }

  /** The server's one refusal of a key (error.rs, HttpError::permission_denied): its code has a space. */
  static forbidden(): ApiError {
    return new ApiError(403, {
      code: 'insufficient access',
      detail: 'Insufficient access for the given operation.',
    });
  }

  static conflict(detail: string, code = 'conflict'): ApiError {
    return new ApiError(409, { code, detail });
  }

  /** 400 with the server's `generic_error` unless given a code (a query value it cannot read, say). */
  static badRequest(detail: string, code = 'generic_error'): ApiError {
    return new ApiError(400, { code, detail });
  }

  static invalid(issues: ValidationIssue[]): ApiError {
    return new ApiError(422, { detail: issues });
  }
}

/** `prefix_` and a KSUID of the time given (default now), as Svix makes its ids. */
export const newId = (prefix: string, atMs: number = Date.now()): string =>
  `${prefix}_${encodeKsuidMs(atMs, randomBytes(15))}`;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `integsk_` and 32 random base62 characters, like Svix's integration keys. */
export const newIntegrationKey = (): string => {
  let key = 'integsk_';
  while (key.length < 40) {
    // Bytes from 248 up are skipped, so each character is equally likely.
    for (const byte of randomBytes(40)) if (byte < 248 && key.length < 40) key += BASE62[byte % 62];
  }
  return key;
};

/** A signing secret like Svix's: `whsec_` and 24 random bytes in base64. */
export const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

export interface AttemptRecord {
  id: string;
  endpointId: string;
  url: string;
  status: 'success' | 'fail';
  responseStatusCode: number;
  response: string;
  /** How long the endpoint took to answer (or to fail). */
  responseDurationMs?: number;
  timestamp: string;
  triggerType: 'scheduled' | 'manual';
  /** How long until the next attempt, when one is scheduled (the server's `next_attempt`; for the tests). */
  nextAttemptInMs?: number;
}

export interface MessageRecord {
  id: string;
  seq: number;
  eventType: string;
  payload: Record<string, unknown>;
  eventId?: string;
  channels?: string[];
  tags?: string[];
  timestamp: string;
  attempts: AttemptRecord[];
  /** When the payload stops being kept (ms since the epoch); it is gone earlier once deleted. */
  payloadUntil: number;
}

/** What Svix answers in place of a payload it no longer keeps (after its retention, or once deleted). */
export const EXPIRED_PAYLOAD: Readonly<Record<string, unknown>> = Object.freeze({ expired: true });

/** Payloads are kept 90 days unless the message says otherwise. */
const DEFAULT_RETENTION_DAYS = 90;
const HOUR_MS = 60 * 60 * 1000;

export interface EndpointRecord {
  id: string;
  uid?: string;
  url: string;
  description: string;
  disabled: boolean;
  eventTypes?: string[];
  channels?: string[];
  metadata: Record<string, string>;
  throttleRate?: number;
  createdAt: string;
  updatedAt: string;
  secret: string;
  /** Secrets replaced by a rotation, soonest-expiring first, each signing until it expires (ms). */
  previous: Array<ExpiringKey<string>>;
}

export interface IntegrationRecord {
  id: string;
  name: string;
  /** Left out when empty: the contract's default is []. */
  featureFlags?: string[];
  createdAt: string;
  updatedAt: string;
  /** The one key that works for it now; shown only by a rotation. */
  key: string;
}

export interface AppRecord {
  id: string;
  uid?: string;
  name: string;
  metadata: Record<string, string>;
  throttleRate?: number;
  createdAt: string;
  updatedAt: string;
  endpoints: Map<string, EndpointRecord>;
  /** Oldest first; `head` entries at the front have been evicted. */
  log: MessageRecord[];
  head: number;
  messages: Map<string, MessageRecord>;
  nextSeq: number;
  integrations: Map<string, IntegrationRecord>;
}

export interface EventTypeRecord {
  name: string;
  description: string;
  archived: boolean;
  deprecated: boolean;
  schemas?: Record<string, unknown>;
  groupName?: string;
  featureFlags?: string[];
  createdAt: string;
  updatedAt: string;
}

export interface ListAnswer<T> {
  data: T[];
  iterator: string | null;
  prevIterator: string | null;
  done: boolean;
}

export interface Limits {
  maxApps: number;
  maxEndpointsPerApp: number;
  maxMessagesPerApp: number;
  maxAttemptsPerMessage: number;
  maxEventTypes: number;
  maxIntegrationsPerApp: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxApps: 1_000,
  maxEndpointsPerApp: 100,
  maxMessagesPerApp: 20_000,
  maxAttemptsPerMessage: 50,
  maxEventTypes: 1_000,
  maxIntegrationsPerApp: 50,
};

const now = (): string => new Date().toISOString();
const iso = (ms: number): string => new Date(ms).toISOString();

/** `{ [key]: value }` when the value is set, else nothing: Svix omits unset fields. */
const optional = <K extends string, V>(key: K, value: V | null | undefined): Partial<Record<K, V>> => {
  const out: Partial<Record<K, V>> = {};
  if (value !== undefined && value !== null) out[key] = value;
  return out;
};

/** Sets a field, or removes it for `null`: unset fields are left out of answers. */
const setOrClear = <R, K extends keyof R>(record: R, key: K, value: R[K] | null): void => {
  if (value === null) delete record[key];
  else record[key] = value;
};

const bothFieldNames = (): ApiError =>
  ApiError.invalid([
    {
      loc: ['body', 'filterTypes'],
      msg: 'eventTypes and filterTypes are the same field: send only eventTypes',
      type: 'value_error',
    },
  ]);

/** A listing's page, or the 422 the server answers for its query. */
const listed = <T>(answer: Listed<T>): ListAnswer<T> => {
  if (!answer.ok) throw ApiError.invalid([{ ...answer.refusal, loc: [...answer.refusal.loc], type: 'value_error' }]);
  return answer.page;
};

/** How a listing asks for its page: `order` as given in the query, when it was. */
export interface ListQuery {
  limit: number;
  iterator?: string | undefined;
  order?: 'ascending' | 'descending' | undefined;
}

export class Store {
  private readonly apps = new Map<string, AppRecord>();
  private readonly eventTypes = new Map<string, EventTypeRecord>();
  /** Every working integration key, to the app and integration it belongs to. */
  private readonly integrationKeys = new Map<string, { appId: string; integrationId: string }>();

  /** Ids for the next Consumer Apps created, in order, before new ones are made (the sandbox's fixed one). */
  private readonly appIds: string[];

  /**
   * `clock` is the time payload retention and message listings are measured
   * by: tests move it forward to see a payload expire, or a message fall out of
   * the 90 days a listing reaches, without waiting for it. `appIds` are
   * given to the first Consumer Apps made, so a sandbox can have a fixed one.
   */
  constructor(
    private readonly limits: Limits = DEFAULT_LIMITS,
    private readonly clock: () => number = Date.now,
    appIds: readonly string[] = [],
  ) {
    this.appIds = [...appIds];
  }

  // ---- Consumer Apps -------------------------------------------------------

  createApp(input: ApplicationIn, getIfExists: boolean): { app: AppRecord; created: boolean } {
    const uid = input.uid ?? undefined;
    if (uid !== undefined) {
      const existing = this.findAppByUid(uid);
      if (existing) {
        if (getIfExists) return { app: existing, created: false };
        throw ApiError.conflict('An application with this uid already exists.');
      }
    }
    if (this.apps.size >= this.limits.maxApps)
      throw new ApiError(403, { code: 'limit_reached', detail: 'Too many applications in the sandbox.' });
    const at = Date.now();
    const app: AppRecord = {
      id: this.appIds.shift() ?? newId('app', at),
      name: input.name,
      metadata: input.metadata ?? {},
      createdAt: iso(at),
      updatedAt: iso(at),
      endpoints: new Map(),
      log: [],
      head: 0,
      messages: new Map(),
      nextSeq: 0,
      integrations: new Map(),
      ...optional('uid', uid),
      ...optional('throttleRate', input.throttleRate),
    };
    this.apps.set(app.id, app);
    return { app, created: true };
  }

  private findAppByUid(uid: string): AppRecord | undefined {
    for (const app of this.apps.values()) if (app.uid === uid) return app;
    return undefined;
  }

  /** By id, or by the uid given at creation, as Svix allows. */
  app(idOrUid: string): AppRecord {
    const app = this.apps.get(idOrUid) ?? this.findAppByUid(idOrUid);
    if (!app) throw ApiError.notFound();
    return app;
  }

  /** Oldest first unless asked otherwise (application.rs, list_applications). */
  listApps(query: ListQuery): ListAnswer<AppRecord> {
    const order = query.order ?? 'ascending';
    return listed(listById(this.apps.values(), (app) => app.id, { ...query, order, prefix: 'app_' }));
  }

  deleteApp(idOrUid: string): AppRecord {
    const app = this.app(idOrUid);
    this.apps.delete(app.id);
    for (const integration of app.integrations.values()) this.integrationKeys.delete(integration.key);
    return app;
  }

  // ---- Event types ---------------------------------------------------------

  /**
   * POST: a new event type, or an archived one un-archived and rewritten from the request (its description and
   * schemas are not kept); a live one is refused with 409 (event_type.rs, create_event_type).
   */
  createEventType(input: EventTypeIn): EventTypeRecord {
    if (this.eventTypes.get(input.name)?.archived === false)
      throw ApiError.conflict('An event_type with this name already exists', 'event_type_exists');
    return this.putEventType(input.name, input).eventType;
  }

  /** PATCH: the fields sent change; `archived: false` alone un-archives it and keeps the rest. */
  patchEventType(name: string, input: EventTypePatch): EventTypeRecord {
    const eventType = this.eventType(name);
    if (input.description !== undefined) eventType.description = input.description;
    if (input.archived !== undefined) eventType.archived = input.archived;
    if (input.deprecated !== undefined) eventType.deprecated = input.deprecated;
    if (input.schemas !== undefined) setOrClear(eventType, 'schemas', input.schemas);
    if (input.featureFlags !== undefined) setOrClear(eventType, 'featureFlags', input.featureFlags);
    eventType.updatedAt = now();
    return eventType;
  }

  /** DELETE: archived (endpoints that filter on it keep doing so), or with `expunge`, gone. */
  deleteEventType(name: string, expunge: boolean): void {
    const eventType = this.eventType(name);
    if (expunge) this.eventTypes.delete(name);
    else {
      eventType.archived = true;
      eventType.updatedAt = now();
    }
  }

  eventType(name: string): EventTypeRecord {
    const eventType = this.eventTypes.get(name);
    if (!eventType) throw ApiError.notFound();
    return eventType;
  }

  /** PUT: update it, or create it when missing. */
  putEventType(name: string, input: EventTypeUpsertIn): { eventType: EventTypeRecord; created: boolean } {
    const existing = this.eventTypes.get(name);
    if (!existing && this.eventTypes.size >= this.limits.maxEventTypes) {
      throw new ApiError(403, { code: 'limit_reached', detail: 'Too many event types in the sandbox.' });
    }
    const at = now();
    const eventType: EventTypeRecord = {
      name,
      description: input.description,
      archived: input.archived ?? false,
      deprecated: input.deprecated ?? false,
      createdAt: existing?.createdAt ?? at,
      updatedAt: at,
      ...optional('schemas', input.schemas),
      ...optional('groupName', input.groupName),
      ...optional('featureFlags', input.featureFlags),
    };
    this.eventTypes.set(name, eventType);
    return { eventType, created: !existing };
  }

  /** By name, A to Z; the iterator is a name, which need not exist (event_type.rs, list_event_types). */
  listEventTypes(query: ListQuery, includeArchived: boolean): ListAnswer<EventTypeRecord> {
    const from = query.iterator;
    const all = [...this.eventTypes.values()]
      .filter((eventType) => includeArchived || !eventType.archived)
      .filter((eventType) => from === undefined || eventType.name > from)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    const data = all.slice(0, query.limit);
    const first = data[0];
    const last = data[data.length - 1];
    return {
      data,
      iterator: last ? last.name : null,
      prevIterator: first ? `-${first.name}` : null,
      done: all.length <= query.limit,
    };
  }

  // ---- Endpoints -----------------------------------------------------------

  /**
   * The 422 for event types that are not live: an archived one counts as missing, as the server counts only those
   * not archived (endpoint/crud.rs, validate_event_types). It names `eventTypes`, whichever name was sent.
   */
  private checkEventTypes(eventTypes: string[] | null | undefined): void {
    const missing = (eventTypes ?? []).filter((name) => this.eventTypes.get(name)?.archived !== false);
    if (missing.length > 0) {
      throw ApiError.invalid([
        {
          loc: ['body', 'eventTypes'],
          msg: `The following event types don't exist: ${missing.join(', ')}`,
          type: 'value_error',
        },
      ]);
    }
  }

  createEndpoint(app: AppRecord, input: EndpointIn): EndpointRecord {
    if (input.eventTypes && input.filterTypes) throw bothFieldNames();
    const eventTypes = input.eventTypes ?? input.filterTypes ?? undefined;
    this.checkEventTypes(eventTypes);
    const uid = input.uid ?? undefined;
    if (uid !== undefined && this.findEndpointByUid(app, uid))
      throw ApiError.conflict('An endpoint with this uid already exists.');
    if (app.endpoints.size >= this.limits.maxEndpointsPerApp) {
      throw new ApiError(403, { code: 'limit_reached', detail: 'Too many endpoints in this application.' });
    }
    const at = Date.now();
    const endpoint: EndpointRecord = {
      id: newId('ep', at),
      url: input.url,
      description: input.description ?? '',
      disabled: input.disabled ?? false,
      metadata: input.metadata ?? {},
      createdAt: iso(at),
      updatedAt: iso(at),
      secret: input.secret ? (input.secret.startsWith('whsec_') ? input.secret : `whsec_${input.secret}`) : newSecret(),
      previous: [],
      ...optional('uid', uid),
      ...optional('eventTypes', eventTypes),
      ...optional('channels', input.channels),
      ...optional('throttleRate', input.throttleRate ?? input.rateLimit),
    };
    app.endpoints.set(endpoint.id, endpoint);
    return endpoint;
  }

  private findEndpointByUid(app: AppRecord, uid: string): EndpointRecord | undefined {
    for (const endpoint of app.endpoints.values()) if (endpoint.uid === uid) return endpoint;
    return undefined;
  }

  endpoint(app: AppRecord, idOrUid: string): EndpointRecord {
    const endpoint = app.endpoints.get(idOrUid) ?? this.findEndpointByUid(app, idOrUid);
    if (!endpoint) throw ApiError.notFound();
    return endpoint;
  }

  /** Newest first unless asked otherwise (endpoint/crud.rs, list_endpoints). */
  listEndpoints(app: AppRecord, query: ListQuery): ListAnswer<EndpointRecord> {
    const order = query.order ?? 'descending';
    return listed(listById(app.endpoints.values(), (endpoint) => endpoint.id, { ...query, order, prefix: 'ep_' }));
  }

  deleteEndpoint(app: AppRecord, idOrUid: string): void {
    app.endpoints.delete(this.endpoint(app, idOrUid).id);
  }

  /** PATCH: the fields sent change, `null` clears a nullable one, the rest stay. */
  patchEndpoint(app: AppRecord, endpoint: EndpointRecord, input: EndpointPatch): EndpointRecord {
    if (input.eventTypes !== undefined && input.filterTypes !== undefined) throw bothFieldNames();
    const eventTypes = input.eventTypes !== undefined ? input.eventTypes : input.filterTypes;
    this.checkEventTypes(eventTypes);
    if (input.uid != null) {
      const holder = this.findEndpointByUid(app, input.uid);
      if (holder && holder.id !== endpoint.id) throw ApiError.conflict('An endpoint with this uid already exists.');
    }
    // All checks first, so a refused patch changes nothing.
    if (input.url !== undefined) endpoint.url = input.url;
    if (input.description !== undefined) endpoint.description = input.description;
    if (input.disabled !== undefined) endpoint.disabled = input.disabled;
    if (input.metadata !== undefined) endpoint.metadata = input.metadata;
    if (input.uid !== undefined) setOrClear(endpoint, 'uid', input.uid);
    // throttleRate wins over the older rateLimit when both are sent.
    const rate = input.throttleRate !== undefined ? input.throttleRate : input.rateLimit;
    if (rate !== undefined) setOrClear(endpoint, 'throttleRate', rate);
    // null means every event type again.
    if (eventTypes !== undefined) setOrClear(endpoint, 'eventTypes', eventTypes);
    if (input.channels !== undefined) setOrClear(endpoint, 'channels', input.channels?.length ? input.channels : null);
    endpoint.updatedAt = now();
    return endpoint;
  }

  /**
   * A new secret; the old one keeps signing for the grace period (seconds, default a day). Refused with 400
   * limit_reached when more than 10 replaced secrets would still be signing (src/tools/svix/rules.ts, rotateKeys).
   */
  rotateSecret(endpoint: EndpointRecord, key: string | undefined, graceSeconds: number = GRACE_SECONDS.default): void {
    const at = Date.now();
    const rotated = rotateKeys(endpoint.secret, endpoint.previous, graceSeconds, at);
    if (!rotated.ok) {
      throw ApiError.badRequest(
        `You can only rotate a key 10 times; please wait for old keys to expire. Your next key expires at ${new Date(rotated.nextExpiry).toISOString()}.`,
        rotated.code,
      );
    }
    endpoint.previous = rotated.old;
    endpoint.secret = key ? (key.startsWith('whsec_') ? key : `whsec_${key}`) : newSecret();
    endpoint.updatedAt = new Date(at).toISOString();
  }

  /** The secrets that sign a delivery now: the current one and those still in their grace period. */
  signingSecrets(endpoint: EndpointRecord): string[] {
    const at = Date.now();
    endpoint.previous = endpoint.previous.filter((old) => old.expiresAt > at);
    return keysSigningAt(endpoint.secret, endpoint.previous, at);
  }

  // ---- Messages ------------------------------------------------------------

  createMessage(app: AppRecord, input: MessageIn): MessageRecord {
    const eventId = input.eventId ?? undefined;
    const days = input.payloadRetentionPeriod ?? undefined;
    const hours = input.payloadRetentionHours ?? undefined;
    if (days !== undefined && hours !== undefined) {
      throw ApiError.invalid([
        {
          loc: ['body', 'payloadRetentionHours'],
          msg: 'payloadRetentionPeriod and payloadRetentionHours are mutually exclusive',
          type: 'value_error',
        },
      ]);
    }
    if (eventId !== undefined && this.findMessageByEventId(app, eventId)) {
      throw ApiError.conflict('A message with this eventId already exists.');
    }
    // The id and the timestamp tell the same time, as Svix's do.
    const at = Date.now();
    const message: MessageRecord = {
      id: newId('msg', at),
      seq: app.nextSeq++,
      eventType: input.eventType,
      payload: input.payload,
      timestamp: iso(at),
      attempts: [],
      payloadUntil: this.clock() + (hours ?? (days ?? DEFAULT_RETENTION_DAYS) * 24) * HOUR_MS,
      ...optional('eventId', eventId),
      ...optional('channels', input.channels),
      ...optional('tags', input.tags),
    };
    app.log.push(message);
    app.messages.set(message.id, message);
    this.evict(app);
    return message;
  }

  private evict(app: AppRecord): void {
    while (app.log.length - app.head > this.limits.maxMessagesPerApp) {
      const oldest = app.log[app.head];
      if (oldest) app.messages.delete(oldest.id);
      app.head += 1;
    }
    if (app.head > 1_024 && app.head * 2 > app.log.length) {
      app.log = app.log.slice(app.head);
      app.head = 0;
    }
  }

  private findMessageByEventId(app: AppRecord, eventId: string): MessageRecord | undefined {
    for (let index = app.log.length - 1; index >= app.head; index -= 1) {
      const message = app.log[index];
      if (message?.eventId === eventId) return message;
    }
    return undefined;
  }

  /** By id, or by the eventId given at creation. */
  message(app: AppRecord, idOrEventId: string): MessageRecord {
    const message = app.messages.get(idOrEventId) ?? this.findMessageByEventId(app, idOrEventId);
    if (!message) throw ApiError.notFound();
    return message;
  }

  /**
   * A page of the app's messages of `eventTypes` (all when undefined), as the server lists them: bounds and order on
   * the ids at 4 ms, 90 days when unbounded, the iterator an id cursor (src/tools/svix/rules.ts, listMessages), measured
   * by the store's clock.
   */
  listMessages(
    app: AppRecord,
    query: ListQuery,
    eventTypes: string[] | undefined,
    window: { after?: number | undefined; before?: number | undefined } = {},
  ): ListAnswer<MessageRecord> {
    const kept = (message: MessageRecord) => !eventTypes || eventTypes.includes(message.eventType);
    const messages = app.log.slice(app.head).filter(kept);
    return listed(listMessages(messages, (message) => message.id, { ...query, ...window, now: this.clock() }));
  }

  /** Whether the message's payload is still kept (a resend of one that is not is refused). */
  hasPayload(message: MessageRecord): boolean {
    return this.clock() < message.payloadUntil;
  }

  /** The payload, while it is kept; `{"expired": true}` after its retention or once deleted. */
  payloadOf(message: MessageRecord): Readonly<Record<string, unknown>> {
    return this.clock() < message.payloadUntil ? message.payload : EXPIRED_PAYLOAD;
  }

  /** Deletes a message's payload: from now on it reads as expired, and it is not delivered again. */
  expungeContent(message: MessageRecord): void {
    message.payload = {};
    message.payloadUntil = Number.NEGATIVE_INFINITY;
  }

  /**
   * A page of the attempts made to an endpoint (`GET …/attempt/endpoint/{id}`), each with its message's id, newest
   * first by id, `status` (success or fail) keeping only those: the open-source server's `list_attempts_by_endpoint`
   * without its 90 days, time bounds and other filters. Only the attempts each message still keeps are listed.
   */
  listAttempts(
    app: AppRecord,
    endpoint: EndpointRecord,
    query: ListQuery,
    status: AttemptRecord['status'] | undefined,
  ): ListAnswer<{ attempt: AttemptRecord; msgId: string }> {
    const made: Array<{ attempt: AttemptRecord; msgId: string }> = [];
    for (const message of app.messages.values())
      for (const attempt of message.attempts)
        if (attempt.endpointId === endpoint.id && (status === undefined || attempt.status === status))
          made.push({ attempt, msgId: message.id });
    // Always newest first: the route takes no order (PaginationDescending).
    return listed(listById(made, (each) => each.attempt.id, { ...query, order: 'descending', prefix: 'atmpt_' }));
  }

  recordAttempt(message: MessageRecord, attempt: AttemptRecord): void {
    message.attempts.push(attempt);
    if (message.attempts.length > this.limits.maxAttemptsPerMessage) message.attempts.shift();
  }

  // ---- Integrations --------------------------------------------------------

  createIntegration(app: AppRecord, input: IntegrationIn): IntegrationRecord {
    if (app.integrations.size >= this.limits.maxIntegrationsPerApp) {
      throw new ApiError(403, { code: 'limit_reached', detail: 'Too many integrations in this application.' });
    }
    const at = Date.now();
    // It gets a first key at once; nobody sees it until a rotation makes a new one.
    const integration: IntegrationRecord = {
      id: newId('integ', at),
      name: input.name,
      createdAt: iso(at),
      updatedAt: iso(at),
      key: newIntegrationKey(),
      ...optional('featureFlags', input.featureFlags),
    };
    app.integrations.set(integration.id, integration);
    this.integrationKeys.set(integration.key, { appId: app.id, integrationId: integration.id });
    return integration;
  }

  integration(app: AppRecord, id: string): IntegrationRecord {
    const integration = app.integrations.get(id);
    if (!integration) throw ApiError.notFound();
    return integration;
  }

  /** Oldest first (the open-source server has no integrations: Svix Cloud's order is not known). */
  listIntegrations(app: AppRecord, query: ListQuery): ListAnswer<IntegrationRecord> {
    const order = query.order ?? 'ascending';
    return listed(
      listById(app.integrations.values(), (integration) => integration.id, { ...query, order, prefix: 'integ_' }),
    );
  }

  /** PUT: the name and the flags are replaced; flags left out are cleared. */
  updateIntegration(integration: IntegrationRecord, input: IntegrationUpdate): IntegrationRecord {
    integration.name = input.name;
    setOrClear(integration, 'featureFlags', input.featureFlags ?? null);
    integration.updatedAt = now();
    return integration;
  }

  deleteIntegration(app: AppRecord, integration: IntegrationRecord): void {
    app.integrations.delete(integration.id);
    this.integrationKeys.delete(integration.key);
  }

  /** A new key for the integration; the old one stops working at once. */
  rotateIntegrationKey(app: AppRecord, integration: IntegrationRecord): string {
    this.integrationKeys.delete(integration.key);
    integration.key = newIntegrationKey();
    this.integrationKeys.set(integration.key, { appId: app.id, integrationId: integration.id });
    return integration.key;
  }

  integrationKeyCount(app: AppRecord): number {
    let count = 0;
    for (const owner of this.integrationKeys.values()) if (owner.appId === app.id) count += 1;
    return count;
  }

  /** The app an integration key belongs to, or undefined when no integration has it now. */
  appOfIntegrationKey(key: string): string | undefined {
    return this.integrationKeys.get(key)?.appId;
  }

  counts(): { apps: number; endpoints: number; messages: number; eventTypes: number } {
    let endpoints = 0;
    let messages = 0;
    for (const app of this.apps.values()) {
      endpoints += app.endpoints.size;
      messages += app.messages.size;
    }
    return { apps: this.apps.size, endpoints, messages, eventTypes: this.eventTypes.size };
  }
}
