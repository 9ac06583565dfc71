import type { IncomingMessage, ServerResponse } from 'node:http';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { isRight } from 'fp-ts/Either';
import type { Bundle } from 'zapier-platform-core';
import type { AuctionStatusChangedItem } from '../../fields/auctionStatusChanged';
import type app from '../../index';
import { TRIGGER_KEY } from '../../triggers/auctionStatusChanged';
import { SubscribeData } from '../../models/inbound';
import { runBare } from './bareProcess';
import { errorDetails } from './errorDetails';
import { serveOnLoopback, type LoopbackServer } from './net';
import { platformInvoker, type Identity, type PlatformEventFields, type PlatformStandIn } from './platform';

/**
 * Stands in for Zapier: serves one target URL per Zap on loopback, answers
 * each delivery at once as Zapier does, turns it into the bundle Zapier
 * builds (`rawRequest` with `Http-` prefixed Camel-Case headers and the raw
 * body, `cleanedRequest`, `subscribeData`), and runs the trigger's operations
 * through the handler zapier-platform-core gives the platform, with the
 * method paths the platform sends and z.cache served by the platform stand-in.
 */

export type App = typeof app;

/** A Zap's subscription: the Zap (its id stays across edits), its target URL and what its subscribe returned. */
export interface Zap {
  id: string;
  name: string;
  targetUrl: string;
  /** The target URL's own id (a new one for each activation, as Zapier makes; an edit may keep it). */
  hook: string;
  /** Whether Zapier names the Zap to its subscribe (`meta.zap`); Trigger Inbox names none. */
  named: boolean;
  inputData: Record<string, unknown>;
  subscribeData: SubscribeData;
}

/** How Zapier may run an edit of a Zap that is on (it does not document it): which call first, and which URL. */
export interface Edit {
  order: 'subscribe-first' | 'unsubscribe-first';
  sameUrl: boolean;
  /** The edited Zap's options; the same as before by default. */
  inputData?: Record<string, unknown>;
  /** What happens between the two calls (events sent, say). */
  between?: () => Promise<void>;
}

/**
 * What perform made of a delivery, from what it returned: items (the Zap ran),
 * no items (filtered out, or a message this Zap already ran), a halt (refused
 * as not from the Consumer App) or an error; or, in a process of its own, no
 * answer at all (`silent`: the process ended first, as Zapier's runtime ends an
 * invocation whose event loop holds nothing; the event is lost).
 */
export type RunOutcome = 'ran' | 'no-items' | 'refused' | 'failed' | 'silent';

export interface ZapRun {
  zap: string;
  /** The Zap's id, the same across its edits. */
  zapId: string;
  messageId: string | undefined;
  outcome: RunOutcome;
  /** When perform started and finished (ms since the epoch). */
  startedAt: number;
  at: number;
  items: AuctionStatusChangedItem[];
  /** The error's plain-English message, for refused and failed runs. */
  message?: string;
  /** Another perform of the same message was running when this one started. */
  overlapped: boolean;
  /** It ran in a fresh process of its own, as Zapier's runtime runs it (see bareRunner.ts). */
  bare: boolean;
  /** In a process of its own: the calls it made to Svix. */
  svixCalls?: number;
}

export interface HookRunnerOptions {
  app: App;
  authData: Record<string, string>;
  /** Zapier's side of each invocation: z.cache and the log sink. */
  platform: PlatformStandIn;
  /**
   * A transient failure for this delivery, to exercise Svix's retries:
   * `unavailable` answers 503 without running the Zap; `answer-lost` answers
   * 500, as if Zapier's answer never reached Svix, and runs it anyway.
   */
  fault?: (messageId: string | undefined) => 'unavailable' | 'answer-lost' | undefined;
  onRun?: (run: ZapRun) => void;
  maxBodyBytes?: number;
  /** At most this many performs run at once; later deliveries wait their turn, as in Zapier's queue. */
  concurrency?: number;
  /** Asked for each delivery (by its message id): true runs its perform in a fresh process of its own, as Zapier's
   * runtime does. */
  inBareProcess?: (messageId: string | undefined) => boolean;
  /** Told of each answer from a process of its own: the delivery's body, and the calls to Svix it made. */
  onBareAnswer?: (content: string, svixCalls: number) => void;
  /** Zapier's limits (see HOOK_LIMIT); false takes every delivery. */
  hookLimit?: typeof HOOK_LIMIT | false;
  /** Who the runner's invocations run for (a connection of its own by default). */
  identity?: Identity;
  /**
   * How long after its subscribe returns Zapier serves a new subscription (no source says it serves one sooner, or
   * at once): until then its target URL answers as before (404 for a new one; 410, or the old subscription, for the
   * same one). 0 by default: served as the subscribe returns, never before.
   */
  serveLagMs?: number;
}

/**
 * What Zapier takes: about 30 webhooks a second for one hook (a Zap's target URL), and 10,000 in 5 minutes from
 * one person, across all their Zaps. Past either it answers 429, and Svix retries on its own schedule (Zapier's
 * "operating constraints" and its help on webhook rate limits; a 2025 copy of the latter says 20,000).
 */
export const HOOK_LIMIT = { perSecond: 30, perFiveMinutes: 10_000 };
const FIVE_MINUTES = 5 * 60_000;

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

const isItem = (value: unknown): value is AuctionStatusChangedItem =>
  typeof value === 'object' && value !== null && 'id' in value && 'status' in value && 'auctionUuid' in value;

/**
 * Which delivery's perform the code running now belongs to (its message id
 * and body): what a call it makes to Svix can be counted against, as
 * the soak counts the calls junk costs.
 */
const performing = new AsyncLocalStorage<{ messageId: string | undefined; content: string }>();
export const performingFor = (): { messageId: string | undefined; content: string } | undefined =>
  performing.getStore();

export class HookRunner {
  private server: LoopbackServer | undefined;
  /** The subscription each target URL serves, by the URL's id; and the URLs unsubscribed since (Zapier: 410). */
  private readonly zaps = new Map<string, Zap>();
  private readonly gone = new Set<string>();
  private readonly invoke: (method: string, bundle: object) => Promise<unknown>;
  readonly runs: ZapRun[] = [];
  private readonly running = new Set<Promise<void>>();
  /** Deliveries Zapier has taken but not run yet, oldest first. */
  private readonly queued: Array<() => void> = [];
  private active = 0;
  /** Performs in flight per Zap and message id, to see overlapping deliveries. */
  private readonly inFlight = new Map<string, number>();
  private readonly waiters: Array<() => void> = [];
  /** Arrival times of the deliveries each hook took in the last second, and the person's in the last 5 minutes. */
  private readonly arrivals = new Map<string, number[]>();
  private readonly taken: number[] = [];
  /** Deliveries answered 429 because they came faster than Zapier's limits; and those to a hook not (or no longer)
   * serving a Zap, answered 404 or 410, as to a Zap turned off while they were on their way. */
  hookLimitAnswers = 0;
  notServedAnswers = 0;

  /** Who the runner's invocations run for, as the platform stand-in keeps their cache entries apart. */
  readonly identity: Identity;

  /** What points an invocation in a process of its own at the platform stand-in. */
  private readonly platformFields: PlatformEventFields;

  constructor(private readonly options: HookRunnerOptions) {
    this.identity = options.identity ?? { authId: `auth-${randomBytes(4).toString('hex')}`, userId: 'sandbox-user' };
    this.platformFields = options.platform.eventFor(this.identity);
    this.invoke = platformInvoker({
      app: options.app,
      platform: options.platform,
      identity: this.identity,
      quiet: true,
    });
  }

  /** The Consumer App the runner's connection points at. */
  get appId(): string {
    return this.options.authData.appId ?? '';
  }

  private operation(
    operation: 'perform' | 'performSubscribe' | 'performUnsubscribe',
    // Zapier's `meta.zap` carries more than core's published type says (the Zap's name, where given).
    bundle: Omit<Partial<Bundle>, 'meta'> & { meta?: unknown },
  ): Promise<unknown> {
    return this.invoke(`triggers.${TRIGGER_KEY}.operation.${operation}`, {
      authData: this.options.authData,
      ...bundle,
    });
  }

  async start(): Promise<string> {
    this.server = await serveOnLoopback((request, response) => this.handle(request, response));
    return this.server.url;
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = undefined;
  }

  /**
   * Turns a Zap on: performSubscribe with a new target URL (Zapier makes one for each activation) and the Zap in
   * `meta`, as Zapier does; the Zap `id` of one turned on before, to turn it on again.
   */
  async turnOn(
    name: string,
    inputData: Record<string, unknown> = {},
    id = this.newId(),
    { named = true, hook = this.newId() }: { named?: boolean; hook?: string } = {},
  ): Promise<Zap> {
    return this.subscribe({ id, name, inputData, hook, named });
  }

  /** Turns a Zap off: performUnsubscribe, as Zapier does; its target URL then answers 410 (unless it serves again). */
  async turnOff(zap: Zap): Promise<unknown> {
    if (this.zaps.get(zap.hook) === zap) {
      this.zaps.delete(zap.hook);
      this.gone.add(zap.hook);
    }
    return this.operation('performUnsubscribe', {
      inputData: zap.inputData,
      targetUrl: zap.targetUrl,
      subscribeData: zap.subscribeData,
      ...(zap.named ? { meta: { zap: { id: zap.id, name: zap.name } } } : {}),
    });
  }

  /** An edit of a Zap that is on, published: its old subscription off and a new one on, in either order. */
  async edit(zap: Zap, edit: Edit): Promise<Zap> {
    const next = { id: zap.id, name: zap.name, named: zap.named, inputData: edit.inputData ?? zap.inputData };
    const hook = edit.sameUrl ? zap.hook : this.newId();
    if (edit.order === 'unsubscribe-first') {
      await this.turnOff(zap);
      await edit.between?.();
      return this.subscribe({ ...next, hook });
    }
    const edited = await this.subscribe({ ...next, hook });
    await edit.between?.();
    await this.turnOff(zap);
    return edited;
  }

  private newId = (): string => randomBytes(6).toString('hex');

  private async subscribe(zap: Omit<Zap, 'targetUrl' | 'subscribeData'>): Promise<Zap> {
    const { id, name, inputData, hook, named } = zap;
    const targetUrl = `${this.server?.url ?? ''}/hooks/standard/${hook}/`;
    const meta = named ? { meta: { zap: { id, name } } } : {};
    const returned = await this.operation('performSubscribe', { inputData, targetUrl, ...meta });
    const decoded = SubscribeData.decode(returned);
    if (!isRight(decoded)) throw new Error('performSubscribe returned no endpoint id and secret');
    const subscribed: Zap = { ...zap, targetUrl, subscribeData: decoded.right };
    const serve = () => {
      this.zaps.set(hook, subscribed);
      this.gone.delete(hook);
    };
    const lag = this.options.serveLagMs ?? 0;
    if (lag > 0) setTimeout(serve, lag);
    else serve();
    return subscribed;
  }

  /** Resolves when no delivery is being run. */
  idle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Zapier answers Svix as soon as a delivery arrives, then runs
   * perform: whatever perform makes of it, Svix does not send it again.
   */
  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const match = /^\/hooks\/standard\/([0-9a-f]+)\/?$/.exec(request.url ?? '');
    const zap = match?.[1] ? this.zaps.get(match[1]) : undefined;
    if (request.method !== 'POST' || !zap) {
      // Zapier answers 410 to a hook whose Zap was turned off (its documented sign to stop sending).
      const gone = match?.[1] !== undefined && this.gone.has(match[1]);
      this.notServedAnswers += 1;
      response.writeHead(gone ? 410 : 404, { 'content-type': 'application/json' }).end('{"status":"not found"}');
      return;
    }
    const content = await readBody(request, this.options.maxBodyBytes ?? 1024 * 1024);
    if (content === undefined) {
      response.writeHead(413).end();
      return;
    }
    if (this.overLimit(zap.hook)) {
      this.hookLimitAnswers += 1;
      response.writeHead(429, { 'content-type': 'application/json' }).end('{"status":"throttled"}');
      return;
    }
    const headers = zapierHeaders(request.headers);
    const messageId = headers['Http-Svix-Id'] ?? headers['Http-Webhook-Id'];
    const fault = this.options.fault?.(messageId);
    if (fault === 'unavailable') {
      response.writeHead(503, { 'content-type': 'application/json' }).end('{"status":"unavailable"}');
      return;
    }
    if (fault === 'answer-lost')
      response.writeHead(500, { 'content-type': 'application/json' }).end('{"status":"error"}');
    else response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"success"}');
    const method = request.method;
    const run = this.turn()
      .then(() => this.runPerform(zap, content, headers, messageId, method))
      .then((finished) => {
        this.runs.push(finished);
        this.options.onRun?.(finished);
      })
      .finally(() => this.release());
    this.running.add(run);
    void run.finally(() => {
      this.running.delete(run);
      if (this.running.size === 0) for (const resolve of this.waiters.splice(0)) resolve();
    });
  }

  /** Whether a delivery to this hook now is past Zapier's limits (the hook's, the person's); if not, it counts. */
  private overLimit(hook: string): boolean {
    const limit = this.options.hookLimit ?? HOOK_LIMIT;
    if (limit === false) return false;
    const now = Date.now();
    const times = this.arrivals.get(hook) ?? [];
    while (times.length > 0 && (times[0] ?? now) <= now - 1_000) times.shift();
    while (this.taken.length > 0 && (this.taken[0] ?? now) <= now - FIVE_MINUTES) this.taken.shift();
    if (times.length >= limit.perSecond || this.taken.length >= limit.perFiveMinutes) return true;
    times.push(now);
    this.taken.push(now);
    this.arrivals.set(hook, times);
    return false;
  }

  /** Resolves when this delivery may run. */
  private turn(): Promise<void> {
    if (this.active < (this.options.concurrency ?? 8)) {
      this.active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queued.push(resolve));
  }

  private release(): void {
    const next = this.queued.shift();
    if (next) next();
    else this.active -= 1;
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
    const key = `${zap.id} ${messageId ?? ''}`;
    const overlapped = (this.inFlight.get(key) ?? 0) > 0;
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    const startedAt = Date.now();
    const bare = this.options.inBareProcess?.(messageId) === true;
    const base = { zap: zap.name, zapId: zap.id, messageId, startedAt, overlapped, bare };
    try {
      if (bare) {
        const ran = await this.performBare(bundle);
        if (ran.svixCalls !== undefined) this.options.onBareAnswer?.(content, ran.svixCalls);
        return { ...base, ...ran, at: Date.now() };
      }
      const returned = await performing.run({ messageId, content }, () => this.operation('perform', bundle));
      const items = Array.isArray(returned) ? returned.filter(isItem) : [];
      return { ...base, outcome: items.length > 0 ? 'ran' : 'no-items', items, at: Date.now() };
    } catch (error) {
      const { name, message } = errorDetails(error);
      return {
        ...base,
        outcome: name === 'HaltedError' ? 'refused' : 'failed',
        items: [],
        message,
        at: Date.now(),
      };
    } finally {
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    }
  }

  /** Perform in a fresh process of its own, through core's handler, as Zapier's runtime runs it. */
  private async performBare(
    bundle: Partial<Bundle>,
  ): Promise<Pick<ZapRun, 'outcome' | 'items' | 'message' | 'svixCalls'>> {
    const method = `triggers.${TRIGGER_KEY}.operation.perform`;
    const bareBundle = { authData: this.options.authData, ...bundle };
    const answer = await runBare({ command: 'execute', method, bundle: bareBundle, ...this.platformFields });
    if (answer.kind === 'silent') {
      const message = `the process ended without answering (exit ${answer.code ?? 'by signal'})`;
      return { outcome: 'silent', items: [], message };
    }
    const svixCalls = answer.requests;
    if (!answer.ok) {
      const outcome = answer.name === 'HaltedError' ? 'refused' : 'failed';
      const error = Object.assign(new Error(answer.message ?? ''), { name: answer.name ?? 'Error' });
      return { outcome, items: [], message: errorDetails(error).message, svixCalls };
    }
    const items = Array.isArray(answer.results) ? answer.results.filter(isItem) : [];
    return { outcome: items.length > 0 ? 'ran' : 'no-items', items, svixCalls };
  }
}
