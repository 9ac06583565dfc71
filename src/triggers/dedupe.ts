import type { ZObject } from 'zapier-platform-core';
import { cacheGet, cacheSet } from './cache';

/**
 * Exactly-once Zap runs under the provider's at-least-once delivery: a message
 * id already run for this Zap's endpoint is not run again. The provider retries
 * for about 28 hours (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), and a person
 * may resend a message by hand later, so a run is remembered for 7 days.
 */
export const SEEN_TTL_SECONDS = 7 * 24 * 60 * 60;

export const seenKey = (endpointId: string, messageId: string): string => `seen:${endpointId}:${messageId}`;

/**
 * True the first time this endpoint sees this message. Get-then-set works with
 * the local tester's cache (which ignores `nx`); on the platform `nx` makes the
 * set atomic, so two concurrent deliveries of one message cannot both win.
 */
export const firstDelivery = (z: ZObject, endpointId: string, messageId: string): Promise<boolean> => {
  const key = seenKey(endpointId, messageId);
  // Promise chains rather than async layers: each delivery pays for every promise the platform tracks.
  return cacheGet(z, key).then((seen) => (seen === undefined ? cacheSet(z, key, true, SEEN_TTL_SECONDS, true) : false));
};
