import type { Bundle, HttpRequestOptions, HttpResponse, ZObject } from 'zapier-platform-core';
import type * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { clock } from '../clock';
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

/** The moment an operation's provider calls must be done by. */
export class Deadline {
  private constructor(readonly endsAt: number) {}

  /** A deadline `ms` from now; by default the whole operation budget. */
  static in(ms = requestSettings.operationBudgetMs): Deadline {
    return new Deadline(clock.now() + ms);
  }

  /** The operation budget counted from when the operation began. */
  static since(startedAt: number): Deadline {
    return new Deadline(startedAt + requestSettings.operationBudgetMs);
  }

  remainingMs(): number {
    return this.endsAt - clock.now();
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

export const raise = (z: ZObject, failure: Failure): never => {
  // What a person does not read (a status, a header, a host) goes to the log, for whoever supports the Zap.
  if (failure.log) z.console.log(failure.log);
  switch (failure.kind) {
    case 'auth':
      throw withoutBundle(new z.errors.ExpiredAuthError(failure.message));
    case 'throttled':
      throw new z.errors.ThrottledError(failure.message, failure.delaySeconds);
    case 'error':
      throw new z.errors.Error(failure.message, failure.code, failure.status);
  }
};

/** The connection of this bundle, or a plain error saying which field to fix. */
export const connectionOf = (z: ZObject, bundle: Pick<Bundle, 'authData'>): Connection => {
  const result = readConnection(bundle.authData);
  if (!result.ok) throw new z.errors.Error(result.message, 'InvalidConnection', 400);
  return result.connection;
};

/**
 * Who is calling the provider: the invocation's z object, the connection,
 * where a failure will be read, and the operation's deadline. Every provider
 * operation takes one.
 */
export interface Caller {
  z: ZObject;
  connection: Connection;
  reader: Exclude<Reader, 'setup'>;
  deadline: Deadline;
}

/** `startedAt`: when the operation began, if it may have waited before its first call (counted in its budget). */
export const callerOf = (
  z: ZObject,
  bundle: Pick<Bundle, 'authData'>,
  reader: Caller['reader'],
  startedAt?: number,
): Caller => ({
  z,
  connection: connectionOf(z, bundle),
  reader,
  deadline: startedAt === undefined ? Deadline.in() : Deadline.since(startedAt),
});

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
  /** Try this many times in all when the provider fails for a moment (5xx, time-out, dropped connection); 1 by default. */
  attempts?: number;
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
  const attempts = call.attempts ?? 1;
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await attemptCall(caller, call);
    if (outcome.ok) return outcome.answer;
    if (!mayPass(outcome.failure) || attempt >= attempts || caller.deadline.remainingMs() < SHORTEST_CALL_MS * 2) {
      return raise(caller.z, call.reword ? call.reword(outcome.failure) : outcome.failure);
    }
    await clock.sleep(200);
  }
};

/** Failures that may pass if the call is made again. */
const PASSING = new Set(['ProviderUnavailable', 'ProviderUnreachable']);

/** Whether a failed call may succeed if made again (a 5xx, a time-out, a dropped connection). */
export const mayPass = (failure: Failure): boolean => failure.kind === 'error' && PASSING.has(failure.code);

const attemptCall = async (
  caller: Caller,
  call: ProviderCall,
): Promise<{ ok: true; answer: ProviderAnswer } | { ok: false; failure: Failure }> => {
  const { z, connection, reader, deadline } = caller;
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
  let response: { status: number; content: string; retryAfter: string | undefined };
  try {
    response = call.secretAnswer ? await rawRequest(z, options) : await contentRequest(z, options);
  } catch (cause) {
    if (cause instanceof Error && /^(AppError|ThrottledError|ExpiredAuthError)$/.test(cause.name)) throw cause;
    return { ok: false, failure: describeUnreachable(call.action, origin, cause, reader) };
  }
  const answer = judgeAnswer(response.status, response.content, { ...call, reader }, response.retryAfter);
  return answer.ok ? { ok: true, answer: { status: response.status, body: answer.body } } : answer;
};

type RequestOptions = HttpRequestOptions & { url: string; throwForThrottlingEarly: boolean };

const contentRequest = async (z: ZObject, options: RequestOptions) => {
  const response: HttpResponse = await z.request(options);
  return { status: response.status, content: response.content, retryAfter: response.getHeader('retry-after') };
};

const rawRequest = async (z: ZObject, options: RequestOptions) => {
  const response = await z.request({ ...options, raw: true });
  return { status: response.status, content: await response.text(), retryAfter: response.getHeader('retry-after') };
};

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
  return raise(caller.z, reword(describeUnexpectedShape(action, describeDecodeErrors(decoded.left), caller.reader)));
};
