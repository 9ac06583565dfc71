import type { HttpRequestOptions, HttpResponse, ZObject } from 'zapier-platform-core';
import { OPERATION_BUDGET_MS } from '../limits';

/**
 * Zapier's platform as the app meets it, one port for everything an operation does through `z` (requests, z.cache,
 * errors, the log), and the time Zapier gives an operation. The ground floor: it imports nothing of the app but its limits.
 */

/** What a person reads when an operation cannot go on, and which of Zapier's errors carries it: a message that
 * starts with what to do (Zapier shows at most 250 characters), then what happened; what a person does not read (a
 * status, a header, a host) goes to `log`, for whoever supports the Zap. */
export type Failure = (
  | { kind: 'auth'; message: string }
  | { kind: 'throttled'; message: string; delaySeconds?: number }
  | { kind: 'error'; code: string; status: number; message: string }
) & { log?: string };

/**
 * Time limits. Zapier stops any step after 30 s, so an operation that makes
 * several Svix calls (a subscribe makes up to four) shares one budget,
 * and each call gets what is left of it, at most `timeoutMs`. An object so the
 * fault tests can shorten them.
 */
export const requestSettings = { timeoutMs: 10_000, operationBudgetMs: OPERATION_BUDGET_MS };

/** The moment an operation's Svix calls must be done by, on the clock the operation runs on. */
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

export type RequestOptions = HttpRequestOptions & { url: string; throwForThrottlingEarly: boolean };

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
