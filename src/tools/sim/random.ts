import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/**
 * Every random choice of a simulated run, from one seed (pure-rand's xoroshiro128+). Each part of the world draws from
 * its own stream, forked in a fixed order, so a draw added in one part does not move the choices of another.
 */
export class Random {
  private readonly generator: ReturnType<typeof xoroshiro128plus>;
  constructor(seed: number) {
    this.generator = xoroshiro128plus(seed);
  }
  /** A whole number from `min` to `max`, both included. */
  int = (min: number, max: number): number => uniformInt(this.generator, min, max);
  /** A number in [min, max). */
  between = (min = 0, max = 1): number => min + (max - min) * (this.int(0, 2 ** 30 - 1) / 2 ** 30);
  chance = (probability: number): boolean => probability > 0 && this.between() < probability;
  pick<T>(items: readonly T[]): T {
    const item = items[this.int(0, items.length - 1)];
    if (item === undefined) throw new RangeError('Nothing to pick from.');
    return item;
  }
  bytes = (length: number): Uint8Array => Uint8Array.from({ length }, () => this.int(0, 255));
  /** A stream of its own. */
  fork = (): Random => new Random(this.int(0, 2 ** 31 - 1));
}
