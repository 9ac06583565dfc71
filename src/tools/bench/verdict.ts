import { median } from './stats';

/**
 * Whether a figure met its budget, told apart from the noise of the run that
 * measured it. A figure is the median of per-round ratios (ours / baseline,
 * measured side by side); the same rounds also say how far that median may
 * wander by chance: a distribution-free confidence interval for the median,
 * read off the sorted ratios themselves. A median past its budget whose
 * interval still reaches back over the budget is noise as much as a miss, so
 * it is measured again (more rounds, pooled with the first) a bounded number
 * of times before it is called missed.
 */

/** A ratio budget: at most (slower than a baseline) or at least (a rate). */
export type Budget = { most: number } | { least: number };

/**
 * The two budgets held against a baseline (#60): perform CPU is a guard at 1.5 times a claim-only hook, not a chase
 * (a delivery's time is its network round trips: a millisecond of CPU is nothing a person notices); the app's cold
 * start within 1.10 times core's.
 */
export const BUDGETS = { performCpu: 1.5, coldStart: 1.1 } as const;

export type Verdict = 'met' | 'missed' | 'measure again';

export interface Judged {
  verdict: Verdict;
  budget: Budget;
  /** The median of the per-round ratios. */
  ratio: number;
  /** The ~95% confidence interval of that median, from the ratios' own spread. */
  low: number;
  high: number;
}

/** z for a two-sided 95% interval. */
const Z95 = 1.959964;

/**
 * A distribution-free ~95% confidence interval for the median of `values`: the
 * order statistics at ranks n/2 ∓ z·√n/2 (the normal approximation to the
 * binomial count of values below the median). With few values, the interval
 * widens to the smallest and largest.
 */
export const medianInterval = (values: readonly number[]): { low: number; high: number } => {
  const sorted = [...values].filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { low: Number.NaN, high: Number.NaN };
  const offset = Math.ceil((Z95 * Math.sqrt(n)) / 2);
  const lowRank = Math.max(0, Math.floor((n - 1) / 2) - offset);
  const highRank = Math.min(n - 1, Math.ceil((n - 1) / 2) + offset);
  return { low: sorted[lowRank] ?? Number.NaN, high: sorted[highRank] ?? Number.NaN };
};

/** Whether a ratio is within its budget. */
export const withinBudget = (ratio: number, budget: Budget): boolean =>
  'most' in budget ? ratio <= budget.most : ratio >= budget.least;

export const budgetText = (budget: Budget): string => ('most' in budget ? `<= ${budget.most}` : `>= ${budget.least}`);

/**
 * The verdict on a figure's per-round ratios: met when their median is within
 * the budget; missed when it is past the budget and so is its whole
 * confidence interval, or when no measuring again is left; otherwise (past
 * the budget by no more than its noise) measure again.
 */
export const judge = (ratios: readonly number[], budget: Budget, measuresLeft: number): Judged => {
  const ratio = median(ratios);
  const { low, high } = medianInterval(ratios);
  const judged = (verdict: Verdict): Judged => ({ verdict, budget, ratio, low, high });
  if (Number.isNaN(ratio)) return judged('missed');
  if (withinBudget(ratio, budget)) return judged('met');
  const nearest = 'most' in budget ? low : high;
  if (!withinBudget(nearest, budget) || measuresLeft <= 0) return judged('missed');
  return judged('measure again');
};

/** Per-round ratios of side-by-side samples (ours / baseline). */
export const ratiosOf = (samples: { a: readonly number[]; b: readonly number[] }): number[] =>
  samples.a.map((value, index) => value / (samples.b[index] ?? Number.NaN));

/** How many times a figure within its noise of the budget is measured again before it is called missed. */
export const REMEASURES = 2;

/**
 * Measures with `sample` until the verdict is met or missed, measuring again
 * at most `remeasures` times, each time pooling the new rounds with the old.
 */
export const measureUntilDecided = async (
  sample: () => Promise<{ a: number[]; b: number[] }>,
  budget: Budget,
  remeasures: number,
  onRemeasure: (judged: Judged, attempt: number) => void = () => undefined,
): Promise<{ samples: { a: number[]; b: number[] }; judged: Judged; remeasured: number }> => {
  const samples = await sample();
  let remeasured = 0;
  let judged = judge(ratiosOf(samples), budget, remeasures);
  while (judged.verdict === 'measure again') {
    remeasured += 1;
    onRemeasure(judged, remeasured);
    const more = await sample();
    samples.a.push(...more.a);
    samples.b.push(...more.b);
    judged = judge(ratiosOf(samples), budget, remeasures - remeasured);
  }
  return { samples, judged, remeasured };
};
