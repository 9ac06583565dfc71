import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import type { ZObject } from 'zapier-platform-core';
import { getEndpointSecret } from '../provider/api';
import type { Caller } from '../provider/request';
import { signedWith } from '../provider/signature';
import { cacheDelete, cacheGet, cacheSet } from './cache';
import { CLAIM_TTL_SECONDS, invocationToken, probeNx } from './claim';

/**
 * Which signing secret a delivery is checked against. Deliveries are verified
 * against the endpoint's current secret only, as last read from the provider:
 * once a rotation has been seen, a signature made only with an older secret no
 * longer verifies (during a rotation's grace period the provider signs with
 * both, so those deliveries still verify).
 *
 * The current secret and when it was read are kept in memory for a warm
 * process and in z.cache across processes. It is read from the provider again
 * when a signature does not match it (the secret may have been rotated), and
 * when it was read more than ten minutes ago (so a secret revoked by an
 * immediate rotation stops verifying soon after). Those reads are limited per
 * endpoint: one at a time across invocations (a lock in z.cache), and a small
 * burst, then one every ten seconds, so a flood of forged deliveries costs
 * little. A delivery that does not match waits, within Zapier's time limit,
 * for a read made after it was signed: a genuine delivery signed with a new
 * secret then runs even in a flood, and a forged one is refused.
 */

/** Limits and waits, in an object so tests can shorten the waits. */
export const secretSettings = {
  /** A secret read from the provider longer ago than this is read again before it is trusted. */
  staleAfterMs: 10 * 60 * 1000,
  /** Reads of an endpoint's secret: a burst of this many… */
  burst: 3,
  /** …then one more every this many ms. */
  refillMs: 10_000,
  /** How long a delivery that does not match waits for a read of the secret made after it was signed. */
  waitMs: 12_000,
  /** Each of the (at most two) attempts of one read. */
  readTimeoutMs: 4_000,
};

/** The lock outlives two read attempts, so a crashed holder cannot block reads for long. */
const LOCK_TTL_SECONDS = 15;

/** What is known of an endpoint's signing secret. */
export const KnownSecret = t.intersection(
  [
    t.type({ secret: t.string, checkedAt: t.number }),
    t.partial({
      /** Whether the cache honours `nx` (see probeNx). */
      cacheHonoursNx: t.boolean,
      /** The allowance of reads: `tokens` left at `at` (ms since the epoch). */
      rereads: t.type({ tokens: t.number, at: t.number }),
    }),
  ],
  'KnownSecret',
);
export type KnownSecret = t.TypeOf<typeof KnownSecret>;

export const knownSecretKey = (endpointId: string): string => `secret:${endpointId}`;
export const rereadLockKey = (endpointId: string): string => `secret-reread:${endpointId}`;

/**
 * This process's memory, shared by every connection the process serves:
 * keyed by the connection (its Consumer App and server) as well as the
 * endpoint, as z.cache is scoped, so one connection's reads can never stand
 * for another's. Bounded: the oldest entry goes first.
 */
const memory = new Map<string, KnownSecret>();
const MEMORY_LIMIT = 1_000;

/** For tests: a cold process. */
export const forgetKnownSecrets = (): void => memory.clear();

const memoryKey = (subscription: Subscription): string => `${subscription.connection}\u0000${subscription.id}`;

const remember = (key: string, known: KnownSecret): KnownSecret => {
  memory.delete(key);
  if (memory.size >= MEMORY_LIMIT) {
    const oldest = memory.keys().next();
    if (!oldest.done) memory.delete(oldest.value);
  }
  memory.set(key, known);
  return known;
};

/** Which is later: the secret read later, or for the same read, the allowance spent later. */
const isLater = (a: KnownSecret, b: KnownSecret): boolean =>
  b.checkedAt > a.checkedAt || (b.checkedAt === a.checkedAt && (b.rereads?.at ?? 0) > (a.rereads?.at ?? 0));

/** The later of the two; keeps what the earlier one knew of the cache. */
const newest = (a: KnownSecret, b: KnownSecret | undefined): KnownSecret => {
  if (!b) return a;
  const [older, newer] = isLater(a, b) ? [a, b] : [b, a];
  const cacheHonoursNx = newer.cacheHonoursNx ?? older.cacheHonoursNx;
  return cacheHonoursNx === undefined ? newer : { ...newer, cacheHonoursNx };
};

const tokensAt = (known: KnownSecret, now: number): number =>
  known.rereads
    ? Math.min(secretSettings.burst, known.rereads.tokens + (now - known.rereads.at) / secretSettings.refillMs)
    : secretSettings.burst;

const readShared = async (z: ZObject, endpointId: string): Promise<KnownSecret | undefined> => {
  try {
    const decoded = KnownSecret.decode(await cacheGet(z, knownSecretKey(endpointId)));
    return isRight(decoded) ? decoded.right : undefined;
  } catch {
    return undefined;
  }
};

const writeShared = async (z: ZObject, endpointId: string, known: KnownSecret): Promise<void> => {
  try {
    await cacheSet(z, knownSecretKey(endpointId), known, CLAIM_TTL_SECONDS, false);
  } catch {
    // The next delivery reads the secret again.
  }
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The parts of a delivery its signature covers, and when it says it was signed. */
export interface SignedParts {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  signedAtMs: number;
}

/** What perform knows of the Zap's endpoint from its subscribe, and which connection it runs for. */
export interface Subscription {
  /** The connection, as connectionScope gives it. */
  connection: string;
  id: string;
  secret: string;
  checkedAt?: number;
  cacheHonoursNx?: boolean;
}

export type SignatureCheck =
  | { verified: true; known: KnownSecret }
  /** `no-match`: a read of the secret made after the delivery was signed does not match it. `unchecked`: no such read could be made in time. */
  | { verified: false; why: 'no-match' | 'unchecked' };

/**
 * The usual case, without a promise (each costs on the platform, which tracks
 * them all): this process read the secret lately, and the delivery matches it.
 */
export const matchesKnownSecret = (subscription: Subscription, delivery: SignedParts): KnownSecret | undefined => {
  const known = memory.get(memoryKey(subscription));
  if (!known || Date.now() - known.checkedAt > secretSettings.staleAfterMs) return undefined;
  return signedWith(known.secret, delivery.id, delivery.timestamp, delivery.signature, delivery.body)
    ? known
    : undefined;
};

/**
 * The delivery checked against the endpoint's current secret, read again when
 * needed. `caller` gives what a read from the provider needs; it is asked for
 * only when one is made.
 */
export const checkSignature = async (
  z: ZObject,
  caller: () => Caller,
  subscription: Subscription,
  delivery: SignedParts,
): Promise<SignatureCheck> => {
  const endpointId = subscription.id;
  const key = memoryKey(subscription);
  const arrivedAt = Date.now();
  const matches = (known: KnownSecret) =>
    signedWith(known.secret, delivery.id, delivery.timestamp, delivery.signature, delivery.body);
  const fresh = (known: KnownSecret) => Date.now() - known.checkedAt <= secretSettings.staleAfterMs;

  // A warm process knows the secret; a cold one asks the cache, and knows what the subscribe stored.
  let known = memory.get(key);
  let sharedRead = false;
  if (!known || !fresh(known)) {
    const subscribed: KnownSecret = {
      secret: subscription.secret,
      checkedAt: subscription.checkedAt ?? 0,
      ...(subscription.cacheHonoursNx === undefined ? {} : { cacheHonoursNx: subscription.cacheHonoursNx }),
    };
    known = remember(key, newest(newest(subscribed, known), await readShared(z, endpointId)));
    sharedRead = true;
  }
  if (matches(known) && fresh(known)) return { verified: true, known };
  if (!sharedRead) {
    // Another process may have seen a rotation already.
    known = remember(key, newest(known, await readShared(z, endpointId)));
    if (matches(known) && fresh(known)) return { verified: true, known };
  }

  // The secret may have been rotated (no match), or was read too long ago (a match, but stale).
  // Either waits for a read that is under way. A delivery that does not match then waits for a
  // read made after it was signed; a stale secret that matches is trusted only when no read can
  // be made now (the allowance is spent, or the provider cannot be reached).
  let stale = matches(known) ? known : undefined;
  const conclusiveFrom = Math.min(delivery.signedAtMs + 1_000, arrivedAt);
  const deadline = arrivedAt + secretSettings.waitMs;
  for (;;) {
    if (matches(known) && fresh(known)) return { verified: true, known };
    // Another secret is known now: the stale one has been rotated out.
    if (stale && known.secret !== stale.secret) stale = undefined;
    if (!stale && known.checkedAt >= conclusiveFrom) return { verified: false, why: 'no-match' };
    let read: KnownSecret | 'busy' | 'limited';
    try {
      read = await reread(z, caller, key, endpointId, known);
    } catch (error) {
      if (stale) return { verified: true, known: stale };
      throw error;
    }
    if (read !== 'busy' && read !== 'limited') {
      known = read;
      continue;
    }
    if (stale && read === 'limited') return { verified: true, known: stale };
    const wait =
      read === 'busy'
        ? 250
        : Math.min(2_000, Math.max(250, (1 - tokensAt(known, Date.now())) * secretSettings.refillMs));
    if (Date.now() + wait > deadline) {
      return stale ? { verified: true, known: stale } : { verified: false, why: 'unchecked' };
    }
    await sleep(wait);
    known = remember(key, newest(known, await readShared(z, endpointId)));
  }
};

/**
 * Reads the endpoint's secret from the provider, when this endpoint's
 * allowance has a read left and no other invocation is reading it now.
 */
const reread = async (
  z: ZObject,
  caller: () => Caller,
  key: string,
  endpointId: string,
  known: KnownSecret,
): Promise<KnownSecret | 'busy' | 'limited'> => {
  // A flood of forgeries stops here: this process has already seen the allowance run out.
  if (tokensAt(known, Date.now()) < 1) return 'limited';
  const lock = rereadLockKey(endpointId);
  const held = await takeLock(z, lock);
  if (held === undefined) return 'busy';
  try {
    const latest = newest(known, await readShared(z, endpointId));
    if (latest.checkedAt > known.checkedAt) return remember(key, latest);
    const startedAt = Date.now();
    const tokens = tokensAt(latest, startedAt);
    if (tokens < 1) {
      remember(key, latest);
      return 'limited';
    }
    const rereads = { tokens: tokens - 1, at: startedAt };
    let secret: string;
    try {
      secret = await getEndpointSecret(caller(), endpointId, {
        timeoutMs: secretSettings.readTimeoutMs,
        attempts: 2,
      });
    } catch (error) {
      const spent = remember(key, { ...latest, rereads });
      await writeShared(z, endpointId, spent);
      throw error;
    }
    const cacheHonoursNx = latest.cacheHonoursNx ?? (await probeNx(z));
    const read: KnownSecret = {
      secret,
      checkedAt: startedAt,
      rereads,
      ...(cacheHonoursNx === undefined ? {} : { cacheHonoursNx }),
    };
    await writeShared(z, endpointId, read);
    return remember(key, read);
  } finally {
    await releaseLock(z, lock, held);
  }
};

/**
 * One invocation at a time reads an endpoint's secret: the lock is a key set
 * with nx, holding this invocation's token, which expires on its own if the
 * holder never comes back. When the cache cannot answer, or refuses to
 * store, there is no one to wait for: the read goes on (with no token to
 * release), still bounded by this process's allowance. Undefined: busy.
 */
const takeLock = async (z: ZObject, lock: string): Promise<string | undefined> => {
  const token = invocationToken();
  let stored: unknown;
  try {
    stored = await cacheSet(z, lock, token, LOCK_TTL_SECONDS, true);
  } catch {
    return '';
  }
  if (stored === true) return token;
  const holder = await cacheGet(z, lock).catch(() => undefined);
  if (holder === token) return token;
  return holder === undefined ? '' : undefined;
};

/** Releases the lock if this invocation still holds it (it may have expired and been taken since). */
const releaseLock = async (z: ZObject, lock: string, token: string): Promise<void> => {
  if (token === '') return;
  const holder = await cacheGet(z, lock).catch(() => undefined);
  if (holder === token) await cacheDelete(z, lock).catch(() => undefined);
};
