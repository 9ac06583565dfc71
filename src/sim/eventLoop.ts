import type { Timers } from '../delivery/runtime';
import type { Scheduler } from './scheduler';

/**
 * One simulated process's event loop, as Zapier's runtime (AWS Lambda) sees
 * it: the calls it has in flight and the timers it has set. Lambda ends an
 * invocation as soon as nothing holds the loop, answered or not; an unref'd
 * timer holds nothing. The run asks `held` between timers, and cuts off the
 * performs of a process that is not held (world.ts).
 */

class VirtualTimer {
  private referenced = true;

  ref(): this {
    this.referenced = true;
    return this;
  }

  unref(): this {
    this.referenced = false;
    return this;
  }

  hasRef(): boolean {
    return this.referenced;
  }
}

export class EventLoop implements Timers<VirtualTimer> {
  now = (): number => this.scheduler.now;

  private readonly waiting = new Set<VirtualTimer>();
  private inFlight = 0;

  constructor(private readonly scheduler: Scheduler) {}

  setTimeout = (run: () => void, ms = 0): VirtualTimer => {
    const timer = new VirtualTimer();
    this.waiting.add(timer);
    this.scheduler.after(ms, () => {
      if (this.waiting.delete(timer)) run();
    });
    return timer;
  };

  clearTimeout = (timer: VirtualTimer): void => {
    this.waiting.delete(timer);
  };

  /** A call to Svix or z.cache: it holds the loop until it is answered. */
  async call<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    try {
      return await work();
    } finally {
      this.inFlight -= 1;
    }
  }

  /** Whether anything holds the loop: a call in flight, or a timer that is ref'd. */
  get held(): boolean {
    if (this.inFlight > 0) return true;
    for (const timer of this.waiting) if (timer.hasRef()) return true;
    return false;
  }
}
