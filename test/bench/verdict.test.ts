import fc from 'fast-check';
import { judge, measureUntilDecided, medianInterval, ratiosOf, type Budget } from '../../src/tools/bench/verdict';

/**
 * The bench's verdict on a figure, from the run's own samples: met, missed,
 * or (past the budget by no more than its noise) measure again. No timing is
 * measured or asserted here: the samples are made up.
 */

const COLD_START: Budget = { most: 1.05 };

/** Per-round ratios spread evenly around a centre. */
const spread = (centre: number, halfWidth: number, rounds = 21): number[] =>
  Array.from({ length: rounds }, (_, index) => centre - halfWidth + (2 * halfWidth * index) / (rounds - 1));

describe('the confidence interval of a median', () => {
  it('is read off the sorted values, and widens to all of them when they are few', () => {
    expect(medianInterval([1, 2, 3])).toEqual({ low: 1, high: 3 });
    // 21 rounds: the 6th and 16th smallest, as tables of the sign test give.
    expect(medianInterval(spread(11, 10))).toEqual({ low: 6, high: 16 });
    expect(medianInterval([])).toEqual({ low: Number.NaN, high: Number.NaN });
  });

  it('always holds the median, and narrows as rounds are added', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.5, max: 2, noNaN: true }), { minLength: 1, maxLength: 200 }),
        (values) => {
          const { low, high } = medianInterval(values);
          const sorted = [...values].sort((a, b) => a - b);
          const middle = sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
          expect(low).toBeLessThanOrEqual(middle);
          expect(high).toBeGreaterThanOrEqual(middle);
        },
      ),
    );
    const few = medianInterval(spread(1, 0.1, 11));
    const many = medianInterval(spread(1, 0.1, 401));
    expect(many.high - many.low).toBeLessThan(few.high - few.low);
  });
});

describe('the verdict on a figure', () => {
  it('is met when the median is within the budget, however noisy', () => {
    expect(judge(spread(1.03, 0.2), COLD_START, 2).verdict).toBe('met');
    expect(judge([1.05], COLD_START, 0).verdict).toBe('met');
    expect(judge(spread(0.93, 0.05), { least: 0.8 }, 2).verdict).toBe('met');
  });

  it('measures again a figure past its budget by no more than its noise (the 1.051× cold start)', () => {
    const judged = judge(spread(1.051, 0.03), COLD_START, 2);
    expect(judged.verdict).toBe('measure again');
    expect(judged.ratio).toBeCloseTo(1.051);
    expect(judged.low).toBeLessThan(1.05);
  });

  it('calls missed a figure whose whole interval is past the budget', () => {
    expect(judge(spread(1.2, 0.05), COLD_START, 2).verdict).toBe('missed');
    expect(judge(spread(0.7, 0.05), { least: 0.8 }, 2).verdict).toBe('missed');
  });

  it('calls missed a figure still within its noise when no measuring again is left', () => {
    expect(judge(spread(1.051, 0.03), COLD_START, 0).verdict).toBe('missed');
  });

  it('calls missed a figure with no usable rounds', () => {
    expect(judge([], COLD_START, 2).verdict).toBe('missed');
  });

  it('never calls missed a median within its budget, nor met one past it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.5, max: 2, noNaN: true }), { minLength: 1, maxLength: 60 }),
        fc.double({ min: 0.5, max: 2, noNaN: true }),
        fc.boolean(),
        fc.nat(3),
        (ratios, limit, atMost, left) => {
          const budget: Budget = atMost ? { most: limit } : { least: limit };
          const judged = judge(ratios, budget, left);
          const within = atMost ? judged.ratio <= limit : judged.ratio >= limit;
          expect(judged.verdict === 'met').toBe(within);
          if (left === 0) expect(judged.verdict).not.toBe('measure again');
        },
      ),
    );
  });
});

describe('measuring until decided', () => {
  /** A sampler that returns the given per-round ratios (baseline 100) batch by batch. */
  const batches = (...ratios: number[][]) => {
    let taken = 0;
    const sample = async () => {
      const batch = ratios[Math.min(taken, ratios.length - 1)] ?? [];
      taken += 1;
      return { a: batch.map((ratio) => ratio * 100), b: batch.map(() => 100) };
    };
    return { sample, taken: () => taken };
  };

  it('measures once when the first verdict is clear', async () => {
    const source = batches(spread(1.03, 0.02));
    const { judged, remeasured } = await measureUntilDecided(source.sample, COLD_START, 2);
    expect(judged.verdict).toBe('met');
    expect(remeasured).toBe(0);
    expect(source.taken()).toBe(1);
  });

  it('pools the rounds measured again, and stops once they decide', async () => {
    const told: number[] = [];
    const source = batches(spread(1.051, 0.03), spread(1.04, 0.03));
    const { judged, remeasured, samples } = await measureUntilDecided(source.sample, COLD_START, 2, (_, attempt) =>
      told.push(attempt),
    );
    expect(judged.verdict).toBe('met');
    expect(remeasured).toBe(1);
    expect(told).toEqual([1]);
    expect(samples.a).toHaveLength(42);
  });

  it('measures again at most the given number of times, then calls it missed', async () => {
    const source = batches(spread(1.051, 0.03));
    const { judged, remeasured } = await measureUntilDecided(source.sample, COLD_START, 2);
    expect(judged.verdict).toBe('missed');
    expect(remeasured).toBe(2);
    expect(source.taken()).toBe(3);
  });

  it('takes ratios round by round', () => {
    expect(ratiosOf({ a: [12, 120], b: [10, 100] })).toEqual([1.2, 1.2]);
  });
});
