import { randomBytes } from 'node:crypto';
import type { Clock } from './clock';
import type { Io } from './request';

/** z.cache as the app uses it: what a delivery may wait for it, and whether it honours `nx`. */

/** Why a z.cache call failed: the delivery's time was up first (Zapier ends a perform at 30 s). */
const LATE = new Error('z.cache did not answer in the delivery’s time.');
/** The ports of one delivery: a z.cache call not answered by its deadline fails then, and goes on unheeded. */
export const withinDeadline = (clock: Clock, io: Io, deadline: number): Io => {
  const within = <T>(call: () => Promise<T>): Promise<T> => {
    const left = deadline - clock.now();
    if (left <= 0) return Promise.reject(LATE);
    const timer = clock.sleep(left);
    return new Promise<T>((resolve, reject) => {
      void timer.done.then(() => reject(LATE));
      void Promise.resolve()
        .then(call)
        .then(resolve, reject)
        .finally(() => timer.cancel());
    });
  };
  const { get, set } = io.cache;
  return { ...io, cache: { get: (key) => within(() => get(key)), set: (...args) => within(() => set(...args)) } };
};

/**
 * Whether the cache honours `nx` (Zapier's does; the local tester's mock does not): two sets of one new key with
 * `nx` answer `true` then `false` (or `null`, as Redis's SET NX does), or `true` twice. Undefined when it failed.
 */
export const probeNx = async ({ cache }: Pick<Io, 'cache'>): Promise<boolean | undefined> => {
  const key = `nx-probe:${randomBytes(9).toString('hex')}`;
  try {
    const first = await cache.set(key, 1, 60, true);
    const second = await cache.set(key, 1, 60, true);
    if (first !== true) return undefined;
    return second === true ? false : second === false || second === null ? true : undefined;
  } catch {
    return undefined;
  }
};
