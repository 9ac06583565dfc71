/** Small statistics for the benchmark: medians and percentiles of samples taken side by side. */

export const median = (values: readonly number[]): number => percentile(values, 50);

export const percentile = (values: readonly number[], p: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lowValue = sorted[low] ?? Number.NaN;
  const highValue = sorted[high] ?? Number.NaN;
  return lowValue + (highValue - lowValue) * (rank - low);
};

export const round = (value: number, digits = 3): number => {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
};

/** Milliseconds since `start` (a `process.hrtime.bigint()`). */
export const elapsedMs = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

/**
 * Runs `a` and `b` in alternating rounds (so drift in the machine's speed
 * touches both alike) and returns each round's figure for each.
 */
export const sideBySide = async (
  rounds: number,
  a: () => Promise<number> | number,
  b: () => Promise<number> | number,
): Promise<{ a: number[]; b: number[] }> => {
  const results: { a: number[]; b: number[] } = { a: [], b: [] };
  for (let round = 0; round < rounds; round += 1) {
    // Swap the order every round so neither always runs warm.
    if (round % 2 === 0) {
      results.a.push(await a());
      results.b.push(await b());
    } else {
      results.b.push(await b());
      results.a.push(await a());
    }
  }
  return results;
};

/**
 * The median of the per-round ratios a/b: each round's pair ran back to back,
 * so a slow spell of the machine touches both figures of a pair alike.
 */
export const pairedRatio = (samples: { a: readonly number[]; b: readonly number[] }): number =>
  median(samples.a.map((value, index) => value / (samples.b[index] ?? Number.NaN)));
