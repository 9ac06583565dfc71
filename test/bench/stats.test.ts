import { median, pairedRatio, percentile, sideBySide } from '../../src/tools/bench/stats';

/** The benchmark's arithmetic (no timings are asserted anywhere in the tests). */
describe('bench statistics', () => {
  it('takes medians and interpolated percentiles', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(percentile([10, 20, 30, 40, 50], 0)).toBe(10);
    expect(percentile([10, 20, 30, 40, 50], 100)).toBe(50);
    expect(percentile([10, 20], 99)).toBeCloseTo(19.9);
    expect(median([])).toBeNaN();
  });

  it('compares rounds pair by pair, so a slow spell touching both does not move the ratio', () => {
    // The machine slows tenfold in the middle rounds; every pair still shows 1.2.
    expect(pairedRatio({ a: [12, 120, 120, 12, 12], b: [10, 100, 100, 10, 10] })).toBeCloseTo(1.2);
  });

  it('alternates which side runs first', async () => {
    const order: string[] = [];
    await sideBySide(
      4,
      () => order.push('a'),
      () => order.push('b'),
    );
    expect(order.join('')).toBe('abbaabba');
  });
});
