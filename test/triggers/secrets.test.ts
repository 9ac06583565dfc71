import fc from 'fast-check';
import {
  currentOf,
  lacks,
  merge,
  observeRead,
  signedByCurrent,
  unseenSpans,
  type SecretHistory,
} from '../../src/triggers/secrets';

/** What is known of an endpoint's secrets over time. Pure: no cache, no provider. */

const S0 = 'whsec_zero';
const S1 = 'whsec_one';
const S2 = 'whsec_two';
const T = 1_800_000_000_000;

const startingWith = (secret: string, from: number, seen: number): SecretHistory => ({
  secrets: [{ secret, from, seen }],
});
/** current, replaced or unknown, as the rules tell them apart. */
const kindOf = (history: SecretHistory, secret: string): string => {
  const entry = history.secrets.find((candidate) => candidate.secret === secret);
  return !entry ? 'unknown' : entry.until === undefined ? 'current' : 'replaced';
};

describe('a read of the secret', () => {
  it('makes the secret it shows current, and marks the one before replaced at the read', () => {
    const history = observeRead(startingWith(S0, T, T + 10), S1, T + 500);
    expect(currentOf(history)).toEqual({ secret: S1, from: T + 500, seen: T + 500 });
    expect(history.secrets).toContainEqual({ secret: S0, from: T, seen: T + 10, until: T + 500 });
    expect(kindOf(history, S1)).toBe('current');
    expect(kindOf(history, 'whsec_other')).toBe('unknown');
  });

  it('showing the same secret again only moves when it was last seen current', () => {
    const history = observeRead(startingWith(S0, T, T), S0, T + 60_000);
    expect(history.secrets).toEqual([{ secret: S0, from: T, seen: T + 60_000 }]);
  });

  it('a secret seen current again after it was replaced is current, with a new spell', () => {
    const back = observeRead(observeRead(startingWith(S0, T, T), S1, T + 100), S0, T + 200);
    expect(currentOf(back)).toEqual({ secret: S0, from: T + 200, seen: T + 200 });
    expect(back.secrets).toContainEqual(expect.objectContaining({ secret: S1, until: T + 200 }));
  });

  it('a read that started before the latest one known changes nothing: it may have crossed a rotation', () => {
    const history = observeRead(startingWith(S0, T, T), S1, T + 100);
    expect(observeRead(history, S0, T + 50)).toBe(history);
    // Started after the replacement was seen: the secret is current again (rotated back to).
    expect(currentOf(observeRead(history, S0, T + 150))?.secret).toBe(S0);
  });

  it('keeps at most a dozen secrets, the newest', () => {
    let history = startingWith('whsec_0', T, T);
    for (let index = 1; index <= 20; index += 1) history = observeRead(history, `whsec_${index}`, T + index);
    expect(history.secrets).toHaveLength(12);
    expect(currentOf(history)?.secret).toBe('whsec_20');
    expect(history.secrets.map((entry) => entry.secret)).not.toContain('whsec_8');
  });
});

describe("two processes' histories merged", () => {
  /** Reads of one of a few secrets at increasing times, as one process might have made them. */
  const reads = fc.array(
    fc.record({ secret: fc.constantFrom(S0, S1, S2, 'whsec_3'), gap: fc.integer({ min: 1, max: 1_000 }) }),
    {
      maxLength: 8,
    },
  );
  const historyOf = (list: { secret: string; gap: number }[], start: number): SecretHistory => {
    let at = start;
    let history = startingWith(S0, T, T);
    for (const read of list) {
      at += read.gap;
      history = observeRead(history, read.secret, at);
    }
    return history;
  };
  /** Two processes' histories, the second starting a moment later, and the first merged with the second. */
  const twoHistories = fc.tuple(reads, reads, fc.integer({ min: 0, max: 500 })).map(([left, right, offset]) => {
    const a = historyOf(left, T);
    const b = historyOf(right, T + offset);
    return { a, b, merged: merge(a, b) };
  });

  it('knows every secret either knew, with one current secret, the same whichever way round', () => {
    fc.assert(
      fc.property(twoHistories, ({ a, b, merged }) => {
        const known = new Set([...a.secrets, ...b.secrets].map((entry) => entry.secret));
        expect(new Set(merged.secrets.map((entry) => entry.secret))).toEqual(known);
        expect(merged.secrets.filter((entry) => entry.until === undefined)).toHaveLength(1);
        expect(currentOf(merge(b, a))?.secret).toBe(currentOf(merged)?.secret);
        expect(merge(merged, merged).secrets).toEqual(merged.secrets);
      }),
      { numRuns: 300 },
    );
  });

  it('two processes that saw different secrets at the same moment agree on the current one, merged either way', () => {
    const a = observeRead(startingWith('whsec_zero', T, T), 'whsec_1', T + 5);
    const b = observeRead(startingWith('whsec_zero', T, T), 'whsec_2', T + 5);
    expect(currentOf(merge(a, b))?.secret).toBe(currentOf(merge(b, a))?.secret);
  });

  it('a secret either saw replaced stays replaced, unless the other saw it current again in a later spell', () => {
    fc.assert(
      fc.property(twoHistories, ({ a, b, merged }) => {
        for (const [one, other] of [
          [a, b],
          [b, a],
        ] as const) {
          for (const entry of one.secrets) {
            if (entry.until === undefined) continue;
            const later = other.secrets.find((candidate) => candidate.secret === entry.secret);
            const kept = merged.secrets.find((candidate) => candidate.secret === entry.secret);
            if (later && later.from > entry.until) {
              // The later spell is the one kept: it began when the other saw the secret current again,
              // and the spell that ended before it has no say in when it ends.
              expect(kept?.from).toBe(later.from);
              if (later.until !== undefined) expect(kept?.until).toBe(later.until);
              continue;
            }
            expect(kept?.until).toBeDefined();
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a read that crossed a rotation cannot bring the revoked secret back', () => {
    // Process A's read started at +100 and was answered after the rotation: S1. Process B's read
    // started later, at +110, but was answered from before the rotation: S0.
    const a = observeRead(startingWith(S0, T, T), S1, T + 100);
    const b = observeRead(startingWith(S0, T, T), S0, T + 110);
    for (const merged of [merge(a, b), merge(b, a)]) {
      expect(currentOf(merged)?.secret).toBe(S1);
      expect(kindOf(merged, S0)).toBe('replaced');
    }
  });

  it('a secret one process saw replaced stays replaced for the other', () => {
    const warm = startingWith(S0, T, T + 10);
    const other = observeRead(startingWith(S0, T, T), S1, T + 100);
    const merged = merge(warm, other);
    expect(kindOf(merged, S0)).toBe('replaced');
    expect(kindOf(merged, S1)).toBe('current');
  });
});

describe('what is shared and what spans are unseen', () => {
  it('z.cache lacks a secret or a replacement this process knows; first signing times go along with them', () => {
    const shared = startingWith(S0, T, T);
    const mine = observeRead(shared, S1, T + 100);
    expect(lacks(shared, mine)).toBe(true);
    expect(lacks(mine, mine)).toBe(false);
    expect(lacks(mine, signedByCurrent(mine, T + 90))).toBe(false);
    expect(currentOf(merge(mine, signedByCurrent(mine, T + 90)))?.firstSigned).toBe(T + 90);
  });

  it('the current secret keeps the earliest signing time seen with it', () => {
    const first = signedByCurrent(startingWith(S0, T, T), T + 5_000);
    expect(currentOf(first)?.firstSigned).toBe(T + 5_000);
    expect(signedByCurrent(first, T + 9_000)).toBe(first);
    expect(currentOf(signedByCurrent(first, T + 1_000))?.firstSigned).toBe(T + 1_000);
    expect(signedByCurrent({ secrets: [] }, T)).toEqual({ secrets: [] });
  });

  it('spans run from when one secret was last seen to the next, and from the endpoint to a forgotten past', () => {
    const history = observeRead(observeRead(startingWith(S0, T, T + 1_000), S0, T + 2_000), S2, T + 60_000);
    expect(unseenSpans(history, T)).toEqual([{ from: T + 2_000, next: expect.objectContaining({ secret: S2 }) }]);
    expect(unseenSpans(startingWith(S0, T, T + 60_000), T)).toEqual([]);
    expect(unseenSpans(startingWith(S2, T + 5_000, T + 60_000), T)).toEqual([
      { from: T, next: expect.objectContaining({ secret: S2 }) },
    ]);
  });
});
