/**
 * This process's clock and its waits, for everything a delivery does. The
 * one seam through which time enters the delivery path: Node's own by
 * default; the simulation (src/sim) gives each simulated process a virtual
 * clock here, so that thousands of runs a minute explore orderings and any
 * one of them replays from its seed.
 *
 * Every wait holds the process open. Zapier runs each operation in AWS
 * Lambda, which ends an invocation as soon as the event loop has nothing to
 * wait for, answered or not: a wait that did not hold the loop (an unref'd
 * timer) let a process exit mid-delivery, and the event was lost. A wait no
 * longer needed is cancelled through its signal instead, so nothing holds a
 * process that has answered.
 */
export const clock = {
  now: (): number => Date.now(),
  /** Resolves after `ms`, or at once when `signal` aborts (its timer cleared). */
  sleep: (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const cancel = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', cancel);
        resolve();
      }, ms);
      signal?.addEventListener('abort', cancel, { once: true });
    }),
};
