import { doubt, known, KnownEndpoints, knownSigner, learnt, takeToken, trustOf } from '../../src/delivery/known';
import { JUNK_ALLOWANCE, SECRET_SIGNS_ALONE_MS } from '../../src/limits';

/** What a process knows of an endpoint (src/delivery/known.ts): its states and transitions, as its tables say. */

const T0 = 1_000_000;

describe('what a process knows of an endpoint', () => {
  it('is trusted for 10 minutes from the read, then stale; doubted until a read', () => {
    const e = known('s1', T0, 0);
    expect(trustOf(e, T0 + SECRET_SIGNS_ALONE_MS)).toBe('trusted');
    expect(trustOf(e, T0 + SECRET_SIGNS_ALONE_MS + 1)).toBe('stale');
    doubt(e);
    expect(trustOf(e, T0)).toBe('doubted');
    learnt(e, 's1', T0 + 5);
    expect(trustOf(e, T0 + 5)).toBe('trusted');
  });

  it('learns a new secret: the old one is replaced (newest first, at most 10), and a read older than the last teaches nothing', () => {
    const e = known('s0', T0, 0);
    for (let n = 1; n <= 12; n += 1) learnt(e, `s${n}`, T0 + n);
    expect(e.secret).toBe('s12');
    expect(e.replaced).toEqual(['s11', 's10', 's9', 's8', 's7', 's6', 's5', 's4', 's3', 's2']);
    learnt(e, 's11', T0);
    expect([e.secret, e.readAt]).toEqual(['s12', T0 + 12]);
    // A secret seen again as current leaves the replaced.
    learnt(e, 's11', T0 + 20);
    expect([e.secret, e.replaced.slice(0, 2)]).toEqual(['s11', ['s12', 's10']]);
  });

  it('knows a signer among the current and replaced secrets only', () => {
    const e = known('s0', T0, 0);
    learnt(e, 's1', T0 + 1);
    expect(knownSigner(e, (secret) => secret === 's0')).toBe(true);
    expect(knownSigner(e, (secret) => secret === 's1')).toBe(true);
    expect(knownSigner(e, (secret) => secret === 'stranger')).toBe(false);
  });

  it('gives the burst at once, then a token each interval, and none that would come past the latest', () => {
    const { burst, everyMs } = JUNK_ALLOWANCE;
    const e = known('s0', T0, 0);
    const waits = Array.from({ length: burst + 3 }, () => takeToken(e, T0, T0 + 2 * everyMs));
    expect(waits).toEqual([...Array.from({ length: burst }, () => 0), everyMs, 2 * everyMs, undefined]);
    // Whole again after burst intervals; never more than the burst.
    expect(takeToken(e, T0 + 100 * everyMs, Infinity)).toBe(0);
    expect(e.allowance.tokens).toBe(burst - 1);
  });

  it('asserts its invariants: a broken one throws, as a bug', () => {
    const e = known('s0', T0, 0);
    e.replaced.push('s0');
    expect(() => learnt(e, 's0', T0 + 1)).toThrow('Invariant broken: a current secret is never among the replaced.');
  });

  it('keeps the endpoints served last, at most its limit', () => {
    const endpoints = new KnownEndpoints(2);
    const made = (secret: string) => () => known(secret, T0, 0);
    endpoints.get('a', made('a'));
    endpoints.get('b', made('b'));
    endpoints.get('a', made('a2'));
    endpoints.get('c', made('c'));
    expect(endpoints.size).toBe(2);
    expect(endpoints.peek('b')).toBeUndefined();
    expect(endpoints.peek('a')?.secret).toBe('a');
  });
});
