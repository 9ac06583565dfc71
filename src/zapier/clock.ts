/**
 * Time as the app reads it, a port as z is: Node's clock and timers by default, the simulation's virtual ones, or a
 * test's. Every wait holds the process open until it ends or is cancelled.
 */

/** Time, and waits that hold the process open until they end or are cancelled (see Runtime.wait). */
export interface Clock {
  now: () => number;
  /** Ends after `ms`; `cancel` clears its timer and ends it at once. */
  sleep: (ms: number) => { done: Promise<void>; cancel: () => void };
  /** Runs `run` after `ms`, unless the function it returns is called first (no promise: the cheapest wait). */
  after: (ms: number, run: () => void) => () => void;
}
/** What a clock needs of its host: Node's timers by default; the simulation hands in its virtual ones. */
export interface Timers<T> {
  now: () => number;
  setTimeout: (run: () => void, ms: number) => T;
  clearTimeout: (timer: T) => void;
}

/**
 * Every wait holds the process open: Zapier runs each operation in AWS Lambda, which ends an invocation as soon
 * as the event loop has nothing to wait for, answered or not. A wait no longer needed is cancelled instead.
 */
export const clockOf = <T>(timers: Timers<T>): Clock => {
  const after = (ms: number, run: () => void) => {
    const timer = timers.setTimeout(run, Math.max(0, ms));
    return () => timers.clearTimeout(timer);
  };
  const sleep = (ms: number) => {
    let end!: () => void;
    const done = new Promise<void>((resolve) => (end = resolve));
    const clear = after(ms, end);
    return { done, cancel: () => (clear(), end()) };
  };
  return { now: () => timers.now(), sleep, after };
};
export const nodeClock = clockOf<NodeJS.Timeout>({ now: () => Date.now(), setTimeout, clearTimeout });
