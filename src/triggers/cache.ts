import type { ZObject } from 'zapier-platform-core';

/**
 * z.cache, always scoped to the connection ('auth'), so two accounts never
 * share entries. The platform's cache.get takes the scope as its second
 * argument (a scoped set is only found by a scoped get); its published type
 * does not say so, hence Reflect.apply.
 */
const SCOPE = ['auth'];

export const cacheGet = (z: ZObject, key: string): Promise<unknown> =>
  Promise.resolve<unknown>(Reflect.apply(z.cache.get, z.cache, [key, SCOPE])).then((value) => value ?? undefined);

/** Returns false when `onlyIfAbsent` is set and the key already existed (atomic on the platform). */
export const cacheSet = (
  z: ZObject,
  key: string,
  value: string | boolean,
  ttlSeconds: number,
  onlyIfAbsent = false,
): Promise<boolean> => z.cache.set(key, value, ttlSeconds, SCOPE, onlyIfAbsent).then((stored) => stored !== false);
