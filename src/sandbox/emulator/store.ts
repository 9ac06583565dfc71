import { randomBytes } from 'node:crypto';
import type { ApplicationIn, EndpointIn, EventTypeIn, EventTypeUpsertIn, MessageIn, ValidationIssue } from './inputs';

/**
 * The emulator's state: one account's Consumer Apps, event types, endpoints
 * and message log, in memory and bounded. Answers are shaped like the
 * provider's (ApplicationOut, EventTypeOut, EndpointOut, MessageOut,
 * ListResponse_*), and failures are ApiErrors with the provider's bodies.
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

  static conflict(detail: string): ApiError {
    return new ApiError(409, { code: 'conflict', detail });
  }

  static invalid(issues: ValidationIssue[]): ApiError {
    return new ApiError(422, { detail: issues });
  }
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `prefix_` and 27 letters or digits, the provider's id shape. */
export const newId = (prefix: string): string => {
  const bytes = randomBytes(27);
  let id = `${prefix}_`;
  for (const byte of bytes) id += ALPHANUMERIC[byte % ALPHANUMERIC.length];
  return id;
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
}

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
}

export const DEFAULT_LIMITS: Limits = {
  maxApps: 1_000,
  maxEndpointsPerApp: 100,
  maxMessagesPerApp: 20_000,
  maxAttemptsPerMessage: 50,
  maxEventTypes: 1_000,
};

const now = (): string => new Date().toISOString();

/** `{ [key]: value }` when the value is set, else nothing: the provider omits unset fields. */
const optional = <K extends string, V>(key: K, value: V | null | undefined): Partial<Record<K, V>> => {
  const out: Partial<Record<K, V>> = {};
  if (value !== undefined && value !== null) out[key] = value;
  return out;
};

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

  constructor(private readonly limits: Limits = DEFAULT_LIMITS) {}

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
    const at = now();
    const app: AppRecord = {
      id: newId('app'),
      name: input.name,
      metadata: input.metadata ?? {},
      createdAt: at,
      updatedAt: at,
      endpoints: new Map(),
      log: [],
      head: 0,
      messages: new Map(),
      nextSeq: 0,
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

  createEndpoint(app: AppRecord, input: EndpointIn): EndpointRecord {
    if (input.eventTypes && input.filterTypes) {
      throw ApiError.invalid([
        {
          loc: ['body', 'filterTypes'],
          msg: 'eventTypes and filterTypes are the same field: send only eventTypes',
          type: 'value_error',
        },
      ]);
    }
    const eventTypes = input.eventTypes ?? input.filterTypes ?? undefined;
    const field = input.eventTypes ? 'eventTypes' : 'filterTypes';
    const unknown = (eventTypes ?? []).findIndex((name) => !this.eventTypes.has(name));
    if (unknown >= 0) {
      throw ApiError.invalid([
        { loc: ['body', field, String(unknown)], msg: 'Unknown event type', type: 'value_error' },
      ]);
    }
    const uid = input.uid ?? undefined;
    if (uid !== undefined && this.findEndpointByUid(app, uid))
      throw ApiError.conflict('An endpoint with this uid already exists.');
    if (app.endpoints.size >= this.limits.maxEndpointsPerApp) {
      throw new ApiError(403, { code: 'limit_reached', detail: 'Too many endpoints in this application.' });
    }
    const at = now();
    const endpoint: EndpointRecord = {
      id: newId('ep'),
      url: input.url,
      description: input.description ?? '',
      disabled: input.disabled ?? false,
      metadata: input.metadata ?? {},
      createdAt: at,
      updatedAt: at,
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
    if (eventId !== undefined && this.findMessageByEventId(app, eventId)) {
      throw ApiError.conflict('A message with this eventId already exists.');
    }
    const message: MessageRecord = {
      id: newId('msg'),
      seq: app.nextSeq++,
      eventType: input.eventType,
      payload: input.payload,
      timestamp: now(),
      attempts: [],
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

  /** Newest first; `iterator` is the id of the last message of the previous page. */
  listMessages(
    app: AppRecord,
    limit: number,
    iterator: string | undefined,
    eventTypes: string[] | undefined,
  ): ListAnswer<MessageRecord> {
    let index = app.log.length - 1;
    if (iterator) {
      const from = app.messages.get(iterator);
      if (!from) throw ApiError.invalid([{ loc: ['query', 'iterator'], msg: 'invalid iterator', type: 'value_error' }]);
      index = app.head + (from.seq - (app.log[app.head]?.seq ?? 0)) - 1;
    }
    const items: MessageRecord[] = [];
    for (; index >= app.head && items.length <= limit; index -= 1) {
      const message = app.log[index];
      if (message && (!eventTypes || eventTypes.includes(message.eventType))) items.push(message);
    }
    const done = items.length <= limit;
    return page(items.slice(0, limit), limit, (message) => message.id, done);
  }

  recordAttempt(message: MessageRecord, attempt: AttemptRecord): void {
    message.attempts.push(attempt);
    if (message.attempts.length > this.limits.maxAttemptsPerMessage) message.attempts.shift();
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
