import type { Clock } from './clock';
import type { Io } from './io';

/** z.cache as the app uses it: no call is waited for past the operation's deadline. */

/** What a call answered when it failed, or was not answered by its deadline. */
export const FAILED: unique symbol = Symbol('failed');
const failed = (): typeof FAILED => FAILED;

/** A z.cache call that ends by `deadline`: its answer, or FAILED (the call goes on, unheeded). The wait holds the
 * process open, and is cleared once the call answers. */
export const within = async <T>(clock: Clock, deadline: number, call: () => Promise<T>): Promise<T | typeof FAILED> => {
  const timer = clock.sleep(deadline - clock.now());
  try {
    return await Promise.race([call().catch(failed), timer.done.then(failed)]);
  } finally {
    timer.cancel();
  }
};

/** Why a z.cache call failed: it threw, or the operation's time was up first (Zapier ends an operation at 30 s). */
export const FAILED_CALL = new Error('z.cache failed, or did not answer in the operation’s time.');

/** The ports of one operation: a z.cache call that fails, or is not answered by its deadline, throws FAILED_CALL. */
export const withinDeadline = (clock: Clock, io: Io, deadline: number): Io => {
  const bounded = async <T>(call: () => Promise<T>): Promise<T> => {
    const answer = await within(clock, deadline, call);
    if (answer === FAILED) throw FAILED_CALL;
    return answer;
  };
  const { get, set } = io.cache;
  return { ...io, cache: { get: (key) => bounded(() => get(key)), set: (...args) => bounded(() => set(...args)) } };
};
