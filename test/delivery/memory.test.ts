import * as t from 'io-ts';
import { runBuilt } from '../helpers/builtScript';

/**
 * What a process keeps stays within its limit however many endpoints it serves: a flood of junk over more endpoints
 * than it remembers, on a virtual clock, in a Node process of its own (`npm run bench:memory`, built by npm test's
 * pretest).
 */

const Report = t.type({
  ...{ endpoints: t.number, halted: t.number },
  ...{ heapBeforeMb: t.number, heapUsedMb: t.number, rssMb: t.number, peakRssMb: t.number },
});

const flood = (args: string[]) => runBuilt(Report, 'tools/bench/memory.js', ['--json', ...args], ['--expose-gc']);

describe("a process's memory under a flood of junk", () => {
  it('keeps at most its limit of endpoints, and halts every junk delivery', async () => {
    const [held, unlimited] = await Promise.all([
      flood(['--endpoints', '30', '--junk', '2', '--kept', '10']),
      flood(['--endpoints', '30', '--junk', '2', '--kept', '100']),
    ]);
    expect(held.halted).toBe(60);
    expect(held.endpoints).toBe(10);
    // With room for them all, the same flood keeps every endpoint.
    expect(unlimited.endpoints).toBe(30);
  });
});
