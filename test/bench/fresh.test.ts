import { summary } from '../../src/tools/bench/fresh';

/** `npm run bench:fresh`'s arithmetic: what it reports of the fresh processes, and when it fails. */
describe('bench:fresh summary', () => {
  it('gives each clock its ratios in the order measured and their median, and passes on the CPU median', () => {
    const { lines, met } = summary([
      { clock: 'cpu', ratio: 1.0912 },
      { clock: 'wall', ratio: 1.2 },
      { clock: 'cpu', ratio: 1.2 },
      { clock: 'wall', ratio: 1.1 },
      { clock: 'cpu', ratio: 1.05 },
      { clock: 'wall', ratio: 1.3 },
    ]);
    expect(lines).toEqual([
      'bench:fresh: cpu 1.091, 1.2, 1.05; median 1.091',
      'bench:fresh: wall 1.2, 1.1, 1.3; median 1.2',
      'bench:fresh: CPU median within its budget of 1.5',
    ]);
    expect(met).toBe(true);
  });

  it('fails when the CPU median is over 1.5, whatever wall time shows', () => {
    const { lines, met } = summary([
      { clock: 'cpu', ratio: 1.09 },
      { clock: 'cpu', ratio: 1.57 },
      { clock: 'cpu', ratio: 1.56 },
      { clock: 'wall', ratio: 1.0 },
    ]);
    expect(met).toBe(false);
    expect(lines[2]).toBe('bench:fresh: CPU median over its budget of 1.5');
  });

  it('judges the median as it prints it: one that prints as 1.1 is within the budget', () => {
    const { lines, met } = summary([1.1003, 1.1004, 1.1002].map((ratio) => ({ clock: 'cpu', ratio })));
    expect({ line: lines[0], met }).toEqual({ line: 'bench:fresh: cpu 1.1, 1.1, 1.1; median 1.1', met: true });
  });
});
