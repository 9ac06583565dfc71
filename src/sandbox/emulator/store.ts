import { randomBytes } from 'node:crypto';
import { encodeKsuidMs } from '../../provider/ksuid';
import type {
  ApplicationIn,
  EndpointIn,
  EndpointPatch,
  EventTypeIn,
  EventTypeUpsertIn,
  IntegrationIn,
  IntegrationUpdate,
  MessageIn,
  ValidationIssue,
} from './inputs';

/**
 * The emulator's state: one account's Consumer Apps, event types, endpoints
 * and message log, in memory and bounded. Answers are shaped like the
 * provider's (ApplicationOut, EventTypeOut, EndpointOut, MessageOut,
 * IntegrationOut, ListResponse_*), and failures are ApiErrors with the
 * provider's bodies.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { code: string; detail: string } | { detail: ValidationIssue[] },
  ) {
    super(`provider emulator answered ${status}`);
  }

  static notFound(): ApiError {
    return new ApiError(404, { code: 'not_found', detail: 'Entity not found' });
  }

  static forbidden(detail: string): ApiError {
    return new ApiError(403, { code: 'forbidden', detail });
  }

  static conflict(detail: string): ApiError {
    return new ApiError(409, { code: 'conflict', detail });
  }

  static invalid(issues: ValidationIssue[]): ApiError {
    return new ApiError(422, { detail: issues });
  }
}

/** `prefix_` and a KSUID of the time given (default now), as the provider makes its ids. */
export const newId = (prefix: string, atMs: number = Date.now()): string =>
  `${prefix}_${encodeKsuidMs(atMs, randomBytes(15))}`;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `integsk_` and 32 random base62 characters, like the provider's integration keys. */
export const newIntegrationKey = (): string => {
  let key = 'integsk_';
  while (key.length < 40) {
    // Bytes from 248 up are skipped, so each character is equally likely.
    for (const byte of randomBytes(40)) if (byte < 248 && key.length < 40) key += BASE62[byte % 62];
  }
  return key;
};

/** A signing secret like the provider's: `whsec_` and 24 random bytes in base64. */
export const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

export interface AttemptRecord {
  id: string;
  endpointId: string;
  url: string;
  status: 'success' | 'fail';
  responseStatusCode: number;
  response: string;
  timestamp: string;
  triggerType: 'scheduled' | 'manual';
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

/** What the provider answers in place of a payload it no longer keeps (after its retention, or once deleted). */
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
  /** Secrets replaced by a rotation, still signing until the time given (ms). */
  previous: Array<{ secret: string; until: number }>;
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

/** `{ [key]: value }` when the value is set, else nothing: the provider omits unset fields. */
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

const page = <T>(items: T[], limit: number, idOf: (item: T) => string, done: boolean): ListAnswer<T> => {
  const last = items[items.length - 1];
  const first = items[0];
  return {
    data: items.slice(0, limit),
    iterator: last ? idOf(last) : null,
    prevIterator: first ? `-${idOf(first)}` : null,
    done,
  };
};

/** Lists in creation order after `iterator` (an id), `limit` at a time. */
const listAfter = <T>(
  all: T[],
  idOf: (item: T) => string,
  limit: number,
  iterator: string | undefined,
): ListAnswer<T> => {
  let start = 0;
  if (iterator) {
    const index = all.findIndex((item) => idOf(item) === iterator);
    if (index < 0)
      throw ApiError.invalid([{ loc: ['query', 'iterator'], msg: 'invalid iterator', type: 'value_error' }]);
    start = index + 1;
  }
  const items = all.slice(start, start + limit);
  return page(items, limit, idOf, start + limit >= all.length);
};

export class Store {
  private readonly apps = new Map<string, AppRecord>();
  private readonly eventTypes = new Map<string, EventTypeRecord>();
  /** Every working integration key, to the app and integration it belongs to. */
  private readonly integrationKeys = new Map<string, { appId: string; integrationId: string }>();

  /** Ids for the next Consumer Apps created, in order, before new ones are made (the sandbox's fixed one). */
  private readonly appIds: string[];

  /**
   * `clock` is the time payload retention is measured by: tests move it
   * forward to see a payload expire without waiting for it. `appIds` are
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

  /** By id, or by the uid given at creation, as the provider allows. */
  app(idOrUid: string): AppRecord {
    const app = this.apps.get(idOrUid) ?? this.findAppByUid(idOrUid);
    if (!app) throw ApiError.notFound();
    return app;
  }

  listApps(limit: number, iterator: string | undefined): ListAnswer<AppRecord> {
    return listAfter([...this.apps.values()], (app) => app.id, limit, iterator);
  }

  deleteApp(idOrUid: string): AppRecord {
    const app = this.app(idOrUid);
    this.apps.delete(app.id);
    for (const integration of app.integrations.values()) this.integrationKeys.delete(integration.key);
    return app;
  }

  // ---- Event types ---------------------------------------------------------

  createEventType(input: EventTypeIn): EventTypeRecord {
    if (this.eventTypes.has(input.name)) throw ApiError.conflict('An event type with this name already exists.');
    return this.putEventType(input.name, input).eventType;
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

  listEventTypes(limit: number, iterator: string | undefined, includeArchived: boolean): ListAnswer<EventTypeRecord> {
    const all = [...this.eventTypes.values()].filter((eventType) => includeArchived || !eventType.archived);
    return listAfter(all, (eventType) => eventType.name, limit, iterator);
  }

  // ---- Endpoints -----------------------------------------------------------

  /** The 422 for an unknown event type named under `field`, if any. */
  private checkEventTypes(eventTypes: string[] | null | undefined, field: string): void {
    const unknown = (eventTypes ?? []).findIndex((name) => !this.eventTypes.has(name));
    if (unknown >= 0) {
      throw ApiError.invalid([
        { loc: ['body', field, String(unknown)], msg: 'Unknown event type', type: 'value_error' },
      ]);
    }
  }

  createEndpoint(app: AppRecord, input: EndpointIn): EndpointRecord {
    if (input.eventTypes && input.filterTypes) throw bothFieldNames();
    const eventTypes = input.eventTypes ?? input.filterTypes ?? undefined;
    this.checkEventTypes(eventTypes, input.eventTypes ? 'eventTypes' : 'filterTypes');
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
      ...optional('eventTypes', eventTypes && eventTypes.length > 0 ? eventTypes : undefined),
      ...optional('channels', input.channels),
      ...optional('throttleRate', input.throttleRate),
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

  listEndpoints(app: AppRecord, limit: number, iterator: string | undefined): ListAnswer<EndpointRecord> {
    return listAfter([...app.endpoints.values()], (endpoint) => endpoint.id, limit, iterator);
  }

  deleteEndpoint(app: AppRecord, idOrUid: string): void {
    app.endpoints.delete(this.endpoint(app, idOrUid).id);
  }

  /** PATCH: the fields sent change, `null` clears a nullable one, the rest stay. */
  patchEndpoint(app: AppRecord, endpoint: EndpointRecord, input: EndpointPatch): EndpointRecord {
    if (input.eventTypes !== undefined && input.filterTypes !== undefined) throw bothFieldNames();
    const field = input.eventTypes !== undefined ? 'eventTypes' : 'filterTypes';
    const eventTypes = input.eventTypes !== undefined ? input.eventTypes : input.filterTypes;
    this.checkEventTypes(eventTypes, field);
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
    if (input.throttleRate !== undefined) setOrClear(endpoint, 'throttleRate', input.throttleRate);
    // An empty list means every event type, as when creating.
    if (eventTypes !== undefined) setOrClear(endpoint, 'eventTypes', eventTypes?.length ? eventTypes : null);
    if (input.channels !== undefined) setOrClear(endpoint, 'channels', input.channels?.length ? input.channels : null);
    endpoint.updatedAt = now();
    return endpoint;
  }

  /** A new secret; the old one keeps signing for the grace period. */
  rotateSecret(endpoint: EndpointRecord, key: string | undefined, graceMs: number): void {
    const at = Date.now();
    endpoint.previous = [
      ...endpoint.previous.filter((old) => old.until > at),
      { secret: endpoint.secret, until: at + graceMs },
    ];
    endpoint.secret = key ? (key.startsWith('whsec_') ? key : `whsec_${key}`) : newSecret();
    endpoint.updatedAt = new Date(at).toISOString();
  }

  /** The secrets that sign a delivery now: the current one and those still in their grace period. */
  signingSecrets(endpoint: EndpointRecord): string[] {
    const at = Date.now();
    endpoint.previous = endpoint.previous.filter((old) => old.until > at);
    return [endpoint.secret, ...endpoint.previous.map((old) => old.secret)];
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
    // The id and the timestamp tell the same time, as the provider's do.
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
   * Newest first; `iterator` is the id of the last message of the previous page. `after` and
   * `before` bound the messages' times, both exclusive, as Svix's do.
   */
  listMessages(
    app: AppRecord,
    limit: number,
    iterator: string | undefined,
    eventTypes: string[] | undefined,
    window: { after?: number | undefined; before?: number | undefined } = {},
  ): ListAnswer<MessageRecord> {
    const within = (message: MessageRecord): boolean => {
      const at = Date.parse(message.timestamp);
      return (window.after === undefined || at > window.after) && (window.before === undefined || at < window.before);
    };
    let index = app.log.length - 1;
    if (iterator) {
      const from = app.messages.get(iterator);
      if (!from) throw ApiError.invalid([{ loc: ['query', 'iterator'], msg: 'invalid iterator', type: 'value_error' }]);
      index = app.head + (from.seq - (app.log[app.head]?.seq ?? 0)) - 1;
    }
    const items: MessageRecord[] = [];
    for (; index >= app.head && items.length <= limit; index -= 1) {
      const message = app.log[index];
      if (message && (!eventTypes || eventTypes.includes(message.eventType)) && within(message)) items.push(message);
    }
    const done = items.length <= limit;
    return page(items.slice(0, limit), limit, (message) => message.id, done);
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

  listIntegrations(app: AppRecord, limit: number, iterator: string | undefined): ListAnswer<IntegrationRecord> {
    return listAfter([...app.integrations.values()], (integration) => integration.id, limit, iterator);
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
