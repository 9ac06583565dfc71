import { ENDPOINTS_KEPT, JUNK_ALLOWANCE, SECRET_SIGNS_ALONE_MS } from '../limits';

/**
 * What one process knows of a Zap's endpoint, for the deliveries it runs: the secret it last read from Svix and when,
 * the secrets it saw replaced, whether a delivery gave cause to doubt the secret, and the junk allowance. Pure: no
 * clock, no I/O; verify.ts reads the clock and makes the calls.
 *
 * The secret is in one of three states, named by `trustOf`:
 *
 * | State     | Means                                                   | The known secret signs alone? |
 * | --------- | ------------------------------------------------------- | ----------------------------- |
 * | `trusted` | read from Svix within SECRET_SIGNS_ALONE_MS, no doubt   | yes                           |
 * | `stale`   | read longer ago                                         | no: read it again first       |
 * | `doubted` | Svix confirmed a delivery no known secret signed        | no: read it again first       |
 *
 * | Event                                          | From    | To        |
 * | ---------------------------------------------- | ------- | --------- |
 * | a read of the secret answered (`learnt`)       | any     | `trusted` |
 * | Svix confirmed a delivery no known secret signed (`doubt`) | any | `doubted` |
 * | SECRET_SIGNS_ALONE_MS since the read began      | trusted | `stale`   |
 */

export interface Known {
  /** The secret Svix answered last, and when that read began (this process's clock). */
  secret: string;
  readAt: number;
  /** Secrets this process saw replaced, newest first: a delivery one of them signed may have waited across a
   * rotation in Zapier's queue. Svix keeps at most 10 old secrets. */
  replaced: string[];
  doubted: boolean;
  /** When the endpoint began to be sent messages: none made before it runs (an edit's endpoint: since the Zap was on). */
  madeAt: number;
  /** The junk allowance, a token bucket: its tokens at `at` (below zero while a call waits for one). */
  allowance: { tokens: number; at: number };
}

export type Trust = 'trusted' | 'stale' | 'doubted';
const MAX_REPLACED = 10;

export const known = (secret: string, readAt: number, madeAt: number): Known =>
  check({
    ...{ secret, readAt, replaced: [], doubted: false, madeAt },
    allowance: { tokens: JUNK_ALLOWANCE.burst, at: readAt },
  });

export const trustOf = (e: Known, now: number): Trust =>
  e.doubted ? 'doubted' : now - e.readAt <= SECRET_SIGNS_ALONE_MS ? 'trusted' : 'stale';

/** A read that began at `at` answered `secret`: it is current, and any other known as current is replaced. A read
 * that began before the last one learnt (two performs at once in one process) teaches nothing. */
export const learnt = (e: Known, secret: string, at: number): void => {
  if (at < e.readAt) return;
  if (secret !== e.secret)
    e.replaced = [e.secret, ...e.replaced.filter((old) => old !== secret)].slice(0, MAX_REPLACED);
  e.secret = secret;
  e.readAt = at;
  e.doubted = false;
  check(e);
};

/** Svix confirmed a delivery that no secret known here signed: the secret may have been replaced since the read. */
export const doubt = (e: Known): void => {
  e.doubted = true;
  check(e);
};

/** Whether a secret this process knows for the endpoint, current or replaced, signed the delivery. */
export const knownSigner = (e: Known, signedWith: (secret: string) => boolean): boolean =>
  signedWith(e.secret) || e.replaced.some(signedWith);

/**
 * Takes a token of the junk allowance for a call at `now`: how long to wait for it, or undefined (none taken) if it
 * would come after `latest`.
 */
export const takeToken = (e: Known, now: number, latest: number): number | undefined => {
  const { burst, everyMs } = JUNK_ALLOWANCE;
  const tokens = Math.min(burst, e.allowance.tokens + (now - e.allowance.at) / everyMs);
  const waitMs = tokens >= 1 ? 0 : Math.ceil((1 - tokens) * everyMs);
  if (now + waitMs > latest) return undefined;
  e.allowance = { tokens: tokens - 1, at: now };
  check(e);
  return waitMs;
};

/** Gives back a token taken for a call that was not made (the delivery needed it no longer). */
export const giveBack = (e: Known): void => {
  e.allowance = { tokens: Math.min(JUNK_ALLOWANCE.burst, e.allowance.tokens + 1), at: e.allowance.at };
  check(e);
};

/** What must hold after every change (TigerBeetle's way: a broken one is a bug here, not a state to handle). */
const check = (e: Known): Known => {
  assert(!e.replaced.includes(e.secret), 'a current secret is never among the replaced');
  assert(e.replaced.length <= MAX_REPLACED, 'at most 10 replaced secrets are kept');
  assert(e.allowance.tokens <= JUNK_ALLOWANCE.burst, 'the allowance never holds more than its burst');
  return e;
};
const assert = (holds: boolean, what: string): void => {
  if (!holds) throw new Error(`Invariant broken: ${what}.`);
};

/** An endpoint's key among what a process knows: by its connection (as z.cache is scoped) and its id. */
export const endpointKey = (connection: string, endpointId: string): string => `${connection}\u0000${endpointId}`;

/** What a process knows of the endpoints it served last, at most ENDPOINTS_KEPT (the least recently served go). */
export class KnownEndpoints {
  private readonly byKey = new Map<string, Known>();
  constructor(readonly kept = ENDPOINTS_KEPT) {}

  get(key: string, made: () => Known): Known {
    const e = this.byKey.get(key) ?? made();
    this.byKey.delete(key);
    this.byKey.set(key, e);
    for (const oldest of this.byKey.keys()) {
      if (this.byKey.size <= this.kept) break;
      this.byKey.delete(oldest);
    }
    return e;
  }

  /** What it knows of an endpoint, without counting it as served (for a tool that watches a process). */
  peek(key: string): Readonly<Known> | undefined {
    return this.byKey.get(key);
  }

  get size(): number {
    return this.byKey.size;
  }
}
