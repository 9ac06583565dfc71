import { randomBytes } from 'node:crypto';
import type { Clock } from './clock';
import type { Io } from './io';

/** z.cache as the app uses it: what a delivery may wait for it, and whether it honours `nx`. */

/** Why a z.cache call failed: the delivery's time was up first (Zapier ends a perform at 30 s). */
export const LATE = new Error('z.cache did not answer in the delivery’s time.');

/**
 * Makes a z.cache call and hands `settle` what it answered, or LATE once `deadline` comes first (the call goes on,
 * unheeded). Callbacks, not promise chains: core tracks every promise a perform makes, and a claim is on every
 * delivery's way.
 */
export const callWithin = <T>(
  clock: Clock,
  deadline: number,
  call: () => Promise<T>,
  settle: (answer: { value: T } | { error: unknown }) => void,
): void => {
  const left = deadline - clock.now();
  if (left <= 0) return settle({ error: LATE });
  let settled = false;
  const once = (answer: { value: T } | { error: unknown }) => void (settled || ((settled = true), settle(answer)));
  const clear = clock.after(left, () => once({ error: LATE }));
  call().then(
    (value) => (clear(), once({ value })),
    (error: unknown) => (clear(), once({ error })),
  );
};

/** The ports of one delivery: a z.cache call not answered by its deadline fails then. */
export const withinDeadline = (clock: Clock, io: Io, deadline: number): Io => {
  const within = <T>(call: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) =>
      callWithin(clock, deadline, call, (answer) => ('value' in answer ? resolve(answer.value) : reject(answer.error))),
    );
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
