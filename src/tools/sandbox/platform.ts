import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as t from 'io-ts';
import { createAppHandler } from 'zapier-platform-core';
import { isRight } from 'fp-ts/Either';
import { serveOnLoopback, type LoopbackServer } from './net';
import { CACHE_SCOPE } from '../../zapier/io';

/**
 * A stand-in for Zapier's side of an invocation, on loopback: the RPC service
 * behind `z.cache` and the sink of core's log stream. An invocation that
 * carries `rpc_base` and `token` (see `eventFor`) makes zapier-platform-core
 * use its own RPC client, exactly as on Zapier, instead of the local tester's
 * in-memory mock.
 *
 * It behaves as the platform's cache does where that matters here: entries
 * expire after their TTL, `scope` keeps one connection's (or user's) entries
 * apart from another's, and `set` answers as Zapier documents it
 * (zapier/zapier-platform#921): `true` stored, `false` not stored (with `nx`:
 * the key exists), `null` throttled (nothing stored).
 * `answerConflictsWith(null)` answers a conflict as Redis's own `SET NX`
 * does, so the app is proven safe under either reading.
 */

/** Who an invocation runs for: `['auth']` scopes to the connection, `['user']` to the Zapier user. */
export interface Identity {
  authId: string;
  userId: string;
}

/** The fields of a handler event that point core at this stand-in. */
export interface PlatformEventFields {
  rpc_base: string;
  token: string;
  /** Copied into process.env by core before it opens its log stream. */
  environment: { LOGGING_ENDPOINT: string };
}

/** One `z.cache` call as the stand-in received it, with the key as the app named it. */
export interface CacheCall {
  method: 'zcache_get' | 'zcache_set' | 'zcache_delete';
  key: string;
  scope: string[] | null;
  ttl: number | null;
  nx: boolean | null;
  /** What the stand-in answered (absent when a fault answered instead). */
  result?: unknown;
  fault?: RpcFault['kind'];
}

/** A fault to answer one RPC call with, for the fault tests and the soak. */
export type RpcFault =
  /** Answer 503 without doing anything: core's RPC client retries (3 attempts in all). */
  | { kind: 'unavailable' }
  /** Do the work, then answer 503: core's retry then meets the entry the first attempt stored. */
  | { kind: 'store-then-unavailable' }
  /** Answer `null` without doing anything, as Zapier's cache does when it throttles a get or a set. */
  | { kind: 'throttle' }
  /** Answer `{error}`: core gives up at once. */
  | { kind: 'error' }
  /** Answer a get as if the key were absent, as a read made a moment earlier would have. */
  | { kind: 'miss' };

export interface PlatformOptions {
  /** Wait this long before answering each RPC call (a network round trip), 0 by default. */
  delayMs?: number;
  /** Called for every cache call; a fault it returns replaces the normal answer. */
  fault?: (call: CacheCall) => RpcFault | undefined;
  /** At most this many live entries; the oldest go first. */
  maxEntries?: number;
}

const RpcRequest = t.type(
  { id: t.union([t.string, t.number]), method: t.string, params: t.array(t.unknown), storeKey: t.unknown },
  'RpcRequest',
);

const Scope = t.union([t.null, t.undefined, t.array(t.keyof({ auth: null, user: null }))]);

interface Entry {
  value: string;
  /** ms since the epoch; undefined never expires. */
  expiresAt: number | undefined;
}

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });

const answer = (response: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class PlatformStandIn {
  private server: LoopbackServer | undefined;
  private readonly entries = new Map<string, Entry>();
  private readonly identities = new Map<string, Identity>();
  /** Every cache call, oldest first (bounded), for the tests and the benchmark. */
  readonly calls: CacheCall[] = [];
  /** Lines core's log stream sent, parsed (bounded). */
  readonly logLines: unknown[] = [];
  private rpcRequests = 0;
  /**
   * What a `set` with `nx` answers when the key exists: `false` as Zapier
   * documents (the default), or `null` as Redis's own `SET NX` does.
   */
  private nxConflict: false | null = false;
  /**
   * What a throttled `set` answers: `null` as Zapier's maintainers say (the default), or `false` as core's own
   * cache test mocks a rate-limited set. Either way nothing is stored.
   */
  private throttledSet: false | null = null;

  constructor(private readonly options: PlatformOptions = {}) {}

  /** From now on, a `set` with `nx` of an existing key answers this (see nxConflict). */
  answerConflictsWith(answer: false | null): void {
    this.nxConflict = answer;
  }

  /** From now on, a throttled `set` answers this (see throttledSet). */
  answerThrottledSetsWith(answer: false | null): void {
    this.throttledSet = answer;
  }

  async start(): Promise<string> {
    this.server = await serveOnLoopback((request, response) => this.handle(request, response));
    return this.server.url;
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = undefined;
  }

  get url(): string {
    return this.server?.url ?? '';
  }

  /** HTTP requests the RPC endpoint received, retries by core's client included. */
  get rpcRequestCount(): number {
    return this.rpcRequests;
  }

  /**
   * The fields an invocation for this connection carries, as Zapier's own
   * events do: the RPC address, a token that stands for the connection and
   * user, and where core's log stream goes.
   */
  eventFor(identity: Identity): PlatformEventFields {
    const token = randomBytes(16).toString('hex');
    this.identities.set(token, identity);
    return {
      rpc_base: `${this.url}/rpc`,
      token,
      environment: { LOGGING_ENDPOINT: `${this.url}/logs` },
    };
  }

  /** Forgets the recorded calls and log lines (the entries stay). */
  resetCalls(): void {
    this.calls.length = 0;
    this.logLines.length = 0;
    this.rpcRequests = 0;
  }

  /** Empties the cache, as if its entries had expired. */
  clear(): void {
    this.entries.clear();
  }

  /** Stores a value as another process would have (no RPC call is recorded), for tests. */
  poke(identity: Identity, key: string, value: unknown, scope: string[] | null = CACHE_SCOPE): void {
    this.store(this.storageKey(identity, key, scope), JSON.stringify(value), null);
  }

  /** The live entry for a key as the app named it, under a scope, for tests to look at. */
  peek(identity: Identity, key: string, scope: string[] | null = CACHE_SCOPE): unknown {
    const entry = this.live(this.storageKey(identity, key, scope));
    return entry === undefined ? undefined : JSON.parse(entry.value);
  }

  private storageKey(identity: Identity, key: string, scope: readonly string[] | null): string {
    const parts = ['app'];
    if (scope?.includes('user')) parts.push(`user=${identity.userId}`);
    if (scope?.includes('auth')) parts.push(`auth=${identity.authId}`);
    return `${parts.join('|')}|${key}`;
  }

  private live(storageKey: string): Entry | undefined {
    const entry = this.entries.get(storageKey);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      this.entries.delete(storageKey);
      return undefined;
    }
    return entry;
  }

  private store(storageKey: string, value: string, ttl: number | null): void {
    this.entries.delete(storageKey);
    this.entries.set(storageKey, { value, expiresAt: ttl === null ? undefined : Date.now() + ttl * 1000 });
    const max = this.options.maxEntries ?? 100_000;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= max) break;
      this.entries.delete(oldest);
    }
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const path = (request.url ?? '/').split('?')[0];
    if (request.method === 'POST' && path === '/logs') {
      for (const line of body.split('\n')) {
        if (line.trim() === '' || this.logLines.length >= 10_000) continue;
        try {
          this.logLines.push(JSON.parse(line));
        } catch {
          this.logLines.push(line);
        }
      }
      answer(response, 200, {});
      return;
    }
    if (request.method !== 'POST' || path !== '/rpc') {
      answer(response, 404, { error: 'not found' });
      return;
    }
    this.rpcRequests += 1;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    const rpc = RpcRequest.decode(parsed);
    if (!isRight(rpc)) {
      answer(response, 400, { error: 'not an RPC request' });
      return;
    }
    const { id, method, params } = rpc.right;
    const token = request.headers['x-token'];
    const identity = typeof token === 'string' ? this.identities.get(token) : undefined;
    if (!identity) {
      answer(response, 403, { id, error: 'The invocation token is not valid.' });
      return;
    }
    if (this.options.delayMs) await sleep(this.options.delayMs);
    const reply = this.call(identity, method, params);
    if (reply.status !== 200) {
      answer(response, reply.status, { error: 'unavailable' });
      return;
    }
    answer(response, 200, 'error' in reply ? { id, error: reply.error } : { id, result: reply.result });
  }

  private call(
    identity: Identity,
    method: string,
    params: unknown[],
  ): { status: number; result: unknown } | { status: number; error: string } {
    if (method !== 'zcache_get' && method !== 'zcache_set' && method !== 'zcache_delete') {
      return { status: 200, error: `The platform stand-in does not answer ${method}.` };
    }
    const [key, second, ttlParam, scopeParam, nxParam] = params;
    const scopeOf = (value: unknown) => {
      const decoded = Scope.decode(value);
      return isRight(decoded) ? (decoded.right ?? null) : undefined;
    };
    const scope = scopeOf(method === 'zcache_set' ? scopeParam : second);
    if (typeof key !== 'string' || scope === undefined) {
      return { status: 200, error: 'zcache: the key must be text and the scope a list of "auth" or "user".' };
    }
    const ttl = method === 'zcache_set' && typeof ttlParam === 'number' ? ttlParam : null;
    const nx = method === 'zcache_set' && typeof nxParam === 'boolean' ? nxParam : null;
    const call: CacheCall = { method, key, scope, ttl, nx };
    if (this.calls.length < 100_000) this.calls.push(call);
    const fault = this.options.fault?.(call);
    if (fault) call.fault = fault.kind;
    if (fault?.kind === 'unavailable') return { status: 503, result: null };
    if (fault?.kind === 'error') return { status: 200, error: 'The cache could not answer.' };
    if (fault?.kind === 'throttle' && method === 'zcache_set') return { status: 200, result: this.throttledSet };
    if (fault?.kind === 'throttle' || fault?.kind === 'miss') return { status: 200, result: null };

    const storageKey = this.storageKey(identity, key, scope);
    let result: unknown;
    if (method === 'zcache_get') {
      result = this.live(storageKey)?.value ?? null;
    } else if (method === 'zcache_delete') {
      result = this.entries.delete(storageKey);
    } else if (typeof second !== 'string') {
      return { status: 200, error: 'zcache_set: the value must be JSON text.' };
    } else if (nx === true && this.live(storageKey) !== undefined) {
      result = this.nxConflict;
    } else {
      this.store(storageKey, second, ttl);
      result = true;
    }
    if (fault?.kind === 'store-then-unavailable') return { status: 503, result: null };
    call.result = result;
    return { status: 200, result };
  }
}

export interface InvokerOptions {
  /** The app definition, or the path of a module that exports it (as zapierwrapper.js passes index.js). */
  app: object | string;
  platform: PlatformStandIn;
  identity: Identity;
  /**
   * Mark invocations as local runs, as the CLI does: core then prints no memory
   * line per invocation and does not patch Node's http and fetch to log every
   * request. For the sandbox's own output; the tests and the benchmark leave it off.
   */
  quiet?: boolean;
}

/** Runs an app's operations through core's handler as Zapier does, with z.cache and logs served by the stand-in. */
export const platformInvoker = (options: InvokerOptions) => {
  const handler = createAppHandler(options.app);
  const fields = options.platform.eventFor(options.identity);
  return async (method: string, bundle: object): Promise<unknown> => {
    const { results } = await handler({
      command: 'execute',
      method,
      bundle,
      ...fields,
      ...(options.quiet ? { calledFromCli: true } : {}),
    });
    return results;
  };
};
