import type { ZObject } from 'zapier-platform-core';

/**
 * z.cache, always scoped to the connection ('auth'), so two accounts never
 * share entries. On Zapier each call is a round trip over the platform's RPC
 * service. The platform's get takes the scope as its second argument (a
 * scoped set is only found by a scoped get); its published types do not say
 * so, hence Reflect.apply.
 */
export const CACHE_SCOPE = ['auth'];

/** The stored value, or undefined when there is none. */
export const cacheGet = (z: ZObject, key: string): Promise<unknown> =>
  Promise.resolve<unknown>(Reflect.apply(z.cache.get, z.cache, [key, CACHE_SCOPE])).then((value) => value ?? undefined);

/**
 * The cache's own answer, as Zapier documents it (zapier/zapier-platform#921):
 * `true` stored; `false` not stored (with `onlyIfAbsent`, `nx`: the key
 * exists); `null` throttled, nothing stored. A cache that answers as Redis's
 * own SET NX does says `null` when the key exists: callers stay safe under
 * either reading by reading the key back.
 */
export const cacheSet = (
  z: ZObject,
  key: string,
  value: unknown,
  ttlSeconds: number,
  onlyIfAbsent: boolean,
): Promise<unknown> => z.cache.set(key, value, ttlSeconds, CACHE_SCOPE, onlyIfAbsent);
