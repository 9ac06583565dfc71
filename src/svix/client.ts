import type { Bundle, ZObject } from 'zapier-platform-core';
import { Deadline, ioOf, raise, requestSettings, type Io, type RequestOptions } from '../zapier/io';
import type * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { describeDecodeErrors } from '../models/decode';
import { readConnection, type Connection } from './connection';
import {
  describeUnexpectedShape,
  describeUnreachable,
  judgeAnswer,
  type FailureContext,
  type Reader,
} from './failures';
import type { Failure } from '../zapier/io';

/** Below this, a call is not started: it could not get an answer in time. */
const SHORTEST_CALL_MS = 250;

/** The connection of this bundle, or a plain error saying which field to fix. */
export const connectionOf = (io: Pick<Io, 'errors'>, bundle: Pick<Bundle, 'authData'>): Connection => {
  const result = readConnection(bundle.authData);
  if (!result.ok) throw new io.errors.Error(result.message, 'InvalidConnection', 400);
  return result.connection;
};

/**
 * Who is calling Svix: the invocation's z object, the connection,
 * where a failure will be read, and the operation's deadline. Every Svix
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

export interface SvixRequest extends Omit<FailureContext, 'reader'> {
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

export interface SvixAnswer {
  status: number;
  /** The parsed JSON body; undefined for an empty body. */
  body: unknown;
}

/**
 * One request to Svix: auth headers are added by the app's
 * beforeRequest middleware; every non-2xx status the caller did not accept
 * becomes a plain-English platform error (429 a ThrottledError with its delay).
 */
export const callSvix = async (caller: Caller, call: SvixRequest): Promise<SvixAnswer> => {
  const outcome = await tryCall(caller, call);
  return outcome.ok ? outcome.answer : raise(caller.io, call.reword ? call.reword(outcome.failure) : outcome.failure);
};

/** Failures that may pass if the call is made again. */
const PASSING = new Set(['SvixUnavailable', 'SvixUnreachable']);

/** Whether a failed call may succeed if made again (a 5xx, a time-out, a dropped connection). */
export const mayPass = (failure: Failure): boolean => failure.kind === 'error' && PASSING.has(failure.code);

/** A call's answer, or how it failed, returned instead of raised: for a caller that decides what a failure means
 * (a delivery: tried again, or an error naming the event to resend). */
export type Tried<T> = { ok: true; answer: T } | { ok: false; failure: Failure };

/** One request to Svix, as callSvix makes it, its failure returned. */
export const tryCall = async (caller: Caller, call: SvixRequest): Promise<Tried<SvixAnswer>> => {
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

/** Decodes a Svix answer with its codec: the value, or the failure naming what was off (returned, not raised). */
export const tryDecode = <A>(caller: Caller, codec: t.Decoder<unknown, A>, body: unknown, action: string): Tried<A> => {
  const decoded = codec.decode(body);
  if (isRight(decoded)) return { ok: true, answer: decoded.right };
  return { ok: false, failure: describeUnexpectedShape(action, describeDecodeErrors(decoded.left), caller.reader) };
};

/**
 * Decodes a Svix answer with its codec, or raises an error naming what
 * was off (reworded by `reword`, as callSvix rewords a failed call).
 */
export const decodeAnswer = <A>(
  caller: Caller,
  codec: t.Decoder<unknown, A>,
  body: unknown,
  action: string,
  reword: (failure: Failure) => Failure = (failure) => failure,
): A => {
  const decoded = tryDecode(caller, codec, body, action);
  return decoded.ok ? decoded.answer : raise(caller.io, reword(decoded.failure));
};
