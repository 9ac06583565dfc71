import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import type { Io } from '../provider/request';
import { CLAIM_TTL_SECONDS } from '../delivery/claim';

/**
 * "Skip Outdated Events": the provider does not keep deliveries in order, so a
 * late retry of an earlier status can arrive after a newer one. With the
 * field on, the Zap keeps, per auction, when the newest event it ran for
 * happened, in z.cache with the same scope and retention as its claims, and
 * does not run an event that happened before it. Two runs already in flight
 * can still finish out of order: the check and the record are separate steps
 * (the record itself never moves back).
 */

const Newest = t.type({ at: t.number }, 'NewestRun');

/** Per Zap (endpoint) and auction; the auction's UUID is hashed, so any text makes a short key. */
export const newestKey = (endpointId: string, auctionUuid: string): string =>
  `newest:${endpointId}:${createHash('sha256').update(auctionUuid, 'utf8').digest('base64url').slice(0, 32)}`;

const readNewest = async (io: Pick<Io, 'cache'>, key: string): Promise<number | undefined> => {
  const stored = await io.cache.get(key).catch(() => undefined);
  const newest = Newest.decode(stored);
  return isRight(newest) ? newest.right.at : undefined;
};

/** True when this Zap has run for a newer event of the same auction. A cache that cannot answer says no. */
export const isOutdated = async (
  io: Pick<Io, 'cache'>,
  endpointId: string,
  auctionUuid: string,
  occurredAtMs: number,
): Promise<boolean> => {
  const newest = await readNewest(io, newestKey(endpointId, auctionUuid));
  return newest !== undefined && occurredAtMs < newest;
};

/**
 * Records the event the Zap just ran for as the auction's newest, unless a
 * newer one was recorded meanwhile (by a run that overlapped this one), so
 * the record never moves back.
 */
export const recordNewest = async (
  io: Pick<Io, 'cache'>,
  endpointId: string,
  auctionUuid: string,
  occurredAtMs: number,
): Promise<void> => {
  const key = newestKey(endpointId, auctionUuid);
  const newest = await readNewest(io, key);
  if (newest !== undefined && newest >= occurredAtMs) return;
  await io.cache.set(key, { at: occurredAtMs }, CLAIM_TTL_SECONDS, false).catch(() => undefined);
};
