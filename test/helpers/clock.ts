import { Runtime } from '../../src/delivery/runtime';
import { clockOf, type Clock } from '../../src/zapier/clock';

/**
 * A virtual clock for a test of a process on real loopback I/O: it reads the real time plus every wait it skipped.
 * A wait of `ms` takes `ms / speedup` of real time, then moves the clock on to the wait's end, so waits end in
 * the order they are due, a loopback round trip (milliseconds) still ends before a wait of seconds, and a test
 * that waits out a delivery's 25 seconds takes about one. The state machine's tests need no clock (each call is
 * handed the time), and the simulation runs the driver on its exact virtual clock (src/tools/sim/scheduler.ts).
 */
export const virtualClock = (speedup = 25): Clock & { moved: () => number; advance: (ms: number) => void } => {
  let skipped = 0;
  const clock = clockOf<NodeJS.Timeout>({
    now: () => Date.now() + skipped,
    setTimeout: (run, ms) => {
      const due = Date.now() + skipped + ms;
      return setTimeout(() => {
        skipped = Math.max(skipped, due - Date.now());
        run();
      }, ms / speedup);
    },
    clearTimeout: (timer) => clearTimeout(timer),
  });
  return { ...clock, moved: () => skipped, advance: (ms) => void (skipped += ms) };
};

/** A runtime (a process of the app) on a virtual clock. */
export const virtualRuntime = (): Runtime => new Runtime(virtualClock());
