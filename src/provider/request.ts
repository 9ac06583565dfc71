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
} from './failures';

/**
 * Every provider call gives up after `timeoutMs`; Zapier's own limit per step
 * is 30 s. An object so the fault tests can shorten it.
 */
export const requestSettings = { timeoutMs: 15_000 };

export const raise = (z: ZObject, failure: Failure): never => {
  switch (failure.kind) {
    case 'auth':
      throw new z.errors.ExpiredAuthError(failure.message);
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

export interface ProviderCall extends FailureContext {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path below the base URL; callers encode and check ids before building it. */
  path: string;
  params?: Record<string, string | number | boolean>;
  body?: object;
  /** Statuses the caller handles itself instead of raising an error. */
  accept?: readonly number[];
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
export const callProvider = async (z: ZObject, connection: Connection, call: ProviderCall): Promise<ProviderAnswer> => {
  const url = `${connection.baseUrl}${call.path}`;
  const options: HttpRequestOptions & { url: string; throwForThrottlingEarly: boolean } = {
    url,
    method: call.method,
    skipThrowForStatus: true,
    // Our own 429 handling says more than the platform's default message.
    throwForThrottlingEarly: false,
    timeout: requestSettings.timeoutMs,
    ...(call.params ? { params: call.params } : {}),
    ...(call.body ? { body: JSON.stringify(call.body) } : {}),
  };
  let response: HttpResponse;
  try {
    response = await z.request(options);
  } catch (cause) {
    if (cause instanceof Error && /^(AppError|ThrottledError|ExpiredAuthError)$/.test(cause.name)) throw cause;
    return raise(z, describeUnreachable(call.action, new URL(url).origin, cause));
  }
  const answer = judgeAnswer(response.status, response.content, call, response.getHeader('retry-after'));
  if (!answer.ok) return raise(z, answer.failure);
  return { status: response.status, body: answer.body };
};

/** Decodes a provider answer with its codec, or raises an error naming what was off. */
export const decodeAnswer = <A>(z: ZObject, codec: t.Decoder<unknown, A>, body: unknown, action: string): A => {
  const decoded = codec.decode(body);
  if (isRight(decoded)) return decoded.right;
  return raise(z, describeUnexpectedShape(action, describeDecodeErrors(decoded.left)));
};
