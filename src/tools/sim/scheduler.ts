import TinyQueue from 'tinyqueue';
import type { Timers } from '../../zapier/clock';

type Timer = { at: number; order: number; run: () => void; cancelled?: boolean };

/** Virtual time: everything that happens in a run is a timer here. Between two timers every promise chain runs to
 * where it waits for the next (no real I/O happens): the order of everything follows from the timers' order, time
 * then setting, and the same seed gives the same run. */
export class Scheduler {
  private readonly timers = new TinyQueue<Timer>([], (a, b) => a.at - b.at || a.order - b.order);
  private order = 0;
  /** `now`: true time, in ms, the world's own, from which every clock in the run is offset. */
  constructor(public now: number) {}
  /** Runs `run` at time `at` (at once when that is past), unless the timer is cancelled first. */
  at(at: number, run: () => void): Timer {
    const timer = { at: Math.max(at, this.now), order: (this.order += 1), run };
    this.timers.push(timer);
    return timer;
  }
  after = (ms: number, run: () => void): Timer => this.at(this.now + Math.max(0, ms), run);
  sleep = (ms: number): Promise<void> => new Promise<void>((resolve) => this.after(ms, resolve));
  /** Runs every timer in order, each once all work the last one started has settled (then `settled` is called): a
   * tick a microtask queues runs once none is left, with no turn of Node's event loop. A cancelled one costs nothing. */
  async run(limit: number, settled: () => void): Promise<void> {
    for (let steps = 1; ; steps += 1) {
      await new Promise<void>((resolve) => queueMicrotask(() => process.nextTick(resolve)));
      settled();
      let next = this.timers.pop();
      while (next?.cancelled) next = this.timers.pop();
      if (!next) return;
      if (steps > limit) throw new Error(`The simulation did not settle within ${limit} timers.`);
      this.now = next.at;
      next.run();
    }
  }
}

/** A simulated process's timer: one made not to hold its event loop (`holds` false) lets the invocation end. */
type VirtualTimer = { holds: boolean; entry: Timer };

/** A process's event loop as AWS Lambda sees it: held by a call in flight or a timer that holds it, or it ends. */
export class EventLoop implements Omit<Timers<VirtualTimer>, 'now'> {
  private readonly waiting = new Set<VirtualTimer>();
  private inFlight = 0;
  constructor(private readonly scheduler: Scheduler) {}
  setTimeout = (run: () => void, ms = 0, holds = true): VirtualTimer => {
    const timer: VirtualTimer = { holds, entry: this.scheduler.after(ms, () => this.waiting.delete(timer) && run()) };
    this.waiting.add(timer);
    return timer;
  };
  clearTimeout = (timer: VirtualTimer): void => void (this.waiting.delete(timer) && (timer.entry.cancelled = true));
  /** A call to Svix or z.cache: it holds the loop until it is answered. */
  call<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    return work().finally(() => void (this.inFlight -= 1));
  }
  get held(): boolean {
    if (this.inFlight > 0) return true;
    for (const timer of this.waiting) if (timer.holds) return true;
    return false;
  }
}
