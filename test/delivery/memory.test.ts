import * as t from 'io-ts';
import { runBuilt } from '../helpers/builtScript';

/**
 * What a process keeps stays within its Runtime's limits however many endpoints it serves: a flood of junk over
 * more endpoints than it remembers, each junk delivery listing full pages of Svix's record, on a virtual clock, in
 * a Node process of its own (`npm run bench:memory`, built by npm test's pretest), as the bench runs it at 1,000
 * endpoints.
 */

const Report = t.type({
  ...{ endpoints: t.number, recordBytes: t.number, halted: t.number },
  ...{ heapBeforeMb: t.number, heapUsedMb: t.number, rssMb: t.number, peakRssMb: t.number },
});

const flood = (args: string[]) => runBuilt(Report, 'tools/bench/memory.js', ['--json', ...args], ['--expose-gc']);

describe("a process's memory under a flood of junk", () => {
  const flooded = ['--endpoints', '30', '--junk', '2', '--pages', '2', '--payload-bytes', '200'];
  const limits = { endpoints: 10, recordBytes: 100_000 };
  /** A page of 250 such messages, as the runtime counts it. */
  const PAGE_BYTES = 90_000;

  it('keeps at most its limit of endpoints, and of the record its budget plus the window being read', async () => {
    const limited = ['--limit-endpoints', String(limits.endpoints), '--limit-bytes', String(limits.recordBytes)];
    const [held, unlimited] = await Promise.all([flood([...flooded, ...limited]), flood(flooded)]);
    expect(held.halted).toBe(60);
    expect(held.endpoints).toBe(limits.endpoints);
    expect(held.recordBytes).toBeGreaterThan(limits.recordBytes / 2);
    expect(held.recordBytes).toBeLessThanOrEqual(limits.recordBytes + 2 * PAGE_BYTES);
    // Without the limits, the same flood keeps every endpoint and every page.
    expect(unlimited.endpoints).toBe(30);
    expect(unlimited.recordBytes).toBeGreaterThan(30 * 2 * 2 * PAGE_BYTES * 0.9);
  });
});
