import type { Bundle, HttpRequestOptions, HttpResponse, ZObject } from 'zapier-platform-core';
import type * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { describeDecodeErrors } from '../models/decode';
import { readConnection, type Connection } from './connection';
import {
  describeUnexpectedShape,
  describeUnreachable,
  judgeAnswer,
  type Failure,
  type FailureContext,
  type Reader,
} from './failures';

/**
 * Time limits. Zapier stops any step after 30 s, so an operation that makes
 * several provider calls (a subscribe makes up to four) shares one budget,
 * and each call gets what is left of it, at most `timeoutMs`. An object so the
 * fault tests can shorten them.
 */
export const requestSettings = { timeoutMs: 10_000, operationBudgetMs: 25_000 };

/** The moment an operation's provider calls must be done by, on the clock the operation runs on. */
export class Deadline {
  constructor(
    readonly endsAt: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The operation budget counted from `startedAt` (by default, from now). */
  static since(startedAt = Date.now(), now: () => number = Date.now): Deadline {
    return new Deadline(startedAt + requestSettings.operationBudgetMs, now);
  }

  remainingMs(): number {
    return this.endsAt - this.now();
  }
}

/** Below this, a call is not started: it could not get an answer in time. */
const SHORTEST_CALL_MS = 250;

/**
 * Marks an error so that core leaves its message as it is. Otherwise core
 * appends "What happened" to it, with the whole bundle but authData: this
 * Zap's subscribeData (the endpoint's signing secret) and the delivery, for
 * anyone who reads the Zap's history. Core's own Error and ThrottledError are
 * marked already; HaltedError and ExpiredAuthError are not.
 */
export const withoutBundle = <E extends Error>(error: E): E => {
  Reflect.set(error, 'doNotContextify', true);
  return error;
};

/**
 * What the app needs of Zapier's `z`, as one port, so the simulation can hand in its own: an HTTP request (its
 * status, body and Retry-After), the cache (scoped to the connection, so two accounts never share entries),
 * the platform's errors, and the log.
 */
export interface Io {
  send: (options: RequestOptions, raw: boolean) => Promise<{ status: number; content: string; retryAfter?: string }>;
  cache: {
    get: (key: string) => Promise<unknown>;
    /** Zapier's answer (zapier/zapier-platform#921): `true` stored; `false` not stored (`nx`: the key exists); `null` throttled. */
    set: (key: string, value: unknown, ttlSeconds: number, onlyIfAbsent: boolean) => Promise<unknown>;
  };
  errors: ZObject['errors'];
  log: (line: string) => void;
}

/**
 * What z.cache keeps is the person's, across their connections: a Zap moved to another connection to the same
 * Consumer App keeps its claims (else its catch-up would run again what it ran), and pacing is per person, as
 * Zapier's limit is. Keys name what they are for (a message, a Zap, an endpoint, a Consumer App), never a connection.
 */
export const CACHE_SCOPE = ['user'];
/** z as the app's port. The cache's get takes the scope as its second argument, which its published types omit. */
export const ioOf = (z: ZObject): Io => ({
  send: async (options, raw) => {
    if (!raw) {
      const response: HttpResponse = await z.request(options);
      return { status: response.status, content: response.content, retryAfter: response.getHeader('retry-after') };
    }
    const response = await z.request({ ...options, raw: true });
    return { status: response.status, content: await response.text(), retryAfter: response.getHeader('retry-after') };
  },
  cache: {
    get: (key) =>
      Promise.resolve<unknown>(Reflect.apply(z.cache.get, z.cache, [key, CACHE_SCOPE])).then(
        (value) => value ?? undefined,
      ),
    set: (key, value, ttl, nx) => z.cache.set(key, value, ttl, CACHE_SCOPE, nx),
  },
  errors: z.errors,
  log: (line) => z.console.log(line),
});

/** Stops a delivery that cannot have come from the Consumer App as sent: a halt, which never turns a Zap off. */
export const halt = (io: Pick<Io, 'errors'>, message: string): never => {
  throw withoutBundle(new io.errors.HaltedError(message));
};

export const raise = (io: Pick<Io, 'errors' | 'log'>, failure: Failure): never => {
  // What a person does not read (a status, a header, a host) goes to the log, for whoever supports the Zap.
  if (failure.log) io.log(failure.log);
  switch (failure.kind) {
    case 'auth':
      throw withoutBundle(new io.errors.ExpiredAuthError(failure.message));
    case 'throttled':
      throw new io.errors.ThrottledError(failure.message, failure.delaySeconds);
    case 'error':
      throw new io.errors.Error(failure.message, failure.code, failure.status);
  }
};

/** The connection of this bundle, or a plain error saying which field to fix. */
export const connectionOf = (io: Pick<Io, 'errors'>, bundle: Pick<Bundle, 'authData'>): Connection => {
  const result = readConnection(bundle.authData);
  if (!result.ok) throw new io.errors.Error(result.message, 'InvalidConnection', 400);
  return result.connection;
};

/**
 * Who is calling the provider: the invocation's z object, the connection,
 * where a failure will be read, and the operation's deadline. Every provider
 * operation takes one.
 */
export interface Caller {
  io: Io;
  connection: Connection;
  reader: Exclude<Reader, 'setup'>;
  deadline: Deadline;
}

/** `startedAt`: when the operation began on the clock `now` reads, if it may have waited before its first call. */
export const callerOf = (
  z: ZObject | Io,
  bundle: Pick<Bundle, 'authData'>,
  reader: Caller['reader'],
  startedAt?: number,
  now?: () => number,
): Caller => {
  const io = 'send' in z ? z : ioOf(z);
  return { io, connection: connectionOf(io, bundle), reader, deadline: Deadline.since(startedAt, now) };
};

export interface ProviderCall extends Omit<FailureContext, 'reader'> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the base URL; callers encode and check ids before building it. */
  path: string;
  params?: Record<string, string | number | boolean>;
  body?: object;
  /** Statuses the caller handles itself instead of raising an error. */
  accept?: readonly number[];
  /** Give up after this long (at most `requestSettings.timeoutMs` and what is left of the deadline). */
  timeoutMs?: number;
  /**
   * The answer holds a secret. Core logs every z.request answer to Zapier's
   * logs, and its scrubber does not know a signing secret under `key`; a raw
   * request is logged without its body.
   */
  secretAnswer?: boolean;
  /** Rewords a failure before it is raised, for a caller that has more to tell the person. */
  reword?: (failure: Failure) => Failure;
}

export interface ProviderAnswer {
  status: number;
  /** The parsed JSON body; undefined for an empty body. */
  body: unknown;
}

/**
 * One request to the provider: auth headers are added by the app's
 * beforeRequest middleware; every non-2xx status the caller did not accept
 * becomes a plain-English platform error (429 a ThrottledError with its delay).
 */
export const callProvider = async (caller: Caller, call: ProviderCall): Promise<ProviderAnswer> => {
  const outcome = await attemptCall(caller, call);
  return outcome.ok ? outcome.answer : raise(caller.io, call.reword ? call.reword(outcome.failure) : outcome.failure);
};

/** Failures that may pass if the call is made again. */
const PASSING = new Set(['ProviderUnavailable', 'ProviderUnreachable']);

/** Whether a failed call may succeed if made again (a 5xx, a time-out, a dropped connection). */
export const mayPass = (failure: Failure): boolean => failure.kind === 'error' && PASSING.has(failure.code);

const attemptCall = async (
  caller: Caller,
  call: ProviderCall,
): Promise<{ ok: true; answer: ProviderAnswer } | { ok: false; failure: Failure }> => {
  const { io, connection, reader, deadline } = caller;
  const url = `${connection.baseUrl}${call.path}`;
  const origin = new URL(url).origin;
  const timeout = Math.min(
    call.timeoutMs ?? requestSettings.timeoutMs,
    requestSettings.timeoutMs,
    deadline.remainingMs(),
  );
  if (timeout < SHORTEST_CALL_MS) {
    return { ok: false, failure: describeUnreachable(call.action, origin, { type: 'request-timeout' }, reader) };
  }
  const options: RequestOptions = {
    url,
    method: call.method,
    skipThrowForStatus: true,
    // Our own 429 handling says more than the platform's default message.
    throwForThrottlingEarly: false,
    timeout,
    ...(call.params ? { params: call.params } : {}),
    ...(call.body ? { body: JSON.stringify(call.body) } : {}),
  };
  let response: { status: number; content: string; retryAfter?: string };
  try {
    response = await io.send(options, call.secretAnswer === true);
  } catch (cause) {
    if (cause instanceof Error && /^(AppError|ThrottledError|ExpiredAuthError)$/.test(cause.name)) throw cause;
    return { ok: false, failure: describeUnreachable(call.action, origin, cause, reader) };
  }
  const answer = judgeAnswer(response.status, response.content, { ...call, reader }, response.retryAfter);
  return answer.ok ? { ok: true, answer: { status: response.status, body: answer.body } } : answer;
};

export type RequestOptions = HttpRequestOptions & { url: string; throwForThrottlingEarly: boolean };

/**
 * Decodes a provider answer with its codec, or raises an error naming what
 * was off (reworded by `reword`, as callProvider rewords a failed call).
 */
export const decodeAnswer = <A>(
  caller: Caller,
  codec: t.Decoder<unknown, A>,
  body: unknown,
  action: string,
  reword: (failure: Failure) => Failure = (failure) => failure,
): A => {
  const decoded = codec.decode(body);
  if (isRight(decoded)) return decoded.right;
  return raise(caller.io, reword(describeUnexpectedShape(action, describeDecodeErrors(decoded.left), caller.reader)));
};
