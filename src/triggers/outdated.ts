import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import type { Io } from '../zapier/io';
import { CLAIM_TTL_SECONDS } from '../delivery/claim';

/**
 * "Skip Outdated Events": Svix does not keep deliveries in order, so a late retry of an earlier status can arrive
 * after a newer one. With the field on (its default), the Zap keeps in z.cache, per auction, when the newest event it ran for
 * happened (scoped and kept as its claims are), and does not run one that happened before. Two runs already in
 * flight can still finish out of order (the check and the record are two steps); the record never moves back.
 */

const Newest = t.type({ at: t.number }, 'NewestRun');
type Cache = Pick<Io, 'cache'>;

/** Per Zap (its claim scope) and auction; the auction's UUID is hashed, so any text makes a short key. */
export const newestKey = (scope: string, auctionUuid: string): string =>
  `newest:${scope}:${createHash('sha256').update(auctionUuid, 'utf8').digest('base64url').slice(0, 32)}`;

/** When the newest event this Zap ran for of this auction happened; a cache that cannot answer says none. */
export const newestRun = async (io: Cache, scope: string, auctionUuid: string): Promise<number> => {
  const stored = Newest.decode(await io.cache.get(newestKey(scope, auctionUuid)).catch(() => undefined));
  return isRight(stored) ? stored.right.at : -Infinity;
};

/**
 * Records the event the Zap just ran for as the auction's newest, unless the newest it read was as new. Where that
 * read found none (the auction's first event, or z.cache throttling the read), it reads again first: a run that
 * overlapped it may have recorded a newer one, and the record never moves back.
 */
export const recordNewest = async (
  io: Cache,
  scope: string,
  auctionUuid: string,
  at: number,
  newest: number,
): Promise<void> => {
  const known = newest === -Infinity ? await newestRun(io, scope, auctionUuid) : newest;
  if (known >= at) return;
  await io.cache.set(newestKey(scope, auctionUuid), { at }, CLAIM_TTL_SECONDS, false).catch(() => undefined);
};
