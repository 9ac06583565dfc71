import { isLeft, isRight } from 'fp-ts/Either';
import fc from 'fast-check';
import { currentOf, lacks, merge, observeRead, SecretHistory, type SecretEntry } from '../../src/triggers/secrets';

/**
 * What is known of an endpoint's secrets over time (src/triggers/secrets.ts).
 * Pure: no cache, no provider. verify.ts keeps one history a process, merges
 * what z.cache holds into it, and writes it back while z.cache lacks part of it.
 */

const S0 = 'whsec_zero';
const S1 = 'whsec_one';
const S2 = 'whsec_two';
const T = 1_800_000_000_000;
/** What fast-check draws is fixed, so a failure is the same on every run and machine. */
const SEED = { seed: 20_240_611 };
/** What an arbitrary draws. */
type Drawn<Of> = Of extends fc.Arbitrary<infer Value> ? Value : never;

const startingWith = (secret: string, from: number, seen: number): SecretHistory => ({
  secrets: [{ secret, from, seen }],
});
const entryOf = (history: SecretHistory, secret: string): SecretEntry | undefined =>
  history.secrets.find((candidate) => candidate.secret === secret);
/** current, replaced or unknown, as the rules tell them apart. */
const kindOf = (history: SecretHistory, secret: string): string => {
  const entry = entryOf(history, secret);
  return !entry ? 'unknown' : entry.until === undefined ? 'current' : 'replaced';
};
/** Reads, each started `gap` ms after the one before, showing these secrets in turn. */
const readsOf = (history: SecretHistory, reads: Array<[secret: string, at: number]>): SecretHistory =>
  reads.reduce((known, [secret, at]) => observeRead(known, secret, at), history);

describe('the codec z.cache is read with', () => {
  it('decodes a history, replaced entries with their time, and refuses what is not one', () => {
    const history = observeRead(startingWith(S0, T, T), S1, T + 1);
    const decoded = SecretHistory.decode(JSON.parse(JSON.stringify(history)));
    expect(isRight(decoded) && decoded.right).toEqual(history);
    expect(isRight(SecretHistory.decode({ secrets: [] }))).toBe(true);
    for (const bad of [
      null,
      'whsec_zero',
      {},
      { secrets: [{ secret: S0, from: T }] },
      { secrets: [{ secret: S0, from: T, seen: T, until: 'later' }] },
      { secrets: [{ secret: 7, from: T, seen: T }] },
    ]) {
      expect(isLeft(SecretHistory.decode(bad))).toBe(true);
    }
  });
});

describe('currentOf', () => {
  it('is the one entry not replaced, and nothing when none is known', () => {
    expect(currentOf({ secrets: [] })).toBeUndefined();
    expect(currentOf(startingWith(S0, T, T))).toEqual({ secret: S0, from: T, seen: T });
    const replacedOnly: SecretHistory = { secrets: [{ secret: S0, from: T, seen: T, until: T + 5 }] };
    expect(currentOf(replacedOnly)).toBeUndefined();
  });
});

describe('a read of the secret', () => {
  it('makes the secret it shows current from the read, and marks the one before replaced at the read', () => {
    const history = observeRead(startingWith(S0, T, T + 10), S1, T + 500);
    expect(history.secrets).toEqual([
      { secret: S1, from: T + 500, seen: T + 500 },
      { secret: S0, from: T, seen: T + 10, until: T + 500 },
    ]);
    expect(currentOf(history)?.secret).toBe(S1);
    expect(kindOf(history, S0)).toBe('replaced');
    expect(kindOf(history, 'whsec_other')).toBe('unknown');
  });

  it('showing the current secret again moves only when it was last seen current', () => {
    const history = observeRead(startingWith(S0, T, T), S0, T + 60_000);
    expect(history.secrets).toEqual([{ secret: S0, from: T, seen: T + 60_000 }]);
  });

  it('a replaced secret stays replaced at the first read that showed it so', () => {
    const history = readsOf(startingWith(S0, T, T), [
      [S1, T + 100],
      [S2, T + 200],
    ]);
    expect(entryOf(history, S0)?.until).toBe(T + 100);
    expect(entryOf(history, S1)).toEqual({ secret: S1, from: T + 100, seen: T + 100, until: T + 200 });
    expect(currentOf(history)?.secret).toBe(S2);
  });

  it('a secret seen current again after it was replaced is current, in a new spell from that read', () => {
    const back = readsOf(startingWith(S0, T, T), [
      [S1, T + 100],
      [S0, T + 200],
    ]);
    expect(currentOf(back)).toEqual({ secret: S0, from: T + 200, seen: T + 200 });
    expect(entryOf(back, S1)?.until).toBe(T + 200);
    expect(back.secrets).toHaveLength(2);
  });

  it('a read that began before the latest change known changes nothing: it may have crossed a rotation', () => {
    const history = observeRead(startingWith(S0, T, T), S1, T + 100);
    // Before S1 was first seen (its `from`), before S0 was seen replaced (its `until`): the very same history.
    expect(observeRead(history, S0, T + 99)).toBe(history);
    expect(observeRead(history, S2, T + 99)).toBe(history);
    expect(observeRead(startingWith(S0, T, T), S1, T - 1)).toStrictEqual(startingWith(S0, T, T));
    // From the very millisecond of the change on, a read counts.
    expect(currentOf(observeRead(history, S2, T + 100))?.secret).toBe(S2);
    expect(currentOf(observeRead(history, S0, T + 150))?.secret).toBe(S0);
  });

  it('keeps the 20 newest secrets, the current one first', () => {
    let history = startingWith('whsec_0', T, T);
    for (let index = 1; index <= 25; index += 1) history = observeRead(history, `whsec_${index}`, T + index);
    expect(history.secrets).toHaveLength(20);
    expect(history.secrets[0]).toEqual({ secret: 'whsec_25', from: T + 25, seen: T + 25 });
    expect(history.secrets.map((entry) => entry.secret)).toEqual(
      Array.from({ length: 20 }, (_, index) => `whsec_${25 - index}`),
    );
    // 20 is the limit: nothing is forgotten at 20.
    let twenty = startingWith('whsec_0', T, T);
    for (let index = 1; index < 20; index += 1) twenty = observeRead(twenty, `whsec_${index}`, T + index);
    expect(twenty.secrets.map((entry) => entry.secret)).toContain('whsec_0');
  });
});

describe("two processes' histories merged", () => {
  it('knows every secret either knew, the one seen current last is current, every other replaced', () => {
    const a = observeRead(startingWith(S0, T, T), S1, T + 100);
    const b = observeRead(startingWith(S0, T, T), S2, T + 200);
    const merged = merge(a, b);
    expect(currentOf(merged)?.secret).toBe(S2);
    expect(kindOf(merged, S0)).toBe('replaced');
    // S1 was current when a last read; b's later read showed S2: S1 was replaced by then at the latest.
    expect(entryOf(merged, S1)).toEqual({ secret: S1, from: T + 100, seen: T + 100, until: T + 200 });
    expect(merged).toEqual(merge(b, a));
  });

  it('the secret seen current last is current, even when the other was first seen later', () => {
    // a read S1 at +100; b read S2 at +50 (a read that crossed the rotation) and again at +200: S2 came after S1.
    const a = observeRead(startingWith(S0, T, T), S1, T + 100);
    const b = readsOf(startingWith(S0, T, T), [
      [S2, T + 50],
      [S2, T + 200],
    ]);
    for (const merged of [merge(a, b), merge(b, a)]) {
      expect(currentOf(merged)).toEqual({ secret: S2, from: T + 50, seen: T + 200 });
      expect(kindOf(merged, S1)).toBe('replaced');
    }
  });

  it('two processes that saw different secrets in the same millisecond agree on one, whichever merges', () => {
    const a = observeRead(startingWith(S0, T, T), S1, T + 5);
    const b = observeRead(startingWith(S0, T, T), S2, T + 5);
    expect(merge(a, b)).toEqual(merge(b, a));
    expect(merge(a, b).secrets.filter((entry) => entry.until === undefined)).toHaveLength(1);
  });

  /**
   * A src bug, reported (expected to fail until fixed): a secret first seen and
   * seen replaced in the same millisecond (a read in the very millisecond the
   * subscribe stamped, as a virtual clock makes easy) is merged differently
   * either way round: mergeEntry takes `until <= from` of the other account as
   * "a later spell" only when that account comes second, and the tie between
   * the two secrets is then broken by name. The processes disagree on the
   * current secret.
   */
  it.failing('merge agrees either way round when a secret was replaced in the millisecond it was first seen', () => {
    // The old secret's name sorts first, so the tie goes its way.
    const subscribed = startingWith('whsec_a', T, T);
    const readAtOnce = observeRead(subscribed, 'whsec_b', T);
    expect(currentOf(readAtOnce)?.secret).toBe('whsec_b');
    expect(currentOf(merge(subscribed, readAtOnce))?.secret).toBe('whsec_b');
    expect(currentOf(merge(readAtOnce, subscribed))?.secret).toBe('whsec_b');
  });

  it('one account of a secret: first seen at the earlier, last seen at the later, replaced at the earlier', () => {
    const a: SecretHistory = { secrets: [{ secret: S0, from: T, seen: T + 50, until: T + 300 }] };
    const b: SecretHistory = { secrets: [{ secret: S0, from: T + 20, seen: T + 90, until: T + 200 }] };
    expect(merge(a, b).secrets).toEqual([{ secret: S0, from: T, seen: T + 90, until: T + 200 }]);
    expect(merge(b, a)).toEqual(merge(a, b));
  });

  it('a secret one process saw replaced stays replaced for the other', () => {
    const warm = startingWith(S0, T, T + 10);
    const other = observeRead(startingWith(S0, T, T), S1, T + 100);
    const merged = merge(warm, other);
    expect(kindOf(merged, S0)).toBe('replaced');
    expect(kindOf(merged, S1)).toBe('current');
  });

  it('a read that crossed a rotation cannot bring the replaced secret back', () => {
    // One read began at +100 and was answered after the rotation: S1. Another began later, at +110,
    // and was answered from before it: S0. Seen later does not undo seen replaced.
    const a = observeRead(startingWith(S0, T, T), S1, T + 100);
    const b = observeRead(startingWith(S0, T, T), S0, T + 110);
    for (const merged of [merge(a, b), merge(b, a)]) {
      expect(currentOf(merged)?.secret).toBe(S1);
      expect(kindOf(merged, S0)).toBe('replaced');
    }
  });

  it('a secret rotated back to, seen current after its replacement, is current: the later spell is kept', () => {
    const old = observeRead(startingWith(S0, T, T), S1, T + 100);
    const back = readsOf(old, [[S0, T + 200]]);
    for (const merged of [merge(old, back), merge(back, old)]) {
      expect(currentOf(merged)).toEqual({ secret: S0, from: T + 200, seen: T + 200 });
      expect(kindOf(merged, S1)).toBe('replaced');
    }
  });

  it('keeps the 20 newest of what both knew', () => {
    let a = startingWith('whsec_0', T, T);
    let b = startingWith('whsec_0', T, T);
    for (let index = 1; index <= 12; index += 1) a = observeRead(a, `whsec_a${index}`, T + index);
    for (let index = 1; index <= 12; index += 1) b = observeRead(b, `whsec_b${index}`, T + 100 + index);
    const merged = merge(a, b);
    expect(merged.secrets).toHaveLength(20);
    expect(currentOf(merged)?.secret).toBe('whsec_b12');
    expect(merged.secrets.map((entry) => entry.secret)).not.toContain('whsec_0');
  });
});

describe('lacks: what z.cache is missing of what this process knows', () => {
  const shared = startingWith(S0, T, T);
  const mine = observeRead(shared, S1, T + 100);

  it('a secret it has not, or a replacement it has not seen', () => {
    expect(lacks(shared, mine)).toBe(true);
    // Every secret there, but S0 still current there.
    const replacedOnlyHere: SecretHistory = { secrets: [{ secret: S0, from: T, seen: T, until: T + 100 }] };
    expect(lacks(shared, replacedOnlyHere)).toBe(true);
    // Replaced there earlier than here: nothing to add.
    const replacedEarlierThere: SecretHistory = { secrets: [{ secret: S0, from: T, seen: T, until: T + 50 }] };
    expect(lacks(replacedEarlierThere, replacedOnlyHere)).toBe(false);
    expect(lacks(replacedOnlyHere, replacedEarlierThere)).toBe(true);
  });

  it('nothing, when it knows all of it or more; when a secret was last seen does not count', () => {
    expect(lacks(mine, mine)).toBe(false);
    expect(lacks(mine, shared)).toBe(false);
    expect(lacks(shared, observeRead(shared, S0, T + 60_000))).toBe(false);
    expect(lacks({ secrets: [] }, { secrets: [] })).toBe(false);
    expect(lacks({ secrets: [] }, shared)).toBe(true);
  });
});

/**
 * Histories as processes make them. The endpoint's secrets follow one another
 * (w0 made with the endpoint, then a new key at each rotation). Three
 * processes start from w0; each, in turn, reads the secret (one read at a
 * time, each showing the secret current when it began) or looks at z.cache
 * (merges what is there, and writes back the merge). Times are close together,
 * so reads of several processes often begin in the same millisecond.
 */
const world = fc.record({
  rotations: fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 6 }),
  events: fc.array(
    fc.record({
      process: fc.nat({ max: 2 }),
      look: fc.boolean(),
      gap: fc.nat({ max: 150 }),
      takes: fc.nat({ max: 50 }),
    }),
    { maxLength: 14 },
  ),
});
type Played = { starts: number[]; histories: [SecretHistory, SecretHistory, SecretHistory]; shared: SecretHistory };
const W0: SecretHistory = startingWith('whsec_w0', T, T);
const play = ({ rotations, events }: Drawn<typeof world>): Played => {
  const starts = [T];
  for (const gap of rotations) starts.push((starts[starts.length - 1] ?? T) + gap);
  const histories: Played['histories'] = [W0, W0, W0];
  const busyUntil = [T, T, T];
  let shared: SecretHistory = { secrets: [] };
  let now = T;
  for (const { process, look, gap, takes } of events) {
    now += gap;
    const mine = histories[process] ?? W0;
    if (look) {
      shared = merge(shared, mine);
      histories[process] = shared;
    } else {
      const at = Math.max(now, (busyUntil[process] ?? T) + 1);
      histories[process] = observeRead(mine, secretAt(starts, at), at);
      busyUntil[process] = at + takes;
    }
  }
  return { starts, histories, shared };
};
/** The key current at `at`: w0 before the first rotation, w1 after it, and so on. */
const secretAt = (starts: number[], at: number): string => `whsec_w${starts.filter((start) => start <= at).length - 1}`;
const indexOf = (secret: string): number => Number(secret.slice('whsec_w'.length));
const histories = world.map(play);
/** A history without when each secret was seen replaced (only whether it was). */
const withoutUntil = (history: SecretHistory) =>
  history.secrets.map(({ until, ...entry }) => ({ ...entry, replaced: until !== undefined }));
const RUNS = { ...SEED, numRuns: 500 };

describe('merge and lacks, for any histories processes make', () => {
  it('merge is commutative: two processes merging each other’s history agree, to the millisecond', () => {
    fc.assert(
      fc.property(histories, ({ histories: [a, b, c], shared }) => {
        expect(merge(a, b)).toEqual(merge(b, a));
        expect(merge(c, shared)).toEqual(merge(shared, c));
      }),
      RUNS,
    );
  });

  it('merge is idempotent: merging what is already known changes nothing', () => {
    fc.assert(
      fc.property(histories, ({ histories: [a, b], shared }) => {
        expect(merge(a, a)).toEqual(a);
        const ab = merge(a, b);
        expect(merge(ab, ab)).toEqual(ab);
        expect(merge(ab, a)).toEqual(ab);
        expect(merge(shared, { secrets: [] })).toEqual(merge(shared, shared));
      }),
      RUNS,
    );
  });

  it('merge is associative in what it says of each secret (when seen, whether replaced), whatever order processes share in', () => {
    fc.assert(
      fc.property(histories, ({ histories: [a, b, c] }) => {
        expect(withoutUntil(merge(merge(a, b), c))).toEqual(withoutUntil(merge(a, merge(b, c))));
      }),
      RUNS,
    );
  });

  it('what any merge says is true of the endpoint: current the newest secret read, each replacement real', () => {
    fc.assert(
      fc.property(histories, ({ starts, histories: [a, b, c] }) => {
        const newest = Math.max(...[a, b, c].map((history) => indexOf(currentOf(history)?.secret ?? '')));
        for (const merged of [merge(merge(a, b), c), merge(a, merge(b, c)), merge(merge(c, a), b)]) {
          expect(currentOf(merged)?.secret).toBe(`whsec_w${newest}`);
          for (const { secret, from, seen, until } of merged.secrets) {
            // Current when first and when last seen; replaced no later than `until`, and not before it was last seen.
            expect(secretAt(starts, from)).toBe(secret);
            expect(secretAt(starts, seen)).toBe(secret);
            if (until === undefined) continue;
            expect(until).toBeGreaterThanOrEqual(starts[indexOf(secret) + 1] ?? Infinity);
            expect(until).toBeGreaterThanOrEqual(seen);
          }
        }
      }),
      RUNS,
    );
  });

  it('what is merged lacks nothing either side knew: once a look has written it, no process writes again for it', () => {
    fc.assert(
      fc.property(histories, ({ histories: [a, b, c], shared }) => {
        const ab = merge(a, b);
        expect(lacks(ab, a)).toBe(false);
        expect(lacks(ab, b)).toBe(false);
        expect(lacks(merge(shared, c), shared)).toBe(false);
        expect(lacks(merge(shared, c), c)).toBe(false);
      }),
      RUNS,
    );
  });

  it('a merge has each secret once, exactly one current, and every secret either knew', () => {
    fc.assert(
      fc.property(histories, ({ histories: [a, b] }) => {
        const ab = merge(a, b);
        const names = ab.secrets.map((entry) => entry.secret);
        expect(new Set(names).size).toBe(names.length);
        expect(ab.secrets.filter((entry) => entry.until === undefined)).toHaveLength(1);
        expect(new Set(names)).toEqual(new Set([...a.secrets, ...b.secrets].map((entry) => entry.secret)));
      }),
      RUNS,
    );
  });

  it('a read that began before the latest change a history knows changes nothing, whatever it shows', () => {
    fc.assert(
      fc.property(
        histories,
        fc.integer({ min: 1, max: 5_000 }),
        fc.constantFrom('whsec_w0', 'whsec_w1', 'whsec_new'),
        ({ histories: [a, b] }, before, secret) => {
          const ab = merge(a, b);
          const latest = Math.max(...ab.secrets.map((entry) => Math.max(entry.from, entry.until ?? entry.from)));
          expect(observeRead(ab, secret, latest - before)).toBe(ab);
        },
      ),
      RUNS,
    );
  });
});
