import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type * as t from 'io-ts';
import {
  ApplicationIn,
  decodeBody,
  EndpointIn,
  EndpointPatch,
  EndpointSecretRotateIn,
  EventTypeIn,
  EventTypeName,
  EventTypePatch,
  EventTypeUpsertIn,
  IntegrationIn,
  IntegrationUpdate,
  MessageIn,
  RecoverIn,
} from './inputs';
import { listenOnLoopback } from '../net';
import {
  Dispatcher,
  isLoopbackUrl,
  matches,
  SANDBOX_DISABLE_AFTER_MS,
  SANDBOX_OVERLOAD_PENALTY_MS,
  SANDBOX_RETRY_SCHEDULE_MS,
  type DeliveryStats,
} from './dispatcher';
import { checkListLimit } from '../../svix/rules';
import {
  ApiError,
  DEFAULT_LIMITS,
  newId,
  Store,
  type AppRecord,
  type AttemptRecord,
  type EndpointRecord,
  type EventTypeRecord,
  type IntegrationRecord,
  type Limits,
  type ListAnswer,
  type ListQuery,
  type MessageRecord,
} from './store';

/**
 * A stand-in for Svix's API on loopback: the part of the Svix
 * API that this integration and `npm run setup` use, with the semantics of
 * Svix's published server (svix-webhooks, server/svix-server; docs/svix-fidelity.md
 * lists each behaviour, the file that states it and its test): bearer key,
 * `{code, detail}` and 422 bodies, uids, get_if_exists, Idempotency-Key
 * replays, live and archived event types, listings bounded on the id, signed
 * deliveries with jittered retries and auto-disable, secret rotation with a
 * grace period and a limit, app-scoped integration keys. In memory and
 * bounded. Never imported by the Zapier app.
 */

/** A fault to inject into one request, for the fault tests. */
export type Fault =
  /** Answer with this instead (an HTML error page, a 429 with Retry-After…). */
  | { kind: 'reply'; status: number; body: string; headers?: Record<string, string> }
  /** Do the work, then drop the connection without answering: the answer is lost. */
  | { kind: 'lose-answer' }
  /** Drop the connection before doing anything. */
  | { kind: 'drop' }
  /** Never answer: the client's time-out fires. */
  | { kind: 'hang' };

export interface FaultContext {
  method: string;
  path: string;
  /** How many requests with this method and path came before this one. */
  seen: number;
}

export interface EmulatorOptions {
  apiKey: string;
  port?: number;
  maxBodyBytes?: number;
  retryScheduleMs?: readonly number[];
  attemptTimeoutMs?: number;
  concurrency?: number;
  /** How long a rotated-out secret keeps signing, unless the request says otherwise (Svix: a day). */
  rotationGraceMs?: number;
  /** The least wait after a time-out or a 429 (Svix: 60 s; by default 60 ms, compressed as the sandbox's schedule). */
  overloadPenaltyMs?: number;
  /** How long an endpoint's failures last before it is disabled (Svix: 120 h; by default 432 s, compressed too). */
  disableAfterMs?: number;
  /** Random numbers in [0, 1) for the retries' jitter (Math.random by default; tests pin it). */
  random?: () => number;
  idempotencyTtlMs?: number;
  maxIdempotencyKeys?: number;
  limits?: Partial<Limits>;
  fault?: (context: FaultContext) => Fault | undefined;
  /** Holds the answer to a request this many ms (a slow Svix); the work itself is done at once. */
  delayMs?: (context: FaultContext) => number | undefined;
  /** The time payload retention is measured by (Date.now by default): tests move it forward. */
  clock?: () => number;
  /** Ids for the first Consumer Apps created, in order (the sandbox's fixed one), instead of new ones. */
  appIds?: readonly string[];
  /** How far the clock that signs deliveries is from this machine's (negative: behind). */
  signingOffsetMs?: number;
  /**
   * AN ASSUMPTION, not Svix's behaviour: true makes the emulator refuse any `throttleRate` with a 422 on that
   * field, as a plan without endpoint throttling might. No source found says a plan refuses it (the server stores
   * it, Svix Cloud enforces it); this exists only to test the app's fallback of making the endpoint without it.
   * What an account really answers is a finding of the contract suite.
   */
  assumePlanRefusesThrottleRate?: boolean;
  /** Answer `replay-missing` 404, as the open-source server does (it is Svix Cloud's): a Zap then cannot catch up. */
  withoutReplayMissing?: boolean;
  /**
   * False: deliveries go out as fast as they can, whatever an endpoint's throttleRate, as the open-source server's
   * worker does (the soak and the benchmark stress the delivery path beyond the pace a Zap's endpoint gets, and
   * `npm start -- --burst N --unpaced` shows a burst unpaced). True by default, as Svix Cloud paces.
   */
  paceDeliveries?: boolean;
  /**
   * How old the endpoint (its URL and disabled flag) an attempt reads may be, by `clock`. Svix's worker reads an
   * app's endpoints through a cache kept 30 s (worker.rs, `layered_fetch`), and the open-source API clears it on
   * every endpoint write (endpoint/crud.rs, `CreateMessageApp::invalidate`): an attempt after a PATCH goes to the new
   * URL. That is the default, 0. A worker the clearing misses (an in-memory cache in a process apart from the
   * API's, a failed clear, a read racing the write), and perhaps Svix Cloud, read it up to 30 s old: set 30_000
   * (or 30, as compressed as the sandbox's retries) for a world where an attempt just after a PATCH still goes to
   * the old URL, or to an endpoint just disabled.
   */
  endpointCacheMs?: number;
  /**
   * True: a manual attempt (resend, recover, replay-missing) ends the message's scheduled retries to that
   * endpoint, as Svix's worker does (worker.rs: a scheduled task is skipped once the last attempt for the message
   * and endpoint set no next one). False by default: the sandbox and the soak resend a message while it is still
   * being delivered, to stand for Svix sending it twice, which must not end its retries. The contract suite's
   * emulator sets it.
   */
  manualAttemptEndsRetries?: boolean;
}

export interface EmulatorStats {
  requests: number;
  apps: number;
  endpoints: number;
  eventTypes: number;
  messages: number;
  deliveries: DeliveryStats;
  /** For each `METHOD path`, the most requests handled at once (from arrival to the answer written). */
  maxInFlight: Record<string, number>;
}

/** Who a bearer key speaks for: the whole account, or one app's integration. */
type Principal = { kind: 'account' } | { kind: 'integration'; appId: string };

const ACCOUNT: Principal = { kind: 'account' };
/** How many distinct `METHOD path` keys the per-request bookkeeping remembers. */
const MAX_TRACKED_KEYS = 10_000;

interface Reply {
  status: number;
  body?: unknown;
}

interface Request {
  method: string;
  segments: string[];
  query: URLSearchParams;
  body: unknown;
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  const text = body === undefined ? '' : JSON.stringify(body);
  response.writeHead(status, {
    ...(text ? { 'content-type': 'application/json' } : {}),
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  response.end(text);
};

// Records leave optional fields out when unset, as Svix's answers do:
// an answer is the record without the emulator's own bookkeeping.
const appOut = (app: AppRecord) => {
  const { endpoints, log, head, messages, nextSeq, integrations, ...out } = app;
  return out;
};

const integrationOut = (integration: IntegrationRecord) => {
  const { key, ...out } = integration;
  return out;
};

const endpointOut = (endpoint: EndpointRecord) => {
  const { secret, previous, ...out } = endpoint;
  return out;
};

const eventTypeOut = (eventType: EventTypeRecord) => ({ ...eventType });

/** `payload` is what the store keeps of it now (see Store.payloadOf). */
const messageOut = (message: MessageRecord, payload: Readonly<Record<string, unknown>>, withContent: boolean) => {
  const { seq, attempts, payloadUntil, ...out } = message;
  return { ...out, payload: withContent ? payload : {} };
};

/** MessageAttemptOut: the status and the trigger as the contract numbers them (Success 0, Fail 2; Scheduled 0). */
const attemptOut = ({ attempt, msgId }: { attempt: AttemptRecord; msgId: string }) => ({
  url: attempt.url,
  response: attempt.response,
  responseStatusCode: attempt.responseStatusCode,
  responseDurationMs: attempt.responseDurationMs ?? 0,
  status: attempt.status === 'success' ? 0 : 2,
  statusText: attempt.status,
  triggerType: attempt.triggerType === 'scheduled' ? 0 : 1,
  msgId,
  endpointId: attempt.endpointId,
  id: attempt.id,
  timestamp: attempt.timestamp,
});

const listOut = <T, O>(list: ListAnswer<T>, map: (item: T) => O): ListAnswer<O> => ({
  ...list,
  data: list.data.map(map),
});

const queryIssue = (name: string, msg: string) =>
  ApiError.invalid([{ loc: ['query', name], msg, type: 'value_error' }]);

/** A query value the server cannot read at all: 400 generic_error, before any check of what it says (utils/mod.rs). */
const unreadable = (name: string, what: string) =>
  ApiError.badRequest(`Failed to deserialize query string: ${name}: ${what}`);

/** `limit`, `iterator` and `order`, as every listing reads them; a limit over 250 is a 422. */
const listQueryOf = (query: URLSearchParams): ListQuery => {
  const text = query.get('limit');
  if (text !== null && !/^\d+$/.test(text)) throw unreadable('limit', 'invalid digit found in string');
  const limit = text === null ? 50 : Number(text);
  const tooMany = checkListLimit(limit);
  if (tooMany) throw ApiError.invalid([{ ...tooMany, loc: [...tooMany.loc], type: 'value_error' }]);
  const order = query.get('order');
  if (order !== null && order !== 'ascending' && order !== 'descending')
    throw unreadable('order', 'unknown variant, expected `ascending` or `descending`');
  return {
    limit,
    ...(query.get('iterator') === null ? {} : { iterator: query.get('iterator') ?? undefined }),
    ...(order === null ? {} : { order }),
  };
};

const flagOf = (query: URLSearchParams, name: string, fallback: boolean): boolean => {
  const text = query.get(name);
  if (text === null) return fallback;
  if (text !== 'true' && text !== 'false') throw unreadable(name, 'provided string was not `true` or `false`');
  return text === 'true';
};

/** `after` or `before`: an RFC 3339 date-time (ms since the epoch), as Svix reads them; absent, no bound. */
const timeOf = (query: URLSearchParams, name: 'after' | 'before'): number | undefined => {
  const text = query.get(name);
  if (text === null) return undefined;
  const at = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text) || Number.isNaN(at))
    throw unreadable(name, 'input contains invalid characters');
  return at;
};

/** `event_types=A,B` or `event_types=A&event_types=B`. */
const eventTypesOf = (query: URLSearchParams): string[] | undefined => {
  const names = query
    .getAll('event_types')
    .flatMap((value) => value.split(','))
    .filter((name) => name !== '');
  if (names.length === 0) return undefined;
  if (!names.every((name) => EventTypeName.is(name))) throw queryIssue('event_types', 'not a valid event type name');
  return names;
};

/** `status` of an attempt listing: 0 (success) or 2 (fail) keep only those; 1, 3 and 4 are never recorded here. */
const attemptStatusOf = (query: URLSearchParams): AttemptRecord['status'] | 'none' | undefined => {
  const text = query.get('status');
  if (text === null) return undefined;
  if (!/^[0-4]$/.test(text)) throw unreadable('status', 'invalid value, expected one of 0, 1, 2, 3, 4');
  return text === '0' ? 'success' : text === '2' ? 'fail' : 'none';
};

const decoded = <A>(codec: t.Decoder<unknown, A>, body: unknown): A => {
  const result = decodeBody(codec, body);
  if (!result.ok) throw ApiError.invalid(result.issues);
  return result.value;
};

/**
 * The answer for a request that failed: Svix's body for an ApiError; for anything else (a failure of the
 * emulator's own), 500 with the body `{}`, as the server answers every error that is not an HTTP one (error.rs).
 */
export const errorAnswer = (error: unknown): Reply =>
  error instanceof ApiError ? { status: error.status, body: error.body } : { status: 500, body: {} };

export class SvixEmulator {
  private readonly store: Store;
  private readonly dispatcher: Dispatcher;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly idempotent = new Map<string, { reply: Reply; at: number }>();
  private readonly seen = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  private readonly maxInFlight = new Map<string, number>();
  private readonly delays = new Set<NodeJS.Timeout>();
  private requests = 0;
  private base = '';

  constructor(private readonly options: EmulatorOptions) {
    if (!options.apiKey) throw new Error('The Svix emulator needs an API key to expect.');
    this.store = new Store({ ...DEFAULT_LIMITS, ...options.limits }, options.clock, options.appIds);
    this.dispatcher = new Dispatcher(this.store, {
      retryScheduleMs: options.retryScheduleMs ?? SANDBOX_RETRY_SCHEDULE_MS,
      attemptTimeoutMs: options.attemptTimeoutMs ?? 5_000,
      concurrency: options.concurrency ?? 8,
      paced: options.paceDeliveries ?? true,
      overloadPenaltyMs: options.overloadPenaltyMs ?? SANDBOX_OVERLOAD_PENALTY_MS,
      disableAfterMs: options.disableAfterMs ?? SANDBOX_DISABLE_AFTER_MS,
      random: options.random ?? Math.random,
      endpointCacheMs: options.endpointCacheMs ?? 0,
      manualAttemptEndsRetries: options.manualAttemptEndsRetries ?? false,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.signingOffsetMs === undefined ? {} : { signingOffsetMs: options.signingOffsetMs }),
    });
  }

  /** Listens on loopback; resolves with the base URL, e.g. `http://127.0.0.1:8071`. */
  async start(): Promise<string> {
    const server = createServer((request, response) => this.handle(request, response));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server = server;
    this.base = `http://127.0.0.1:${await listenOnLoopback(server, this.options.port ?? 0)}`;
    return this.base;
  }

  get url(): string {
    return this.base;
  }

  async stop(): Promise<void> {
    this.dispatcher.stop();
    for (const timer of this.delays) clearTimeout(timer);
    this.delays.clear();
    const server = this.server;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = undefined;
  }

  /** Resolves once every delivery has succeeded or used up its retries. */
  /**
   * Holds every delivery until the function it returns is called, then sends them all at once: a burst, as
   * when a sale of hundreds of lots closes together, whatever the pace at which the messages were made.
   */
  holdDeliveries(): () => void {
    return this.dispatcher.hold();
  }

  idle(): Promise<void> {
    return this.dispatcher.idle();
  }

  /** Svix's "resend": delivers a message to one endpoint again. */
  resend(appId: string, messageId: string, endpointId: string): void {
    const app = this.store.app(appId);
    this.dispatcher.resend(app, this.store.message(app, messageId), this.store.endpoint(app, endpointId));
  }

  /** Every recorded delivery attempt of a message, oldest first. */
  attempts(appId: string, messageId: string): AttemptRecord[] {
    const app = this.store.app(appId);
    return [...this.store.message(app, messageId).attempts];
  }

  /** How many integration keys of the app work now (one per integration). */
  integrationKeyCount(appId: string): number {
    return this.store.integrationKeyCount(this.store.app(appId));
  }

  /** The Consumer App's endpoints deliveries can reach (on this machine, enabled): a parked one reaches none. */
  reachableEndpoints(appId: string): number {
    const endpoints = [...this.store.app(appId).endpoints.values()];
    return endpoints.filter((endpoint) => !endpoint.disabled && isLoopbackUrl(endpoint.url)).length;
  }

  stats(): EmulatorStats {
    return {
      requests: this.requests,
      ...this.store.counts(),
      deliveries: { ...this.dispatcher.stats, pending: this.dispatcher.pending },
      maxInFlight: Object.fromEntries(this.maxInFlight),
    };
  }

  /** Only under the assumption that a plan refuses throttling (see EmulatorOptions): a rate is refused. */
  private checkThrottling(throttleRate: number | null | undefined): void {
    if (this.options.assumePlanRefusesThrottleRate === true && throttleRate !== undefined && throttleRate !== null) {
      throw ApiError.invalid([
        {
          loc: ['body', 'throttleRate'],
          msg: 'Endpoint throttling is not available on this plan.',
          type: 'value_error',
        },
      ]);
    }
  }

  // ---- HTTP ----------------------------------------------------------------

  private handle(request: IncomingMessage, response: ServerResponse): void {
    this.requests += 1;
    const url = new URL(request.url ?? '/', 'http://emulator');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    const method = request.method ?? 'GET';

    const key = `${method} ${path}`;
    const seen = this.seen.get(key) ?? 0;
    if (this.seen.size < MAX_TRACKED_KEYS || this.seen.has(key)) this.seen.set(key, seen + 1);
    this.track(key, response);
    const context: FaultContext = { method, path, seen };
    const fault = this.options.fault?.(context);
    const delayMs = this.options.delayMs?.(context);
    const send = (write: () => void) => this.after(delayMs, response, write);
    if (fault?.kind === 'drop') {
      request.socket.destroy();
      return;
    }
    if (fault?.kind === 'hang') {
      request.resume();
      return;
    }
    if (fault?.kind === 'reply') {
      request.resume();
      send(() => {
        response.writeHead(fault.status, { 'content-type': 'text/html; charset=utf-8', ...fault.headers });
        response.end(fault.body);
      });
      return;
    }

    // lib.rs, CorsLayer: any origin, any method, the headers asked for; a preflight needs no key.
    if (request.headers.origin !== undefined) {
      if (method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
        request.resume();
        send(() =>
          response
            .writeHead(200, {
              'access-control-allow-origin': '*',
              'access-control-allow-methods': '*',
              'access-control-allow-headers': String(request.headers['access-control-request-headers'] ?? ''),
              'access-control-max-age': '600',
              'content-length': '0',
            })
            .end(),
        );
        return;
      }
      response.setHeader('access-control-allow-origin', '*');
    }

    const principal = this.principalOf(request.headers.authorization);
    if (!principal) {
      request.resume();
      send(() => json(response, 401, { code: 'authentication_failed', detail: 'Invalid token' }));
      return;
    }
    const limit = this.options.maxBodyBytes ?? 1024 * 1024;
    const declared = Number(request.headers['content-length'] ?? '0');
    if (declared > limit) {
      send(() => {
        json(
          response,
          413,
          { code: 'payload_too_large', detail: `The request body is larger than ${limit} bytes.` },
          { connection: 'close' },
        );
        request.destroy();
      });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
      } else if (!tooLarge) chunks.push(chunk);
    });
    request.on('end', () => {
      if (tooLarge) {
        send(() =>
          json(response, 413, {
            code: 'payload_too_large',
            detail: `The request body is larger than ${limit} bytes.`,
          }),
        );
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      const reply = this.answer(principal, method, path, url.searchParams, text, request.headers['idempotency-key']);
      send(() => {
        if (fault?.kind === 'lose-answer') request.socket.destroy();
        else json(response, reply.status, reply.body);
      });
    });
  }

  /** Counts the request as in flight until its answer is written or its connection closes. */
  private track(key: string, response: ServerResponse): void {
    const now = (this.inFlight.get(key) ?? 0) + 1;
    this.inFlight.set(key, now);
    if (
      now > (this.maxInFlight.get(key) ?? 0) &&
      (this.maxInFlight.size < MAX_TRACKED_KEYS || this.maxInFlight.has(key))
    )
      this.maxInFlight.set(key, now);
    let done = false;
    const finished = () => {
      if (done) return;
      done = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
    response.once('finish', finished);
    response.once('close', finished);
  }

  /** Writes the answer now, or after the delay asked for (unless the connection is gone by then). */
  private after(delayMs: number | undefined, response: ServerResponse, write: () => void): void {
    if (delayMs === undefined || !(delayMs > 0)) {
      write();
      return;
    }
    const timer = setTimeout(() => {
      this.delays.delete(timer);
      if (!response.destroyed) write();
    }, delayMs);
    this.delays.add(timer);
  }

  /** The account key, or a working integration key; anything else is refused. */
  private principalOf(header: string | undefined): Principal | undefined {
    if (header === undefined || !header.startsWith('Bearer ')) return undefined;
    const token = header.slice('Bearer '.length);
    if (token === this.options.apiKey) return ACCOUNT;
    const appId = token.startsWith('integsk_') ? this.store.appOfIntegrationKey(token) : undefined;
    return appId === undefined ? undefined : { kind: 'integration', appId };
  }

  /**
   * What an app-scoped key (an integration's) may do, as the server's permission extractors decide
   * (core/permissions.rs, and which one each route takes in v1/endpoints/*.rs): the routes of its own app
   * (endpoints, reading messages, attempts, resending) and reading event types. Routes for the organisation
   * refuse it with 403 before looking at the app: listing or making apps, changing or deleting its app, posting
   * messages, deleting a message's content, writing event types. Another app's routes answer 404, as if it did
   * not exist. Integrations (Svix Cloud's, not in the open-source server) it may not manage.
   */
  private authorize(principal: Principal, method: string, segments: string[]): void {
    if (principal.kind === 'account') return;
    const [api, version, collection, id, sub, , leaf] = segments;
    if (api !== 'api' || version !== 'v1') return;
    if (collection === 'event-type') {
      if (method !== 'GET') throw ApiError.forbidden();
      return;
    }
    if (collection !== 'app') return;
    const organisationOnly =
      id === undefined ||
      (segments.length === 4 && method !== 'GET') ||
      (sub === 'msg' && segments.length === 5 && method === 'POST') ||
      (sub === 'msg' && segments.length === 7 && leaf === 'content') ||
      sub === 'integration';
    if (organisationOnly) throw ApiError.forbidden();
    if (this.store.app(id).id !== principal.appId) throw ApiError.notFound();
  }

  private answer(
    principal: Principal,
    method: string,
    path: string,
    query: URLSearchParams,
    text: string,
    idempotencyKey: string | string[] | undefined,
  ): Reply {
    const segments = path.split('/').filter((part) => part !== '');
    try {
      // Before a replay, so a key never sees an answer it could not have had.
      this.authorize(principal, method, segments);
    } catch (error) {
      return errorAnswer(error);
    }
    const replayKey = method === 'POST' && typeof idempotencyKey === 'string' ? `${path} ${idempotencyKey}` : undefined;
    const ttl = this.options.idempotencyTtlMs ?? 12 * 60 * 60 * 1000;
    if (replayKey) {
      const earlier = this.idempotent.get(replayKey);
      if (earlier && Date.now() - earlier.at < ttl) return earlier.reply;
    }
    let reply: Reply;
    try {
      let body: unknown = undefined;
      if (text.trim() !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          throw ApiError.invalid([
            { loc: ['body'], msg: 'the body is not valid JSON', type: 'value_error.jsondecode' },
          ]);
        }
      }
      reply = this.route({ method, segments, query, body });
    } catch (error) {
      return errorAnswer(error);
    }
    if (replayKey && reply.status >= 200 && reply.status < 300) {
      this.idempotent.set(replayKey, { reply, at: Date.now() });
      const max = this.options.maxIdempotencyKeys ?? 10_000;
      for (const oldest of this.idempotent.keys()) {
        if (this.idempotent.size <= max) break;
        this.idempotent.delete(oldest);
      }
    }
    return reply;
  }

  private route(request: Request): Reply {
    const { method, segments, query, body } = request;
    const [api, version, collection, id, sub, subId, leaf, leafId, action] = segments;
    if (api !== 'api' || version !== 'v1') throw ApiError.notFound();
    const notAllowed = () => new ApiError(405, { code: 'method_not_allowed', detail: 'Method not allowed' });

    if (collection === 'event-type') {
      if (segments.length === 3) {
        if (method === 'GET') {
          return {
            status: 200,
            body: listOut(
              this.store.listEventTypes(listQueryOf(query), flagOf(query, 'include_archived', false)),
              eventTypeOut,
            ),
          };
        }
        if (method === 'POST')
          return { status: 201, body: eventTypeOut(this.store.createEventType(decoded(EventTypeIn, body))) };
        throw notAllowed();
      }
      if (segments.length === 4 && id) {
        if (method === 'GET') return { status: 200, body: eventTypeOut(this.store.eventType(id)) };
        if (method === 'PUT') {
          if (!EventTypeName.is(id))
            throw ApiError.invalid([
              { loc: ['path', 'event_type_name'], msg: 'not a valid event type name', type: 'value_error' },
            ]);
          const { eventType, created } = this.store.putEventType(id, decoded(EventTypeUpsertIn, body));
          return { status: created ? 201 : 200, body: eventTypeOut(eventType) };
        }
        if (method === 'PATCH')
          return { status: 200, body: eventTypeOut(this.store.patchEventType(id, decoded(EventTypePatch, body))) };
        if (method === 'DELETE') {
          this.store.deleteEventType(id, flagOf(query, 'expunge', false));
          return { status: 204 };
        }
        throw notAllowed();
      }
      throw ApiError.notFound();
    }

    if (collection !== 'app') throw ApiError.notFound();
    if (segments.length === 3) {
      if (method === 'GET')
        return {
          status: 200,
          body: listOut(this.store.listApps(listQueryOf(query)), appOut),
        };
      if (method === 'POST') {
        const { app, created } = this.store.createApp(
          decoded(ApplicationIn, body),
          flagOf(query, 'get_if_exists', false),
        );
        return { status: created ? 201 : 200, body: appOut(app) };
      }
      throw notAllowed();
    }
    if (!id) throw ApiError.notFound();
    const app = this.store.app(id);
    if (segments.length === 4) {
      if (method === 'GET') return { status: 200, body: appOut(app) };
      if (method === 'DELETE') {
        this.store.deleteApp(app.id);
        return { status: 204 };
      }
      throw notAllowed();
    }

    if (sub === 'endpoint') return this.endpointRoute(request, app, subId, leaf, leafId, notAllowed);
    // attempt.rs, list_attempts_by_endpoint: where each attempt went (its url), newest first.
    if (sub === 'attempt' && subId === 'endpoint' && leaf && segments.length === 7) {
      if (method !== 'GET') throw notAllowed();
      const endpoint = this.store.endpoint(app, leaf);
      const listQuery = listQueryOf(query);
      const status = attemptStatusOf(query);
      const list =
        status === 'none'
          ? { data: [], iterator: null, prevIterator: null, done: true }
          : this.store.listAttempts(app, endpoint, listQuery, status);
      return { status: 200, body: listOut(list, attemptOut) };
    }
    if (sub === 'integration') return this.integrationRoute(request, app, subId, leaf, leafId, notAllowed);
    if (sub === 'msg') {
      if (segments.length === 5) {
        if (method === 'GET') {
          const listQuery = listQueryOf(query);
          const withContent = flagOf(query, 'with_content', true);
          const window = { after: timeOf(query, 'after'), before: timeOf(query, 'before') };
          const list = this.store.listMessages(app, listQuery, eventTypesOf(query), window);
          return {
            status: 200,
            body: listOut(list, (message) => messageOut(message, this.store.payloadOf(message), withContent)),
          };
        }
        if (method === 'POST') {
          const message = this.store.createMessage(app, decoded(MessageIn, body));
          this.dispatcher.dispatch(app, message);
          return {
            status: 202,
            body: messageOut(message, this.store.payloadOf(message), flagOf(query, 'with_content', true)),
          };
        }
        throw notAllowed();
      }
      if (segments.length === 6 && subId) {
        if (method === 'GET') {
          // By its id or the eventId it was created with, as Svix answers.
          const message = this.store.message(app, subId);
          return {
            status: 200,
            body: messageOut(message, this.store.payloadOf(message), flagOf(query, 'with_content', true)),
          };
        }
        throw notAllowed();
      }
      if (segments.length === 7 && subId && leaf === 'content') {
        if (method !== 'DELETE') throw notAllowed();
        this.store.expungeContent(this.store.message(app, subId));
        return { status: 204 };
      }
      if (segments.length === 9 && subId && leaf === 'endpoint' && leafId && action === 'resend') {
        if (method !== 'POST') throw notAllowed();
        const message = this.store.message(app, subId);
        // attempt.rs, resend_webhook: a message whose payload is gone cannot be sent again.
        if (!this.store.hasPayload(message))
          throw ApiError.badRequest(
            'Unable to resend message. Payload is missing (probably expired).',
            'missing_payload',
          );
        this.dispatcher.resend(app, message, this.store.endpoint(app, leafId));
        return { status: 202 };
      }
    }
    throw ApiError.notFound();
  }

  private endpointRoute(
    request: Request,
    app: AppRecord,
    endpointId: string | undefined,
    leaf: string | undefined,
    action: string | undefined,
    notAllowed: () => ApiError,
  ): Reply {
    const { method, segments, query, body } = request;
    if (segments.length === 5) {
      if (method === 'GET')
        return {
          status: 200,
          body: listOut(this.store.listEndpoints(app, listQueryOf(query)), endpointOut),
        };
      if (method === 'POST') {
        const input = decoded(EndpointIn, body);
        this.checkThrottling(input.throttleRate ?? input.rateLimit);
        return { status: 201, body: endpointOut(this.store.createEndpoint(app, input)) };
      }
      throw notAllowed();
    }
    if (!endpointId) throw ApiError.notFound();
    const endpoint = this.store.endpoint(app, endpointId);
    if (segments.length === 6) {
      if (method === 'GET') return { status: 200, body: endpointOut(endpoint) };
      if (method === 'PATCH') {
        const input = decoded(EndpointPatch, body);
        this.checkThrottling(input.throttleRate ?? input.rateLimit);
        return { status: 200, body: endpointOut(this.store.patchEndpoint(app, endpoint, input)) };
      }
      if (method === 'DELETE') {
        this.store.deleteEndpoint(app, endpoint.id);
        return { status: 204 };
      }
      throw notAllowed();
    }
    if (leaf === 'recover' && segments.length === 7) {
      if (method !== 'POST') throw notAllowed();
      return { status: 202, body: this.recover(app, endpoint, decoded(RecoverIn, body)) };
    }
    if (leaf === 'replay-missing' && segments.length === 7 && this.options.withoutReplayMissing !== true) {
      if (method !== 'POST') throw notAllowed();
      return { status: 202, body: this.replayMissing(app, endpoint, decoded(RecoverIn, body)) };
    }
    if (leaf === 'secret' && segments.length === 7) {
      if (method === 'GET') return { status: 200, body: { key: endpoint.secret } };
      throw notAllowed();
    }
    if (leaf === 'secret' && action === 'rotate' && segments.length === 8) {
      if (method !== 'POST') throw notAllowed();
      const input = decoded(EndpointSecretRotateIn, body ?? {});
      const graceSeconds =
        input.gracePeriodSeconds ??
        (this.options.rotationGraceMs === undefined ? undefined : this.options.rotationGraceMs / 1000);
      this.store.rotateSecret(endpoint, input.key ?? undefined, graceSeconds);
      return { status: 204 };
    }
    throw ApiError.notFound();
  }

  /**
   * `recover`: resends (as manual attempts) each message whose attempts to the endpoint since `since` failed and
   * none succeeded; at most 14 days (and 5 minutes) back (endpoint/recovery.rs). What the endpoint never got is not
   * sent: that is Svix Cloud's `replay-missing`, which the open-source server has not.
   */
  private recover(app: AppRecord, endpoint: EndpointRecord, input: RecoverIn) {
    const until = input.until ? Date.parse(input.until) : Date.now();
    const since = Date.parse(input.since);
    if (since < until - (14 * 24 * 60 + 5) * 60 * 1000)
      throw ApiError.invalid([
        { loc: ['body', 'since'], msg: 'Cannot recover more than 14 days of messages', type: 'value_error' },
      ]);
    for (const message of app.messages.values()) {
      const attempts = message.attempts.filter((attempt) => {
        const at = Date.parse(attempt.timestamp);
        return attempt.endpointId === endpoint.id && at >= since && at < until;
      });
      const failedOnly = attempts.length > 0 && attempts.every((attempt) => attempt.status === 'fail');
      if (failedOnly && this.store.hasPayload(message)) this.dispatcher.resend(app, message, endpoint);
    }
    return { id: newId('qtask'), status: 'running', task: 'endpoint.recover', updatedAt: new Date().toISOString() };
  }

  /**
   * `replay-missing` (Svix Cloud's, as its API contract documents it): sends the endpoint each message made since
   * `since` (until `until`, or now) that it would take and was never sent, however old the endpoint: what it was
   * not there for, too. Takes `since` and `until` as `recover` does; the request body's shape is the same.
   */
  private replayMissing(app: AppRecord, endpoint: EndpointRecord, input: RecoverIn) {
    const until = input.until ? Date.parse(input.until) : Date.now();
    const since = Date.parse(input.since);
    for (const message of app.messages.values()) {
      const at = Date.parse(message.timestamp);
      const sent = message.attempts.some((attempt) => attempt.endpointId === endpoint.id);
      if (at >= since && at < until && !sent && matches(endpoint, message) && this.store.hasPayload(message))
        this.dispatcher.resend(app, message, endpoint);
    }
    return { id: newId('qtask'), status: 'running', task: 'endpoint.replay', updatedAt: new Date().toISOString() };
  }

  private integrationRoute(
    request: Request,
    app: AppRecord,
    integrationId: string | undefined,
    leaf: string | undefined,
    action: string | undefined,
    notAllowed: () => ApiError,
  ): Reply {
    const { method, segments, query, body } = request;
    if (segments.length === 5) {
      if (method === 'GET')
        return {
          status: 200,
          body: listOut(this.store.listIntegrations(app, listQueryOf(query)), integrationOut),
        };
      if (method === 'POST')
        return { status: 201, body: integrationOut(this.store.createIntegration(app, decoded(IntegrationIn, body))) };
      throw notAllowed();
    }
    if (!integrationId) throw ApiError.notFound();
    const integration = this.store.integration(app, integrationId);
    if (segments.length === 6) {
      if (method === 'GET') return { status: 200, body: integrationOut(integration) };
      if (method === 'PUT')
        return {
          status: 200,
          body: integrationOut(this.store.updateIntegration(integration, decoded(IntegrationUpdate, body))),
        };
      if (method === 'DELETE') {
        this.store.deleteIntegration(app, integration);
        return { status: 204 };
      }
      throw notAllowed();
    }
    // There is no operation to read a key: it is shown once, when a rotation makes it.
    if (leaf === 'key' && action === 'rotate' && segments.length === 8) {
      if (method !== 'POST') throw notAllowed();
      return { status: 200, body: { key: this.store.rotateIntegrationKey(app, integration) } };
    }
    throw ApiError.notFound();
  }
}
