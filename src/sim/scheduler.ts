/**
 * Virtual time. Everything that happens in a simulated run is a timer here:
 * an event's delivery, a process's wait, a cache or Svix answer. Between two
 * timers every promise chain runs to where it waits for the next one (one
 * turn of Node's event loop: no real I/O happens in a simulation), so the
 * order of everything follows from the timers alone, and the same seed gives
 * the same run.
 */

interface Timer {
  at: number;
  order: number;
  run: () => void;
}

/** A timer heap ordered by time, then by when it was set. */
const earlier = (a: Timer, b: Timer): boolean => a.at < b.at || (a.at === b.at && a.order < b.order);

export class Scheduler {
  /** True time, in ms: the world's own, from which every clock in the run is offset. */
  now: number;
  private readonly heap: Timer[] = [];
  private order = 0;
  private steps = 0;

  constructor(start: number) {
    this.now = start;
  }

  /** Runs `run` at time `at` (at once when that is past). */
  at(at: number, run: () => void): void {
    this.push({ at: Math.max(at, this.now), order: (this.order += 1), run });
  }

  after(ms: number, run: () => void): void {
    this.at(this.now + Math.max(0, ms), run);
  }

  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => this.after(ms, resolve));
  }

  /** Timers run so far. */
  get count(): number {
    return this.steps;
  }

  /**
   * Runs every timer in order, each after all work the previous one started has settled (then `settled` is
   * called); at most `limit`.
   */
  async run(limit: number, settled?: () => void): Promise<void> {
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      settled?.();
      const next = this.pop();
      if (!next) return;
      this.steps += 1;
      if (this.steps > limit) throw new Error(`The simulation did not settle within ${limit} timers.`);
      this.now = next.at;
      next.run();
    }
  }

  private push(timer: Timer): void {
    const heap = this.heap;
    heap.push(timer);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const above = heap[parent];
      if (!above || !earlier(timer, above)) break;
      heap[index] = above;
      index = parent;
    }
    heap[index] = timer;
  }

  private pop(): Timer | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    // Sift `last` down from the root.
    let index = 0;
    for (;;) {
      const left = heap[index * 2 + 1];
      const right = heap[index * 2 + 2];
      const [child, at] = right && left && earlier(right, left) ? [right, index * 2 + 2] : [left, index * 2 + 1];
      if (!child || !earlier(child, last)) break;
      heap[index] = child;
      index = at;
    }
    heap[index] = last;
    return top;
  }
}
