import fc from 'fast-check';
import {
  CLOCK_SKEW_MS,
  classify,
  currentOf,
  forgetBefore,
  inUnseenSpan,
  mergeHistories,
  observeRead,
  refundToken,
  settles,
  spendToken,
  startingWith,
  tokensLeft,
  waitForToken,
  type SecretHistory,
} from '../../src/triggers/secretHistory';

/** What is known of an endpoint's secrets over time, and what it settles. Pure: no cache, no provider. */

const S0 = 'whsec_zero';
const S1 = 'whsec_one';
const S2 = 'whsec_two';
const ALLOWANCE = { burst: 3, refillMs: 5_000 };
const T = 1_800_000_000_000;

const is = (secret: string) => (candidate: string) => candidate === secret;

describe('a read of the secret', () => {
  it('makes the secret it shows current, and marks the one before replaced at the read', () => {
    const history = observeRead(startingWith(S0, T, T + 10), S1, T + 500);
    expect(currentOf(history)).toEqual({ secret: S1, from: T + 500, seen: T + 500 });
    expect(classify(history, is(S0))).toEqual({
      kind: 'replaced',
      entry: { secret: S0, from: T, seen: T + 10, until: T + 500 },
    });
    expect(classify(history, is(S1)).kind).toBe('current');
    expect(classify(history, is('whsec_other')).kind).toBe('unknown');
  });

  it('showing the same secret again only moves when it was last seen current', () => {
    const history = observeRead(startingWith(S0, T, T), S0, T + 60_000);
    expect(history.secrets).toEqual([{ secret: S0, from: T, seen: T + 60_000 }]);
  });

  it('a secret seen current again after it was replaced is current, with a new spell', () => {
    const back = observeRead(observeRead(startingWith(S0, T, T), S1, T + 100), S0, T + 200);
    expect(currentOf(back)).toEqual({ secret: S0, from: T + 200, seen: T + 200 });
    expect(classify(back, is(S1))).toEqual({ kind: 'replaced', entry: expect.objectContaining({ until: T + 200 }) });
  });

  it('keeps at most a dozen secrets, the newest', () => {
    let history = startingWith('whsec_0', T, T);
    for (let index = 1; index <= 20; index += 1) history = observeRead(history, `whsec_${index}`, T + index);
    expect(history.secrets).toHaveLength(12);
    expect(currentOf(history)?.secret).toBe('whsec_20');
    expect(history.secrets.map((entry) => entry.secret)).not.toContain('whsec_8');
  });

  it('forgets secrets replaced before a moment, never the current one', () => {
    const history = observeRead(observeRead(startingWith(S0, T, T), S1, T + 100), S2, T + 200);
    expect(forgetBefore(history, T + 150).secrets.map((entry) => entry.secret)).toEqual([S2, S1]);
    expect(forgetBefore(history, T + 10_000).secrets.map((entry) => entry.secret)).toEqual([S2]);
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
    return { a, b, merged: mergeHistories(a, b, T, ALLOWANCE) };
  });

  it('knows every secret either knew, with one current secret, the same whichever way round', () => {
    fc.assert(
      fc.property(twoHistories, ({ a, b, merged }) => {
        const known = new Set([...a.secrets, ...b.secrets].map((entry) => entry.secret));
        expect(new Set(merged.secrets.map((entry) => entry.secret))).toEqual(known);
        expect(merged.secrets.filter((entry) => entry.until === undefined)).toHaveLength(1);
        expect(currentOf(mergeHistories(b, a, T, ALLOWANCE))?.secret).toBe(currentOf(merged)?.secret);
        expect(mergeHistories(merged, merged, T, ALLOWANCE).secrets).toEqual(merged.secrets);
      }),
      { numRuns: 300 },
    );
  });

  it('two processes that saw different secrets at the same moment agree on the current one, merged either way', () => {
    const a = observeRead(startingWith('whsec_zero', T, T), 'whsec_1', T + 5);
    const b = observeRead(startingWith('whsec_zero', T, T), 'whsec_2', T + 5);
    expect(currentOf(mergeHistories(a, b, T, ALLOWANCE))?.secret).toBe(
      currentOf(mergeHistories(b, a, T, ALLOWANCE))?.secret,
    );
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
    for (const merged of [mergeHistories(a, b, T, ALLOWANCE), mergeHistories(b, a, T, ALLOWANCE)]) {
      expect(currentOf(merged)?.secret).toBe(S1);
      expect(classify(merged, is(S0)).kind).toBe('replaced');
    }
  });

  it('a secret one process saw replaced stays replaced for the other', () => {
    const warm = startingWith(S0, T, T + 10);
    const other = observeRead(startingWith(S0, T, T), S1, T + 100);
    const merged = mergeHistories(warm, other, T + 200, ALLOWANCE);
    expect(classify(merged, is(S0)).kind).toBe('replaced');
    expect(classify(merged, is(S1)).kind).toBe('current');
  });

  it('keeps the more spent allowance', () => {
    const spent = spendToken(spendToken(startingWith(S0, T, T), T, ALLOWANCE), T, ALLOWANCE);
    const fresh = startingWith(S0, T, T);
    expect(tokensLeft(mergeHistories(fresh, spent, T, ALLOWANCE), T, ALLOWANCE)).toBe(1);
    expect(tokensLeft(mergeHistories(spent, fresh, T, ALLOWANCE), T, ALLOWANCE)).toBe(1);
  });
});

describe('deliveries that match no known secret', () => {
  const seconds = (ms: number) => Math.floor(ms / 1000);

  it('are settled by a read made after they were signed, or after they arrived', () => {
    const history = observeRead(startingWith(S0, T, T), S0, T + 10_000);
    // Signed well before the read: no newer secret can have signed them.
    expect(settles(history, seconds(T + 5_000), T + 20_000)).toBe(true);
    // Signed just before the read, within the clocks' allowance: only a read after it arrived settles it.
    expect(settles(history, seconds(T + 9_000), T + 20_000)).toBe(false);
    expect(settles(history, seconds(T + 9_000), T + 9_500)).toBe(true);
    // Signed after the read: the secret may have changed since.
    expect(settles(history, seconds(T + 30_000), T + 31_000)).toBe(false);
  });

  it('are worth a look at the record only when signed between two reads that saw different secrets', () => {
    const history = observeRead(observeRead(startingWith(S0, T, T + 1_000), S0, T + 2_000), S2, T + 60_000);
    // S0 was seen last at T+2s and S2 first at T+60s: a secret in between may never have been seen.
    expect(inUnseenSpan(history, seconds(T + 30_000))).toBe(true);
    expect(inUnseenSpan(history, seconds(T + 60_000 + CLOCK_SKEW_MS - 1))).toBe(true);
    // Well before S0 was last seen current, or well after S2 was first, any secret that signed them is known.
    expect(inUnseenSpan(history, seconds(T + 1_000 - CLOCK_SKEW_MS - 2_000))).toBe(false);
    expect(inUnseenSpan(history, seconds(T + 60_000 + CLOCK_SKEW_MS + 1_000))).toBe(false);
    // An endpoint whose secret never changed has no such moment.
    expect(inUnseenSpan(startingWith(S0, T, T + 60_000), seconds(T + 30_000))).toBe(false);
  });
});

describe('the allowance of calls for them', () => {
  it('is a burst of three, then one every five seconds, and a refund never lifts it past the burst', () => {
    let history = startingWith(S0, T, T);
    expect(tokensLeft(history, T, ALLOWANCE)).toBe(3);
    for (let call = 0; call < 3; call += 1) history = spendToken(history, T, ALLOWANCE);
    expect(tokensLeft(history, T, ALLOWANCE)).toBe(0);
    expect(waitForToken(history, T, ALLOWANCE)).toBe(5_000);
    expect(waitForToken(history, T + 4_000, ALLOWANCE)).toBe(1_000);
    expect(tokensLeft(history, T + 5_000, ALLOWANCE)).toBe(1);
    expect(tokensLeft(history, T + 60_000, ALLOWANCE)).toBe(3);
    history = refundToken(
      refundToken(refundToken(refundToken(history, T, ALLOWANCE), T, ALLOWANCE), T, ALLOWANCE),
      T,
      ALLOWANCE,
    );
    expect(tokensLeft(history, T, ALLOWANCE)).toBe(3);
  });
});
