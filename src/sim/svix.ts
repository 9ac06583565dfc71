import { Webhook } from 'standardwebhooks';
import { encodeKsuidMs } from '../provider/ksuid';
import { EVENT_TYPE_NAME } from '../provider/eventType';
import type { Random } from './random';

/**
 * Svix as a simulated run sees it: one Consumer App with the Zap's endpoint,
 * the endpoint's secrets over time, the app's messages, and the answers to
 * the calls a delivery's perform makes. Times are Svix's own clock (ms),
 * which may be ahead of or behind the world's. Deliveries are signed with
 * the provider's own reference library (standardwebhooks), with every
 * secret valid at the moment of signing, as Svix signs each attempt.
 */

/** One secret of the endpoint: when it became current, and when it was replaced and stopped signing (Svix's clock). */
export interface SecretSpell {
  key: string;
  /** S0, S1, …: how a trace names it. */
  label: string;
  from: number;
  replacedAt?: number;
  /** The end of its grace period: it signs until then. */
  signsUntil?: number;
}

export interface SimMessage {
  id: string;
  createdAt: number;
  payload: { auctioneerUuid: string; auctionUuid: string; status: string };
  /** The body as the auction service sent it and Svix delivers it. */
  body: string;
}

export interface SvixAnswer {
  status: number;
  body: unknown;
}

/** Svix keeps at most this many old secrets signing during their grace. */
const MAX_OLD_SECRETS = 10;
const NOT_FOUND: SvixAnswer = { status: 404, body: { code: 'not_found', detail: 'Entity not found' } };

export class SimSvix {
  readonly secrets: SecretSpell[] = [];
  readonly messages = new Map<string, SimMessage>();
  /** Oldest first. */
  private readonly byTime: SimMessage[] = [];
  private readonly signers = new Map<string, Webhook>();
  readonly appId: string;
  readonly endpointId: string;

  constructor(
    private readonly random: Random,
    /** Svix's clock. */
    readonly now: () => number,
  ) {
    this.appId = this.newId('app');
    this.endpointId = this.newId('ep');
    this.secrets.push({ key: this.newSecret(), label: 'S0', from: now() });
  }

  newId(prefix: string, at = this.now()): string {
    return `${prefix}_${encodeKsuidMs(at, this.random.bytes(15))}`;
  }

  newSecret(): string {
    return `whsec_${Buffer.from(this.random.bytes(24)).toString('base64')}`;
  }

  get current(): SecretSpell {
    const current = this.secrets[this.secrets.length - 1];
    if (!current) throw new Error('The endpoint has no secret.');
    return current;
  }

  /** Rotates the endpoint's secret; the old one keeps signing for `graceMs` (0: stops at once). */
  rotate(graceMs: number): SecretSpell {
    const at = this.now();
    const old = this.current;
    old.replacedAt = at;
    old.signsUntil = at + graceMs;
    const next = { key: this.newSecret(), label: `S${this.secrets.length}`, from: at };
    this.secrets.push(next);
    return next;
  }

  /** The secrets that sign an attempt made at `at`: the current one and the old ones still in their grace. */
  signingAt(at: number): SecretSpell[] {
    const old = this.secrets
      .filter((spell) => spell.signsUntil !== undefined && spell.signsUntil > at && spell.from <= at)
      .slice(-MAX_OLD_SECRETS);
    return [...this.secrets.filter((spell) => spell.from <= at && spell.replacedAt === undefined), ...old];
  }

  /** The spell of a key, if the endpoint ever had it. */
  spellOf(key: string): SecretSpell | undefined {
    return this.secrets.find((spell) => spell.key === key);
  }

  /** The signature header of a delivery signed at `seconds` (Svix's whole seconds) with these keys. */
  sign(id: string, seconds: number, body: string, keys: readonly string[]): string {
    return keys
      .map((key) => {
        let signer = this.signers.get(key);
        if (!signer) this.signers.set(key, (signer = new Webhook(key)));
        return signer.sign(id, new Date(seconds * 1000), body);
      })
      .join(' ');
  }

  /** A message the auction service sends now. */
  createMessage(payload: SimMessage['payload']): SimMessage {
    const createdAt = this.now();
    const message = { id: this.newId('msg', createdAt), createdAt, payload, body: JSON.stringify(payload) };
    this.messages.set(message.id, message);
    this.byTime.push(message);
    return message;
  }

  /** Svix's answer to a call of the app, as it stands now. */
  answer(method: string, path: string, params: Record<string, unknown>): SvixAnswer {
    const app = `/api/v1/app/${this.appId}`;
    if (method !== 'GET' || !path.startsWith(app)) return NOT_FOUND;
    const rest = path.slice(app.length);
    if (rest === `/endpoint/${this.endpointId}/secret`) return { status: 200, body: { key: this.current.key } };
    if (rest === '/msg') return { status: 200, body: this.list(params) };
    const byId = /^\/msg\/([^/]+)$/.exec(rest);
    if (byId) {
      const message = this.messages.get(decodeURIComponent(byId[1] ?? ''));
      return message ? { status: 200, body: messageOut(message) } : NOT_FOUND;
    }
    return NOT_FOUND;
  }

  /** The app's messages, newest first, as `GET …/msg` lists them (after, before, limit, iterator, event_types). */
  private list(params: Record<string, unknown>) {
    const time = (name: string): number | undefined =>
      typeof params[name] === 'string' ? Date.parse(String(params[name])) : undefined;
    const after = time('after') ?? -Infinity;
    const before = time('before') ?? Infinity;
    const limit = Math.min(250, Math.max(1, Number(params.limit ?? 50)));
    const types = params.event_types;
    const wanted = types === undefined || String(types).split(',').includes(EVENT_TYPE_NAME);
    const matching = wanted
      ? this.byTime.filter((message) => message.createdAt > after && message.createdAt < before).reverse()
      : [];
    // An iterator is the id of the last message of the previous page; one that is not there lists nothing.
    const at = typeof params.iterator === 'string' ? matching.findIndex(({ id }) => id === params.iterator) : -1;
    const start = typeof params.iterator !== 'string' ? 0 : at < 0 ? matching.length : at + 1;
    const page = matching.slice(start, start + limit);
    const last = page[page.length - 1];
    return { data: page.map(messageOut), iterator: last?.id ?? null, done: start + limit >= matching.length };
  }
}

/** A message as Svix's record lists it: its payload marked, so the oracle tells Svix's copy from a delivered body. */
const messageOut = (message: SimMessage) => ({
  id: message.id,
  eventType: EVENT_TYPE_NAME,
  payload: { ...message.payload, copy: 'record' },
  timestamp: new Date(message.createdAt).toISOString(),
  channels: null,
  eventId: null,
  tags: null,
});
