import type { RequestOptions } from '../../zapier/io';
import { encodeKsuidMs } from '../../svix/ksuid';
import { EVENT_TYPE_NAME } from '../../svix/eventType';
import type { Random } from './random';
import type { Scheduler } from './scheduler';
import { keysSigningAt, rotateKeys } from '../svix/rules';
import { signatureHeader } from '../svix/signing';

/**
 * Svix as a simulated run sees it: one Consumer App with the Zaps' endpoints, each with its secrets over time, the
 * app's messages, and the answers to a perform's calls over a faulty network; its clock (ms) may be off the world's,
 * and may step. It signs as Svix does, by every secret valid then (a test checks its signatures against the
 * Svix's reference library), from a cache of keys that may be up to 30 s old after a rotation.
 */

/** A secret of an endpoint: from, replaced, signing until, and a process's first read of it. All on the world's
 * clock: Svix keeps rotations in its database, whatever its clock does; `label` names it in traces. */
type Ends = { replacedAt?: number; signsUntil?: number; readAt?: number };
export type SecretSpell = { key: string; label: string; from: number; endpoint: number } & Ends;

/** A call of the app: a read of the secret, or of a message by its id (a delivery's); or a call on the Consumer App's
 * endpoints (a Zap's life, a sweep). */
type Kind = 'read' | 'message' | 'endpoints';
export type SvixCall = { kind: Kind; start: number; end: number; ok: boolean; fault?: string; showed?: SecretSpell } & {
  /** What it asked: a listing of the endpoints is `GET /endpoint`. */
  what?: string;
};

type Payload = { auctioneerUuid: string; auctionUuid: string; status: string };
/** A message as the auction service sent it: its body is what Svix delivers; `listed`, how Svix answers a read of it. */
export type SimMessage = { id: string; createdAt: number; payload: Payload; body: string; listed: string } & Commit &
  For;
/** The Zap it is for, when it was made on the world's clock, whether any attempt found Zapier serving its Zap, and
 * when Svix held it between a failed attempt and the next (the oracle judges a Zap's life by them). */
type For = { zap: number; madeAt: number; served?: boolean; held?: Array<{ from: number; until: number }> };
/** When the transaction that wrote a message committed (the world's clock): reads find it from then on. */
type Commit = { committedAt: number };

type Answer = { status: number; body: unknown };
const NOT_FOUND: Answer = { status: 404, body: { code: 'not_found', detail: 'Entity not found' } };
/** The network's faults, in the order they are drawn, and Svix's answers for those it answers. */
const FAULTS = ['503', '502', 'hang', '429', 'refused'];
const FAULT_ANSWERS: Partial<Record<string, Answer>> = {
  ...{ 503: { status: 503, body: '' }, 502: { status: 502, body: '<html>Bad gateway</html>' } },
  429: { status: 429, body: { code: 'rate_limited', detail: 'Too many requests' } },
};

/** What Svix keeps of an endpoint besides its secrets, as the app's calls read and change it. */
export type EndpointRecord = {
  uid?: string;
  url: string;
  description?: string;
  metadata: Record<string, string>;
  throttleRate?: number;
  disabled: boolean;
  deleted: boolean;
  updatedAt: number;
};

/** One endpoint of the app: its secrets, oldest first, and the rotations whose keys Svix's cache had not yet seen;
 * what Svix keeps of it, and where it pointed when (world's clock: Svix's workers may read it up to 30 s late). */
export class SimEndpoint {
  readonly secrets: SecretSpell[] = [];
  /** After a rotation at `at`, Svix signed with the keys before it until `until` (its cache of keys). */
  private readonly unseen: Array<{ at: number; until: number }> = [];
  readonly urls: Array<{ at: number; url: string }> = [];
  constructor(
    readonly id: string,
    readonly index: number,
    key: string,
    from: number,
    readonly record: EndpointRecord = { url: '', metadata: {}, disabled: false, deleted: false, updatedAt: from },
  ) {
    this.secrets.push({ key, label: 'S0', from, endpoint: index });
    this.urls.push({ at: from, url: record.url });
  }
  /** Where it pointed at `at`. */
  urlAt(at: number): string {
    let url = this.record.url;
    for (const change of this.urls) if (change.at <= at) url = change.url;
    return url;
  }
  /** As Svix lists and reads it (EndpointOut). */
  out(svixNow: number) {
    const { uid, url, description, metadata, throttleRate, disabled, updatedAt } = this.record;
    return {
      ...{ id: this.id, url, metadata, disabled, eventTypes: [EVENT_TYPE_NAME] },
      ...(uid === undefined ? {} : { uid }),
      ...(description === undefined ? {} : { description }),
      ...(throttleRate === undefined ? {} : { throttleRate }),
      ...{ createdAt: new Date(svixNow).toISOString(), updatedAt: new Date(updatedAt).toISOString() },
    };
  }
  get current(): SecretSpell {
    const current = this.secrets[this.secrets.length - 1];
    if (!current) throw new Error('The endpoint has no secret.');
    return current;
  }
  /** Rotates the secret at `now`, as Svix's server does (src/tools/svix/rules.ts): the old one keeps signing for
   * `graceSeconds` (0: stops at once), and Svix signs with the keys before it for `staleMs` more (its cache of keys).
   * False, and nothing changes, when Svix refuses it: ten replaced secrets are still signing. */
  rotate(now: number, key: string, graceSeconds: number, staleMs = 0): boolean {
    if (!rotateKeys(this.current, this.replaced(this.secrets), graceSeconds, now).ok) return false;
    Object.assign(this.current, { replacedAt: now, signsUntil: now + graceSeconds * 1_000 });
    this.secrets.push({ key, label: `S${this.secrets.length}`, from: now, endpoint: this.index });
    if (staleMs > 0) this.unseen.push({ at: now, until: now + staleMs });
    return true;
  }
  /** The secrets that sign an attempt made at `at`: the current one and the old ones still in their grace, as Svix's
   * cache of keys holds them then. */
  signingAt(at: number): SecretSpell[] {
    const cached = this.unseen.find((rotation) => rotation.at <= at && at < rotation.until)?.at;
    const as = cached === undefined ? at : cached - 1;
    const valid = this.secrets.filter((spell) => spell.from <= as);
    const current = valid[valid.length - 1] ?? this.current;
    return keysSigningAt(current, this.replaced(valid.filter((spell) => spell !== current)), at);
  }
  /** Replaced secrets as Svix keeps them: each with the time it stops signing. */
  private replaced = (spells: SecretSpell[]) =>
    spells.flatMap((key) => (key.signsUntil === undefined ? [] : [{ key, expiresAt: key.signsUntil }]));
}

export class SimSvix {
  readonly endpoints: SimEndpoint[];
  readonly messages = new Map<string, SimMessage>(); // oldest first
  readonly appId: string;
  private readonly byId: Map<string, SimEndpoint>;
  /** Until then (world's clock), every call of the app hangs until its timeout: Svix is down. */
  downUntil = -Infinity;
  constructor(
    private readonly random: Random,
    private readonly scheduler: Scheduler,
    /** Svix's clock ahead of the world's (negative: behind); it may step (`step`). */
    private offsetMs: number,
    /** The network's: latency, and faults as likely as the run's share of adversity. */
    private readonly faults: { random: Random; share: number },
    endpoints = 1,
  ) {
    this.appId = this.newId('app');
    this.endpoints = Array.from({ length: endpoints }, (_, index) => {
      return new SimEndpoint(this.newId('ep'), index, this.newSecret(), scheduler.now);
    });
    this.byId = new Map(this.endpoints.map((endpoint) => [endpoint.id, endpoint]));
  }
  now = (): number => this.scheduler.now + this.offsetMs; // Svix's clock
  /** Svix's clock steps by `ms` (forward or back). */
  step = (ms: number): void => void (this.offsetMs += ms);
  get offset(): number {
    return this.offsetMs;
  }
  newId = (prefix: string, at = this.now()): string => `${prefix}_${encodeKsuidMs(at, this.random.bytes(15))}`;
  newSecret = (): string => `whsec_${Buffer.from(this.random.bytes(24)).toString('base64')}`;
  endpoint = (index: number): SimEndpoint => {
    const endpoint = this.endpoints[index];
    if (!endpoint) throw new RangeError(`There is no endpoint ${index}.`);
    return endpoint;
  };
  /** The endpoint by id or uid, unless deleted. */
  find = (idOrUid: string): SimEndpoint | undefined =>
    this.byId.get(idOrUid) ?? this.endpoints.find((each) => !each.record.deleted && each.record.uid === idOrUid);
  /** An endpoint the app made (a Zap's), with the secret it chose: its index. */
  addEndpoint = (key: string, record: Omit<EndpointRecord, 'deleted' | 'updatedAt'>): SimEndpoint => {
    const at = this.scheduler.now;
    const made = { ...record, deleted: false, updatedAt: this.now() };
    const endpoint = new SimEndpoint(this.newId('ep'), this.endpoints.length, key, at, made);
    this.endpoints.push(endpoint);
    this.byId.set(endpoint.id, endpoint);
    return endpoint;
  };
  /** The signature header of a delivery signed at `seconds` (Svix's whole seconds) with these keys. */
  sign = (id: string, seconds: number, body: string, keys: readonly string[]): string =>
    signatureHeader(keys, id, String(seconds), body);
  /** A message the auction service sends now. Svix takes its time (the id's and the record's) before the transaction
   * that writes it, which commits `commitMs` later: only then do reads find it, and attempts begin. */
  createMessage(payload: SimMessage['payload'], commitMs: number, zap = 0): SimMessage {
    const [id, createdAt, body] = [this.newId('msg'), this.now(), JSON.stringify(payload)];
    const listed = JSON.stringify(messageOut({ id, createdAt, payload }));
    const madeAt = this.scheduler.now;
    const message = { id, createdAt, committedAt: madeAt + commitMs, payload, body, listed, zap, madeAt };
    this.messages.set(message.id, message);
    return message;
  }
  /** A call of the app, as the network carries it, logged; `learns`: a read of a secret counts as a process seeing it
   * (a delivery's; a subscribe's read is kept by the subscription, not shared with the processes). */
  async request(options: RequestOptions, log: SvixCall[], learns = true) {
    const { scheduler, faults } = this;
    const path = new URL(options.url).pathname;
    const kind = path.endsWith('/secret') ? 'read' : /\/msg\/[^/]+$/.test(path) ? 'message' : 'endpoints';
    const paces = typeof options.body === 'string' && options.body.includes('"throttleRate"') ? ' (pace)' : '';
    const what = `${options.method ?? 'GET'} ${path.replace(/^\/api\/v1\/app\/[^/]+/, '')}${paces}`;
    const call: SvixCall = { kind, start: scheduler.now, end: scheduler.now, ok: false, what };
    log.push(call);
    const timeout = typeof options.timeout === 'number' ? options.timeout : 10_000;
    const latency = faults.random.between(20, 180);
    const drawn = faults.random.chance(faults.share) ? faults.random.pick(FAULTS) : undefined;
    const fault = scheduler.now < this.downUntil ? 'hang' : drawn;
    const finish = (ok: boolean) => Object.assign(call, { end: scheduler.now, ok, fault });
    if (fault === 'refused') {
      await scheduler.sleep(2);
      finish(false);
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    }
    if (fault === 'hang' || latency > timeout) {
      await scheduler.sleep(timeout);
      finish(false);
      throw Object.assign(new Error('network timeout'), { name: 'FetchError', type: 'request-timeout' });
    }
    await scheduler.sleep(latency / 2);
    const body: unknown = typeof options.body === 'string' ? JSON.parse(options.body) : undefined;
    const answer =
      FAULT_ANSWERS[fault ?? ''] ?? this.answer(options.method ?? 'GET', path, { ...options.params }, body);
    const showed = answer.status === 200 ? this.readOf(path) : undefined;
    await scheduler.sleep(latency / 2);
    finish(answer.status < 300 || answer.status === 404);
    call.showed = showed;
    if (showed && learns) showed.readAt ??= scheduler.now;
    const content = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    return { status: answer.status, content, ...(fault === '429' ? { retryAfter: '1' } : {}) };
  }
  /** The endpoint whose secret a path reads, if it does. */
  private endpointOf(path: string): SimEndpoint | undefined {
    const [, id] = /^\/api\/v1\/app\/[^/]+\/endpoint\/([^/]+)\/secret$/.exec(path) ?? [];
    return id === undefined ? undefined : this.byId.get(id);
  }
  private readOf = (path: string): SecretSpell | undefined => this.endpointOf(path)?.current;
  /** Svix's answer to a call of the app, as it stands now. */
  private answer(method: string, path: string, params: Record<string, unknown>, body: unknown): Answer {
    const app = `/api/v1/app/${this.appId}`;
    if (!path.startsWith(app)) return NOT_FOUND;
    if (path.startsWith(`${app}/endpoint`)) return this.endpoints_(method, path.slice(app.length), body);
    if (method !== 'GET') return NOT_FOUND;
    const [, messageId] = /^\/msg\/([^/]+)$/.exec(path.slice(app.length)) ?? [];
    return messageId === undefined ? NOT_FOUND : this.read(decodeURIComponent(messageId));
  }
  /** The endpoint routes the app calls: list, create (a uid taken: 409), read, change, delete, read the secret. */
  private endpoints_(method: string, path: string, body: unknown): Answer {
    const svixNow = this.now();
    const live = this.endpoints.filter((each) => !each.record.deleted);
    if (path === '/endpoint' && method === 'GET')
      return {
        status: 200,
        body: { data: live.map((each) => each.out(svixNow)).reverse(), done: true, iterator: null },
      };
    if (path === '/endpoint' && method === 'POST') {
      const [uid, url, secret, description, throttleRate] = ['uid', 'url', 'secret', 'description', 'throttleRate'].map(
        (key) => fieldOf(body, key),
      );
      if (typeof uid === 'string' && this.find(uid))
        return { status: 409, body: { code: 'conflict', detail: 'uid exists' } };
      const made = this.addEndpoint(String(secret), {
        ...{ url: String(url), metadata: recordOf(fieldOf(body, 'metadata')), disabled: false },
        ...(typeof uid === 'string' ? { uid } : {}),
        ...(typeof description === 'string' ? { description } : {}),
        ...(typeof throttleRate === 'number' ? { throttleRate } : {}),
      });
      return { status: 201, body: made.out(svixNow) };
    }
    const [, idOrUid, secret] = /^\/endpoint\/([^/]+)(\/secret)?$/.exec(path) ?? [];
    const endpoint = idOrUid === undefined ? undefined : this.find(decodeURIComponent(idOrUid));
    if (!endpoint) return NOT_FOUND;
    if (secret && method === 'GET') return { status: 200, body: { key: endpoint.current.key } };
    if (secret) return NOT_FOUND;
    if (method === 'GET') return { status: 200, body: endpoint.out(svixNow) };
    if (method === 'DELETE') {
      endpoint.record.deleted = true;
      this.byId.delete(endpoint.id);
      return { status: 204, body: '' };
    }
    if (method !== 'PATCH') return NOT_FOUND;
    const [url, disabled, description, metadata, throttleRate] = [
      ...['url', 'disabled', 'description', 'metadata', 'throttleRate'],
    ].map((key) => fieldOf(body, key));
    const { record } = endpoint;
    if (typeof url === 'string') {
      record.url = url;
      endpoint.urls.push({ at: this.scheduler.now, url });
    }
    if (typeof disabled === 'boolean') record.disabled = disabled;
    if (typeof description === 'string') record.description = description;
    if (metadata !== undefined) record.metadata = recordOf(metadata);
    if (typeof throttleRate === 'number') record.throttleRate = throttleRate;
    record.updatedAt = svixNow;
    return { status: 200, body: endpoint.out(svixNow) };
  }
  /** A message as `GET …/msg/{id}` answers it: once its transaction has committed, else 404 (Svix writes a message
   * before it sends it). */
  private read(id: string): Answer {
    const message = this.messages.get(id);
    if (!message || message.committedAt > this.scheduler.now) return NOT_FOUND;
    return { status: 200, body: message.listed };
  }
}

/** A field of a request's JSON body (undefined: none). */
const fieldOf = (body: unknown, key: string): unknown =>
  typeof body === 'object' && body ? Reflect.get(body, key) : undefined;
/** A JSON object of strings, as Svix keeps metadata. */
const recordOf = (value: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(Object(value)).flatMap(([key, each]) => (typeof each === 'string' ? [[key, each]] : [])),
  );

/** A message as Svix's record lists it: its payload marked, so the oracle tells Svix's copy from a delivered body. */
const messageOut = ({ id, createdAt, payload }: Pick<SimMessage, 'id' | 'createdAt' | 'payload'>) => ({
  ...{ id, eventType: EVENT_TYPE_NAME, payload: { ...payload, copy: 'record' } },
  ...{ timestamp: new Date(createdAt).toISOString(), channels: null, eventId: null, tags: null },
});
