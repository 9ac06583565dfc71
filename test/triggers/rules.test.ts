import fc from 'fast-check';
import { callsLeft, decide, RULES, spend, type Delivery, type Known, type Step } from '../../src/triggers/rules';
import { observeRead, type SecretHistory } from '../../src/triggers/secrets';

/**
 * The pure core that decides which delivery runs, on its own: no cache, no
 * Svix, no clock. Each row of docs/guarantees.md's table "Which delivery
 * runs" has an example named after it, and the properties hold for any
 * history of rotations.
 */

const T = 1_800_000_000_000;
const A = 'whsec_a';
const B = 'whsec_b';
const C = 'whsec_c';
const ID = 'msg_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9';
const NEVER = Number.NEGATIVE_INFINITY;

/** A warm process that looked at z.cache and read secret A just now, at T. */
const known = (changes: Partial<Known> = {}): Known => ({
  history: { secrets: [{ secret: A, from: T - 3_600_000, seen: T }] },
  madeAt: T - 3_600_000,
  lookedAt: T,
  lookFailedAt: NEVER,
  unshared: false,
  readAt: T,
  troubleAt: NEVER,
  confirmedAt: NEVER,
  records: { size: 0 },
  allowance: { calls: RULES.burst, at: T },
  ...changes,
});

/** A delivery signed with `secrets`, signed `signedAgo` ms before `now` and arriving at `now`. */
const delivery = (secrets: string[], now: number, changes: Partial<Delivery> = {}): Delivery => ({
  id: ID,
  signedAt: Math.floor((now - 1_000) / 1000) * 1000,
  signedWith: (secret) => secrets.includes(secret),
  arrivedAt: now,
  deadline: now + 25_000,
  looked: false,
  readFailed: false,
  ...changes,
});

/** A history in which A was read until `seenA`, then B found at `foundB` (and first seen signing at `signedB`). */
const rotated = (seenA: number, foundB: number, signedB?: number): SecretHistory => {
  const history = observeRead({ secrets: [{ secret: A, from: T - 3_600_000, seen: seenA }] }, B, foundB);
  return signedB === undefined
    ? history
    : { secrets: history.secrets.map((entry) => (entry.secret === B ? { ...entry, firstSigned: signedB } : entry)) };
};

const RUN: Step = { kind: 'run' };
const halt = (why: string) => ({ kind: 'halt', why });

describe('which delivery runs: the table, row by row', () => {
  it('row 1: an id that is not a Svix message id halts, whatever signed it', () => {
    for (const id of ['msg_short', 'URGENT: your Svix key leaked', `msg_${'A'.repeat(26)}!`, '']) {
      expect(decide(known(), delivery([A], T, { id }), T)).toEqual(halt('not-a-svix-id'));
    }
  });

  it('row 2: signed with the current secret, read within ten minutes: runs on the body', () => {
    expect(decide(known(), delivery([A], T + 9 * 60_000, { looked: true }), T + 9 * 60_000)).toEqual(RUN);
  });

  it('row 3: signed with the current secret, read longer ago: read again (free), or trusted while Svix fails reads', () => {
    const now = T + 11 * 60_000;
    expect(decide(known(), delivery([A], now, { looked: true }), now)).toEqual({
      kind: 'read',
      charged: false,
      at: now,
    });
    expect(decide(known({ troubleAt: now - 1_000 }), delivery([A], now, { looked: true }), now)).toEqual(RUN);
  });

  it('row 4: signed with a secret the endpoint had: Svix’s record, free, however many', () => {
    const now = T + 2_000;
    const state = known({ history: rotated(T, T + 1_000), allowance: { calls: 0, at: now } });
    expect(decide(state, delivery([A], now), now)).toEqual({ kind: 'record', charged: false });
  });

  it('row 8: signed with no known secret and not read for since it arrived: a read with a call of the allowance', () => {
    const now = T + 2_000;
    expect(decide(known(), delivery([C], now), now)).toEqual({ kind: 'read', charged: true, at: now });
    // A read under way is joined, for free.
    expect(decide(known({ reading: {} }), delivery([C], now), now)).toEqual({ kind: 'read', charged: false, at: now });
    // No call left: it waits for the next, while the deadline leaves time for the read.
    const spent = known({ allowance: { calls: 0, at: now } });
    expect(decide(spent, delivery([C], now), now)).toEqual({ kind: 'read', charged: true, at: now + RULES.refillMs });
  });

  it('row 5: signed in a span a secret never seen here may have signed in, found lately: the record, free', () => {
    // A was read at T, B found at T + 20 s: C may have come and gone between.
    const now = T + 30_000;
    const state = known({ history: rotated(T, T + 20_000), readAt: T + 20_000 });
    const signedInSpan = delivery([C], now, { signedAt: T + 10_000, looked: true });
    expect(decide(state, signedInSpan, now)).toEqual({ kind: 'record', charged: false });
    // A minute after the span was found, only a confirmation in the last minute keeps it free.
    const later = T + 20_000 + RULES.liveForMs + 1;
    const arrivingLater = delivery([C], later, { signedAt: T + 10_000, looked: true });
    expect(decide(state, arrivingLater, later)).toEqual({ kind: 'record', charged: true });
    const live = known({ ...state, confirmedAt: later - 1_000 });
    expect(decide(live, arrivingLater, later)).toEqual({ kind: 'record', charged: false });
  });

  it('row 6: in a span, not live, without a call of the allowance: waits for a record under way, else halts', () => {
    const now = T + 20_000 + RULES.liveForMs + 1;
    const state = known({ history: rotated(T, T + 20_000), allowance: { calls: 0, at: now } });
    const signedInSpan = delivery([C], now, { signedAt: T + 10_000, looked: true });
    expect(decide(state, signedInSpan, now)).toEqual(halt('unchecked-signature'));
    expect(decide({ ...state, records: { size: 1 } }, signedInSpan, now)).toEqual({ kind: 'wait' });
  });

  it('row 9: no known secret, read for since it arrived, outside every span: junk', () => {
    const now = T + 2_000;
    const state = known({ readAt: now });
    expect(decide(state, delivery([C], now), now)).toEqual(halt('no-valid-signature'));
    // Signed more than five minutes before the read started, whatever the clocks: settled too.
    const old = delivery([C], now, { arrivedAt: now + 1, signedAt: now - RULES.clockAllowanceMs - 2_000 });
    expect(decide(state, old, now + 1)).toEqual(halt('no-valid-signature'));
  });

  it('row 8: no known secret, no call of the allowance within the deadline: halts as unchecked', () => {
    const now = T + 2_000;
    const spent = known({ allowance: { calls: 0, at: now } });
    expect(decide(spent, delivery([C], now, { deadline: now + RULES.refillMs }), now)).toEqual(
      halt('unchecked-signature'),
    );
  });

  it('row 10: no known secret while Svix fails reads: the record with the allowance, else an error naming it', () => {
    const now = T + 2_000;
    expect(decide(known({ troubleAt: now - 100 }), delivery([C], now), now)).toEqual({ kind: 'record', charged: true });
    const failed = delivery([C], now, { readFailed: true });
    // One call on credit, so what waited for a failed read is not all lost to junk that emptied the allowance.
    expect(decide(known({ allowance: { calls: 0, at: now } }), failed, now)).toEqual({ kind: 'record', charged: true });
    expect(decide(known({ allowance: { calls: -0.5, at: now } }), failed, now)).toEqual({
      kind: 'error',
      why: 'unchecked-signature',
    });
    expect(decide(known({ confirmedAt: now - 100 }), failed, now)).toEqual({ kind: 'record', charged: false });
  });

  it('row 11: looks at z.cache when cold, every minute, and while it lacks what this process knows', () => {
    const now = T + RULES.lookEveryMs + 1;
    expect(decide(known(), delivery([A], now), now)).toEqual({ kind: 'look' });
    expect(decide(known({ lookedAt: NEVER }), delivery([A], T), T)).toEqual({ kind: 'look' });
    expect(decide(known({ unshared: true }), delivery([A], T), T)).toEqual({ kind: 'look' });
    // Once per delivery, and not again within seconds of a failed look.
    expect(decide(known(), delivery([A], now, { looked: true }), now)).toEqual(RUN);
    expect(decide(known({ lookFailedAt: now - 1_000 }), delivery([A], now), now)).toEqual(RUN);
  });
});

describe('row 7', () => {
  it('signed in the very second the next secret first signed: read for first, then the record', () => {
    const now = T + 30_000;
    const state = known({ history: rotated(T, T + 20_000, T + 15_000), readAt: T + 20_000 });
    const sameSecond = delivery([C], now, { signedAt: T + 15_000, looked: true });
    expect(decide(state, sameSecond, now)).toEqual({ kind: 'read', charged: true, at: now });
    expect(decide({ ...state, readAt: now }, sameSecond, now)).toEqual({ kind: 'record', charged: false });
  });
});

describe('clocks', () => {
  it('Svix’s clock 5 s behind: a delivery signed with a just-rotated secret right after a read of the old one is read for', () => {
    // A read at T showed A; B replaced it at once; a delivery signed with B, stamped 5 s behind, arrives after T.
    const now = T + 1_000;
    const skewed = delivery([B], now, { signedAt: Math.floor((T - 4_000) / 1000) * 1000 });
    expect(decide(known(), skewed, now)).toEqual({ kind: 'read', charged: true, at: now });
  });

  it('a span ends at the first signing time seen with the next secret, on Svix’s own clock', () => {
    const now = T + 30_000;
    const state = known({ history: rotated(T, T + 20_000, T + 15_000), readAt: T + 20_000 });
    // Signed after B was first seen signing: not in the span; a read since it arrived settles it.
    expect(decide(state, delivery([C], now, { signedAt: T + 16_000, arrivedAt: T + 19_000 }), now)).toEqual(
      halt('no-valid-signature'),
    );
    expect(decide(state, delivery([C], now, { signedAt: T + 14_000 }), now)).toEqual({
      kind: 'record',
      charged: false,
    });
  });

  it('a span with no signing time seen after it ends five minutes after the next secret was found', () => {
    const state = known({ history: rotated(T, T + 20_000), readAt: T + 20_000 });
    const at = (signedAt: number) => decide(state, delivery([C], T + 30_000, { signedAt, arrivedAt: 0 }), T + 30_000);
    expect(at(T + 20_000 + RULES.clockAllowanceMs - 1_000)).toEqual({ kind: 'record', charged: false });
    expect(at(T + 20_000 + RULES.clockAllowanceMs + 1_000)).toEqual(halt('no-valid-signature'));
  });

  it('older secrets forgotten: a delivery signed between the endpoint’s making and the oldest kept asks the record', () => {
    const history = { secrets: [{ secret: B, from: T - 60_000, seen: T }] };
    const state = known({ history, madeAt: T - 3_600_000, confirmedAt: T });
    expect(decide(state, delivery([C], T + 1_000, { signedAt: T - 1_800_000 }), T + 1_000)).toEqual({
      kind: 'record',
      charged: false,
    });
  });
});

describe('the allowance', () => {
  it('is a burst of three, then one more every five seconds', () => {
    let allowance = { calls: RULES.burst, at: T };
    for (let call = 0; call < RULES.burst; call += 1) allowance = spend(allowance, T);
    expect(callsLeft(allowance, T)).toBe(0);
    expect(callsLeft(allowance, T + RULES.refillMs)).toBe(1);
    expect(callsLeft(allowance, T + 60 * RULES.refillMs)).toBe(RULES.burst);
  });

  it('a record needs a call in hand and the time for it', () => {
    const now = T + 20_000 + RULES.liveForMs + 1;
    const state = known({ history: rotated(T, T + 20_000) });
    const late = delivery([C], now, { signedAt: T + 10_000, deadline: now + RULES.callMs - 1, looked: true });
    expect(decide(state, late, now)).toEqual(halt('unchecked-signature'));
  });
});

describe('properties', () => {
  /** A history of reads, each showing one of a few secrets, at increasing times, as a process might have made them. */
  const history = fc
    .array(fc.record({ secret: fc.constantFrom(A, B, C, 'whsec_d'), gap: fc.integer({ min: 1, max: 600_000 }) }), {
      maxLength: 8,
    })
    .map((reads) => {
      let at = T;
      let result: SecretHistory = { secrets: [{ secret: A, from: T - 3_600_000, seen: T }] };
      for (const read of reads) {
        at += read.gap;
        result = observeRead(result, read.secret, at);
      }
      return { history: result, lastRead: at };
    });
  const moment = fc.integer({ min: 0, max: 10_000_000 });

  it('a delivery no known or later-read secret signed never yields “run on the body”', () => {
    fc.assert(
      fc.property(
        history,
        moment,
        moment,
        fc.boolean(),
        ({ history: secrets, lastRead }, signedOffset, nowOffset, looked) => {
          const now = T + nowOffset;
          const state = known({ history: secrets, readAt: lastRead, lookedAt: now });
          const signed = delivery(['whsec_never_seen'], now, { signedAt: T + signedOffset, looked });
          expect(decide(state, signed, now).kind).not.toBe('run');
        },
      ),
      { numRuns: 500 },
    );
  });

  /**
   * The endpoint's real secrets: S0 made with it, then immediate rotations at
   * increasing times. This process read the secret at some moments (each read
   * shows the secret current then), and saw deliveries signed with some of
   * them; Svix's clock is off this side's by up to five minutes.
   */
  const world = fc
    .record({
      rotations: fc.array(fc.integer({ min: 1, max: 900_000 }), { minLength: 1, maxLength: 6 }),
      reads: fc.array(fc.integer({ min: 1, max: 900_000 }), { maxLength: 6 }),
      offset: fc.integer({ min: -RULES.clockAllowanceMs + 1_000, max: RULES.clockAllowanceMs - 1_000 }),
      signedAt: fc.integer({ min: 0, max: 6_000_000 }),
      waited: fc.integer({ min: 0, max: 3_600_000 }),
      sawSigning: fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
    })
    .map(({ rotations, reads, ...rest }) => {
      const starts = [T - 3_600_000];
      for (const gap of rotations) starts.push((starts[starts.length - 1] ?? T) + gap);
      const readTimes: number[] = [];
      for (const gap of reads) readTimes.push((readTimes[readTimes.length - 1] ?? T - 3_600_000) + gap);
      return { starts, readTimes, ...rest };
    });
  const secretAt = (starts: number[], at: number): string =>
    `whsec_${starts.filter((start) => start <= at).length - 1}`;

  it('a genuine delivery signed with any secret the endpoint had never ends in a halt while Svix answers', () => {
    fc.assert(
      fc.property(world, ({ starts, readTimes, offset, signedAt, waited, sawSigning }) => {
        const svix = (at: number) => Math.floor((at + offset) / 1000) * 1000;
        let history: SecretHistory = { secrets: [{ secret: 'whsec_0', from: starts[0] ?? T, seen: starts[0] ?? T }] };
        for (const at of readTimes) history = observeRead(history, secretAt(starts, at), at);
        // Deliveries seen signed with a secret tell the first moment it signed, on Svix's clock.
        history = {
          secrets: history.secrets.map((entry, index) =>
            sawSigning[index]
              ? { ...entry, firstSigned: svix(Math.max(entry.from, starts[Number(entry.secret.slice(6))] ?? 0)) }
              : entry,
          ),
        };
        const signedReal = (starts[0] ?? T) + signedAt;
        let now = Math.max(signedReal, ...readTimes) + waited;
        let state = known({
          history,
          madeAt: starts[0] ?? T,
          readAt: Math.max(-Infinity, ...readTimes),
          lookedAt: now,
          allowance: { calls: RULES.burst, at: now },
        });
        let current = delivery([secretAt(starts, signedReal)], now, { signedAt: svix(signedReal) });
        for (let steps = 0; steps < 8; steps += 1) {
          const next = decide(state, current, now);
          expect(next.kind).not.toBe('halt');
          expect(next.kind).not.toBe('error');
          if (next.kind === 'look') current = { ...current, looked: true };
          else if (next.kind === 'read') {
            now = Math.max(now, next.at);
            state = { ...state, readAt: now, history: observeRead(state.history, secretAt(starts, now), now) };
          } else return;
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
