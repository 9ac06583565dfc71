/**
 * This process's clock and its waits, for everything a delivery does. The
 * one seam through which time enters the delivery path: Node's own by
 * default; the simulation (src/sim) gives each simulated process a virtual
 * clock here, so that thousands of runs a minute explore orderings and any
 * one of them replays from its seed.
 */
export const clock = {
  now: (): number => Date.now(),
  // Unref'd: a wait that lost its race (for an answer that came first) never holds a finished process open.
  sleep: (ms: number): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, ms).unref()),
};
