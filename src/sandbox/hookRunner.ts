import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { isRight } from 'fp-ts/Either';
import { createAppHandler, type Bundle } from 'zapier-platform-core';
import type { AuctionStatusChangedItem } from '../fields/auctionStatusChanged';
import type app from '../index';
import { TRIGGER_KEY } from '../triggers/auctionStatusChanged';
import { SubscribeData } from '../triggers/delivery';
import { listenOnLoopback } from './net';

/**
 * Stands in for Zapier: serves one target URL per Zap on loopback, turns each
 * delivery into the bundle Zapier builds (`rawRequest` with `Http-` prefixed
 * Camel-Case headers and the raw body, `cleanedRequest`, `subscribeData`), and
 * runs the trigger's operations through the handler zapier-platform-core gives
 * the platform, with the method paths the platform sends.
 */

export type App = typeof app;

export interface Zap {
  id: string;
  name: string;
  targetUrl: string;
  inputData: Record<string, unknown>;
  subscribeData: SubscribeData;
}

export type RunOutcome = 'ran' | 'filtered' | 'duplicate' | 'refused' | 'failed';

export interface ZapRun {
  zap: string;
  messageId: string | undefined;
  outcome: RunOutcome;
  /** When perform finished (ms since the epoch). */
  at: number;
  items: AuctionStatusChangedItem[];
  /** The error's plain-English message, for refused and failed runs. */
  message?: string;
}

export interface HookRunnerOptions {
  app: App;
  authData: Record<string, string>;
  /**
   * A transient failure for this delivery, to exercise the provider's retries:
   * `unavailable` answers 503 without running the Zap; `answer-lost` runs it,
   * then answers 500 as if the answer never reached the provider.
   */
  fault?: (messageId: string | undefined) => 'unavailable' | 'answer-lost' | undefined;
  onRun?: (run: ZapRun) => void;
  maxBodyBytes?: number;
}

/** `svix-id` → `Http-Svix-Id`, as Zapier passes headers to a hook trigger. */
export const zapierHeaderName = (name: string): string =>
  `Http-${name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1).toLowerCase())
    .join('-')}`;

export const zapierHeaders = (headers: IncomingMessage['headers']): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[zapierHeaderName(name)] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
};

const readBody = (request: IncomingMessage, limit: number): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        resolve(undefined);
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });

/** Zapier's error text is JSON for app errors; the runner shows only the message. */
export const errorMessage = (error: unknown): { code?: string; message: string } => {
  // Outside tests core appends the invocation's console lines to the message.
  const text = (error instanceof Error ? error.message : String(error)).split('\n\nConsole logs:')[0] ?? '';
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'message' in parsed && typeof parsed.message === 'string') {
      const code = 'code' in parsed && typeof parsed.code === 'string' ? parsed.code : undefined;
      return code ? { code, message: parsed.message } : { message: parsed.message };
    }
  } catch {
    // a plain message
  }
  return { message: text };
};

const isItem = (value: unknown): value is AuctionStatusChangedItem =>
  typeof value === 'object' && value !== null && 'id' in value && 'status' in value && 'auctionUuid' in value;

export class HookRunner {
  private server: Server | undefined;
  private base = '';
  private readonly zaps = new Map<string, Zap>();
  private readonly handler: ReturnType<typeof createAppHandler>;
  /** z.cache for every run, kept between runs as the platform's is. */
  private readonly cache: Record<string, unknown> = {};
  readonly runs: ZapRun[] = [];
  private inFlight = 0;
  /** Message ids each Zap has been handed before: a second empty result is a dropped duplicate. */
  private readonly received = new Map<string, Set<string>>();
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly options: HookRunnerOptions) {
    this.handler = createAppHandler(options.app);
  }

  /** The Consumer App the runner's connection points at. */
  get appId(): string {
    return this.options.authData.appId ?? '';
  }

  /** One invocation, as the platform makes it. */
  private async invoke(
    operation: 'perform' | 'performSubscribe' | 'performUnsubscribe',
    bundle: Partial<Bundle>,
  ): Promise<unknown> {
    const { results } = await this.handler({
      command: 'execute',
      method: `triggers.${TRIGGER_KEY}.operation.${operation}`,
      bundle: { authData: this.options.authData, ...bundle },
      zcacheTestObj: this.cache,
      calledFromCli: true,
    });
    return results;
  }

  async start(): Promise<string> {
    const server = createServer((request, response) => {
      this.handle(request, response).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
    this.server = server;
    this.base = `http://127.0.0.1:${await listenOnLoopback(server)}`;
    return this.base;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = undefined;
  }

  /** Turns a Zap on: performSubscribe with this runner's target URL, as Zapier does. */
  async turnOn(name: string, inputData: Record<string, unknown> = {}): Promise<Zap> {
    const id = randomBytes(6).toString('hex');
    const targetUrl = `${this.base}/hooks/standard/${id}/`;
    const returned = await this.invoke('performSubscribe', { inputData, targetUrl });
    const decoded = SubscribeData.decode(returned);
    if (!isRight(decoded)) throw new Error('performSubscribe returned no endpoint id and secret');
    const zap: Zap = { id, name, targetUrl, inputData, subscribeData: decoded.right };
    this.zaps.set(id, zap);
    return zap;
  }

  /** Turns a Zap off: performUnsubscribe, as Zapier does. */
  async turnOff(zap: Zap): Promise<unknown> {
    this.zaps.delete(zap.id);
    return this.invoke('performUnsubscribe', {
      inputData: zap.inputData,
      targetUrl: zap.targetUrl,
      subscribeData: zap.subscribeData,
    });
  }

  /** Resolves when no delivery is being run. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const match = /^\/hooks\/standard\/([0-9a-f]+)\/?$/.exec(request.url ?? '');
    const zap = match?.[1] ? this.zaps.get(match[1]) : undefined;
    if (request.method !== 'POST' || !zap) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"not found"}');
      return;
    }
    const content = await readBody(request, this.options.maxBodyBytes ?? 1024 * 1024);
    if (content === undefined) {
      response.writeHead(413).end();
      return;
    }
    const headers = zapierHeaders(request.headers);
    const messageId = headers['Http-Svix-Id'] ?? headers['Http-Webhook-Id'];
    const fault = this.options.fault?.(messageId);
    if (fault === 'unavailable') {
      response.writeHead(503, { 'content-type': 'application/json' }).end('{"status":"unavailable"}');
      return;
    }
    this.inFlight += 1;
    try {
      const run = await this.runPerform(zap, content, headers, messageId, request.method);
      this.runs.push(run);
      this.options.onRun?.(run);
      // Zapier accepts every well-formed delivery; what perform made of it shows in the Zap's history.
      if (fault === 'answer-lost')
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"status":"error"}');
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"success"}');
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) for (const resolve of this.waiters.splice(0)) resolve();
    }
  }

  private async runPerform(
    zap: Zap,
    content: string,
    headers: Record<string, string>,
    messageId: string | undefined,
    method: string,
  ): Promise<ZapRun> {
    let cleaned: unknown;
    try {
      cleaned = JSON.parse(content);
    } catch {
      // Zapier hands perform an empty cleanedRequest when the body is not JSON.
      cleaned = {};
    }
    const bundle: Partial<Bundle> = {
      inputData: zap.inputData,
      subscribeData: zap.subscribeData,
      targetUrl: zap.targetUrl,
      rawRequest: { method: method === 'POST' ? 'POST' : 'GET', querystring: '', headers, content },
      cleanedRequest:
        typeof cleaned === 'object' && cleaned !== null ? { ...cleaned, querystring: {} } : { querystring: {} },
    };
    const seen = this.received.get(zap.id) ?? new Set<string>();
    this.received.set(zap.id, seen);
    const before = messageId !== undefined && seen.has(messageId);
    try {
      const returned = await this.invoke('perform', bundle);
      const items = Array.isArray(returned) ? returned.filter(isItem) : [];
      if (messageId !== undefined) seen.add(messageId);
      const outcome: RunOutcome = items.length > 0 ? 'ran' : before ? 'duplicate' : 'filtered';
      return { zap: zap.name, messageId, outcome, items, at: Date.now() };
    } catch (error) {
      const { code, message } = errorMessage(error);
      return {
        zap: zap.name,
        messageId,
        outcome: code === 'DeliveryRefused' ? 'refused' : 'failed',
        items: [],
        message,
        at: Date.now(),
      };
    }
  }
}
