import type { History, Sighting } from '../../src/delivery/history';
import type { Failure } from '../../src/zapier/io';
import { apply } from '../../src/delivery/answers';
import { backoffMs, CALL_MS, decide, leave, newEndpoint, RULES, stay } from '../../src/delivery/machine';
import type { Command, Delivery, Endpoint, Halt, Listed } from '../../src/delivery/machine';
import { encodeKsuidMs } from '../../src/svix/ksuid';
import { listMessages } from '../../src/tools/svix/rules';

/** The machine is pure: every time below is an explicit `now` (ms). The endpoint was made a minute before 0 and its
 * subscribe saw s1 current at 1 s; s0 is a secret it had before, seen well before s1 (further apart than the skew). */
const seen = (secret: string, start: number, by = 'p', end = start): Sighting => ({ secret, start, end, by });
const MADE = -60_000;
const S1 = seen('s1', 1_000, 'subscribe');
const S0 = seen('s0', -10_000, 'q');
let count = 0;
/** A delivery signed with `secrets`, its message made, signed and arrived at `at`, with 30 s to run. */
const delivery = (secrets: string[], at: number, more: Partial<Delivery> = {}): Delivery => {
  const set = new Set(secrets);
  const id = `msg_${(count += 1)}`;
  const base = { id, createdAt: at, signedAt: at, signatures: set.size, arrivedAt: at, deadline: at + 30_000 };
  return { ...base, signedWith: (secret) => set.has(secret), looked: false, steps: 0, ...more };
};
/** An endpoint whose look (at `at`) found `history` shared: sure for 35 s. */
const warm = (at: number, history: History = { current: S1, old: [] }, rules = RULES): Endpoint => {
  const e = newEndpoint(MADE, S1, rules);
  apply(e, { kind: 'looked', start: at, ok: true, value: history }, at);
  return e;
};
/** Decides, answering looks and shares from `cache` (z.cache, one history) until another command comes. */
const synced = (e: Endpoint, d: Delivery, now: number, cache: { value?: History }): Command => {
  for (let step = 0; step < 10; step += 1) {
    const command = decide(e, d, now);
    if (command.kind === 'look') apply(e, { kind: 'looked', start: now, ok: true, value: cache.value }, now);
    else if (command.kind !== 'share') return command;
    else {
      cache.value = command.history;
      apply(e, { kind: 'shared', start: now, history: command.history, stored: true }, now);
    }
  }
  throw new Error('sharing never settled');
};
const read = (e: Endpoint, secret: string, at: number) => apply(e, { kind: 'read', sighting: seen(secret, at) }, at);
/** A read Svix failed for a moment: a 503, or a 429 asking for `retryAfter` ms. */
const transient = (e: Endpoint, retryAfter: number, now: number) => {
  const failure: Failure =
    retryAfter > 0
      ? { kind: 'throttled', message: 'Svix asked to wait.', delaySeconds: retryAfter / 1_000 }
      : { kind: 'error', code: 'ProviderUnavailable', status: 503, message: 'Svix had trouble.' };
  apply(e, { kind: 'read', failure }, now);
};

describe('a warm endpoint', () => {
  it.each([
    ['within 35 s of the look', 2_000 + RULES.lookEveryMs, { kind: 'run' }],
    ['over 35 s after the look: a look first', 2_001 + RULES.lookEveryMs, { kind: 'look' }],
  ])('a delivery signed with the current secret, %s', (_, now, command) => {
    expect(decide(warm(2_000), delivery(['s1'], now), now)).toEqual(command);
  });

  it.each([
    [S1.start + RULES.freshForMs, { kind: 'run' }],
    [S1.start + RULES.freshForMs + 1, { kind: 'read' }],
  ])('signed with the current secret seen at 1 s, at %d ms: %j (a read is free)', (now, c) => {
    const e = warm(now);
    expect(decide(e, delivery(['s1'], now), now)).toEqual(c);
    expect(e.tat.reads).toBe(-Infinity);
  });

  it('decides a verdict instead of a wait once the delivery is out of time', () => {
    const e = warm(2_000);
    expect(decide(e, delivery(['sX'], 3_000), 3_000)).toEqual({ kind: 'read' });
    const other = delivery(['sY'], 3_001, { deadline: 10_000 });
    expect(decide(e, other, 9_999)).toEqual({ kind: 'wait', until: 10_000 });
    expect(decide(e, other, 10_000)).toEqual({ kind: 'error' });
  });

  it.each([
    ['seen in the last 10 minutes: it runs', 2_000, { kind: 'run' }],
    ['seen over 10 minutes ago: an error, not a run', S1.start + RULES.freshForMs + 1, { kind: 'error' }],
  ])('signed with the current secret, out of time while z.cache is busy, %s', (_, at, verdict) => {
    // Its signature matched: a halt would say it did not, and Zapier would drop the event.
    const e = newEndpoint(MADE, S1);
    expect(decide(e, delivery(['s1'], at), at)).toEqual({ kind: 'look' });
    const d = delivery(['s1'], at, { deadline: at + 1_000 });
    expect(decide(e, d, at)).toEqual({ kind: 'wait', until: at + RULES.shareForMs });
    expect(decide(e, d, at + 1_000)).toEqual(verdict);
  });

  it("waits a moment for another delivery's look under way, then reads Svix instead (z.cache may be slow)", () => {
    const e = newEndpoint(MADE, S1);
    expect(decide(e, delivery(['s1'], 2_000), 2_000)).toEqual({ kind: 'look' });
    const d = delivery(['s1'], 2_000);
    expect(decide(e, d, 2_000)).toEqual({ kind: 'wait', until: 2_000 + RULES.shareForMs });
    expect(decide(e, d, 2_000 + RULES.shareForMs)).toEqual({ kind: 'read' });
  });
});

const halted = (why: Halt): Command => ({ kind: 'halt', why });
/** What a delivery decides after the read, when its window's listing waits for the allowance. */
const WAIT: Command = { kind: 'wait', until: 3_050 };

describe('a signature no known secret made', () => {
  /** A delivery signed with sX at 3 s reads the secret, which shows `secret`; what it decides next. */
  const afterRead = (secret: string, more: Partial<Delivery> = {}) => {
    const e = warm(2_000);
    const cache = { value: e.history };
    const d = delivery(['sX'], 3_000, more);
    expect(decide(e, d, 3_000)).toEqual({ kind: 'read' });
    expect(e.tat.reads).toBe(3_000 + RULES.reads.everyMs);
    read(e, secret, 3_000);
    return { e, d, command: synced(e, d, 3_050, cache) };
  };

  it('runs once a read shows the new secret that signed it', () => {
    expect(afterRead('sX').command).toEqual({ kind: 'run' });
  });

  it("else lists its message's 2-second window, after a wait for the listing allowance", () => {
    const { e, d, command } = afterRead('sY');
    expect(command).toEqual({ kind: 'wait', until: 3_050 });
    expect(decide(e, d, 3_050)).toEqual({ kind: 'list', window: 2_000, after: 1_996, before: 4_004 });
  });

  it("reaches one 4 ms slot past the window: every id of the window's times is listed, and nothing further", () => {
    const T = Date.UTC(2026, 0, 5, 9, 0, 0);
    // Signed with a secret the endpoint had: straight to Svix's record.
    const e = warm(T, { current: S1, old: [S0] });
    const d = delivery(['s0'], T + 1_000, { createdAt: T + 500 });
    expect(decide(e, d, T + 1_000)).toEqual({ kind: 'wait', until: T + 1_000 });
    const command = decide(e, d, T + 1_000);
    if (command.kind !== 'list') throw new Error(`expected a listing, got ${command.kind}`);
    // The first id of the window's first 4 ms slot, the last of its last, and the first of the slot after it (the
    // slot reached past it); and, outside, the last id two slots before and the first two slots after.
    const idAt = (ms: number, fill: number) => `msg_${encodeKsuidMs(ms, new Uint8Array(15).fill(fill))}`;
    const inside = [idAt(T, 0), idAt(T + 1_999, 0xff), idAt(T + 2_000, 0)];
    const outside = [idAt(T - 8, 0xff), idAt(T + 2_004, 0)];
    const listed = listMessages([...inside, ...outside], (id) => id, { limit: 250, now: T + 60_000, ...command });
    expect(listed.ok && listed.page.data).toEqual([...inside].reverse());
  });

  it.each<[string, Array<[string, Listed]>, number, Command]>([
    [
      'listed with its payload: Svix confirms it',
      [['ID', { payload: { n: 1 } }]],
      3_050,
      { kind: 'confirmed', event: { n: 1 } },
    ],
    ['not in a complete listing begun after it arrived', [], 3_050, { kind: 'halt', why: 'not-confirmed' }],
    ['listed as no longer kept', [['ID', 'expired']], 3_050, { kind: 'halt', why: 'expired' }],
    ['listed as another event type', [['ID', 'other-type']], 3_050, { kind: 'halt', why: 'not-confirmed' }],
    [
      'not in a listing begun before it arrived: listed again, a second after',
      [],
      2_999,
      { kind: 'wait', until: 2_999 + RULES.togetherMs },
    ],
  ])('%s', (_, messages, start, verdict) => {
    const { e, d } = afterRead('sY');
    decide(e, d, 3_050);
    const page = { messages: messages.map(([id, listed]): [string, Listed] => [id === 'ID' ? d.id : id, listed]) };
    apply(e, { kind: 'listed', window: 2_000, start, page }, 3_100);
    expect(decide(e, d, 3_100)).toEqual(verdict);
  });

  it.each<[string, number, Command]>([
    ["over 5 minutes before the endpoint's: a halt", MADE - RULES.clockStepMs - 1, halted('before-endpoint')],
    ["within 5 minutes before the endpoint's (Svix's clock may step back): the record", MADE - RULES.clockStepMs, WAIT],
  ])('after the read, a message whose time is %s', (_, createdAt, command) => {
    expect(afterRead('sY', { createdAt }).command).toEqual(command);
  });

  it('halts at once, before any call, for an id Svix does not make', () => {
    const d = delivery(['sX'], 3_000, { createdAt: undefined });
    expect(decide(newEndpoint(MADE, S1), d, 3_000)).toEqual({ kind: 'halt', why: 'not-a-svix-id' });
  });
});

describe('the reads allowance (GCRA)', () => {
  const T = 3_000;
  /** An endpoint with an old secret s0, whose burst of reads deliveries signed with unknown secrets used up (each
   * arriving after the last read began: none shares another's). */
  const exhausted = () => {
    const e = warm(2_000, { current: S1, old: [S0] }, { ...RULES, togetherMs: 0 });
    const cache = { value: e.history };
    for (let k = 0; k < RULES.reads.burst; k += 1) {
      expect(synced(e, delivery([`x${k}`], T + k), T + k, cache)).toEqual({ kind: 'read' });
      read(e, 's1', T + k);
    }
    return { e, cache, now: T + RULES.reads.burst };
  };

  it('reads a burst at once, then one every 2 s', () => {
    const { e, cache, now } = exhausted();
    expect(synced(e, delivery(['x'], now), now, cache)).toEqual({ kind: 'wait', until: T + RULES.reads.everyMs });
    expect(e.tat.reads).toBe(T + (RULES.reads.burst + 1) * RULES.reads.everyMs);
  });

  it('reads at once, free, for a delivery also signed with an old secret', () => {
    const { e, cache, now } = exhausted();
    const tat = e.tat.reads;
    expect(synced(e, delivery(['s0', 'x'], now), now, cache)).toEqual({ kind: 'read' });
    expect(e.tat.reads).toBe(tat);
  });

  describe('a free call given up is made by junk only at its allowance, and paid for', () => {
    /** Svix failed, asking for 4 s; a delivery also signed with s0 schedules a free call for after that; a look
     * then shows sX current (seen later than s1 by more than the skew): that delivery runs and gives the call up. */
    const PAUSE = 4_000;
    const givenUp = (arrivedAt: number) => {
      const { e, cache, now } = exhausted();
      transient(e, PAUSE, now);
      const free = delivery(['s0', 'sX'], arrivedAt);
      expect(synced(e, free, now, cache)).toEqual({ kind: 'wait', until: now + PAUSE });
      cache.value = { current: seen('sX', now + 2_500, 'q'), old: [e.history.current, ...e.history.old] };
      apply(e, { kind: 'looked', start: now + 2_600, ok: true, value: cache.value }, now + 2_600);
      expect(decide(e, free, now + 2_600)).toEqual({ kind: 'run' });
      return { e, cache, at: now + PAUSE, now: now + 2_700 };
    };

    it('a read', () => {
      const { e, cache, at, now } = givenUp(T + 10);
      expect(e.read).toMatchObject({ at, paid: false });
      const tat = e.tat.reads;
      expect(synced(e, delivery(['sY'], now), now, cache)).toEqual({ kind: 'wait', until: at });
      expect(e.read).toMatchObject({ at, paid: true });
      expect(e.tat.reads).toBe(tat + RULES.reads.everyMs);
    });

    it('a listing', () => {
      // Arrived before the last read: settled by it, so its call is a listing of its window.
      const { e, cache, at, now } = givenUp(T);
      expect(e.windows.get(2_000)).toMatchObject({ at, paid: false });
      expect(e.tat.listings).toBe(-Infinity);
      expect(synced(e, delivery(['sY'], T), now, cache)).toEqual({ kind: 'wait', until: at });
      expect(e.windows.get(2_000)).toMatchObject({ at, paid: true });
      expect(e.tat.listings).toBe(at + RULES.listings.everyMs);
    });
  });
});

describe("Svix's failures", () => {
  it.each<[number, Command]>([
    [404, { kind: 'halt', why: 'gone' }],
    [403, { kind: 'refused', call: 'read', failure: { kind: 'error', code: 'X', status: 403, message: 'No.' } }],
  ])(
    'a read Svix refuses with %d: gone (an edit removed the endpoint) halts, anything else is its failure',
    (status, verdict) => {
      const e = warm(2_000);
      const d = delivery(['sX'], 3_000);
      expect(decide(e, d, 3_000)).toEqual({ kind: 'read' });
      apply(e, { kind: 'read', failure: { kind: 'error', code: 'X', status, message: 'No.' } }, 3_100);
      expect(decide(e, d, 3_100)).toEqual(verdict);
    },
  );

  it.each([
    [0, 3_100 + backoffMs(1)],
    [1_000, 4_100],
  ])('a read failing with retryAfter %d ms is made again at %d', (retryAfter, at) => {
    const e = warm(2_000);
    const d = delivery(['sX'], 3_000);
    expect(decide(e, d, 3_000)).toEqual({ kind: 'read' });
    transient(e, retryAfter, 3_100);
    expect(decide(e, d, 3_100)).toEqual({ kind: 'wait', until: at });
    expect(decide(e, d, at)).toEqual({ kind: 'read' });
  });

  it.each<[string, boolean, number, Command]>([
    ['Svix failing, a call in time', true, 4_100 + CALL_MS, { kind: 'wait', until: 4_100 }],
    ['Svix failing, no call in time: an error', true, 4_099 + CALL_MS, { kind: 'error' }],
    ['Svix answering, a call in time', false, 3_100 + CALL_MS, { kind: 'read' }],
    [
      'Svix answering, no call in time: an error naming the message (it may be genuine)',
      false,
      3_099 + CALL_MS,
      { kind: 'error' },
    ],
  ])('%s', (_, failing, deadline, verdict) => {
    const e = warm(2_000);
    if (failing) expect(decide(e, delivery(['sX'], 3_000), 3_000)).toEqual({ kind: 'read' });
    if (failing) transient(e, 1_000, 3_100);
    expect(decide(e, delivery(['sY'], 3_100, { deadline }), 3_100)).toEqual(verdict);
  });

  it('signed with a current secret seen over 10 minutes ago, no read in time while Svix fails: an error, not a run', () => {
    // A stolen secret, replaced while the Zap was quiet, does not run because Svix fails (quiet-stolen-secret seed 86).
    const at = S1.start + RULES.freshForMs + 1;
    const e = warm(at);
    expect(decide(e, delivery(['s1'], at), at)).toEqual({ kind: 'read' });
    // Svix hung twice in that seed: failing twice is no reason to run either.
    transient(e, 0, at + 100);
    transient(e, 0, at + 200);
    const late = delivery(['s1'], at + 200, { deadline: at + 200 + CALL_MS });
    expect(decide(e, late, at + 200)).toEqual({ kind: 'error' });
  });

  it('signed with a current secret seen over 10 minutes ago, no read in time while Svix answers: an error too', () => {
    // Its signature matched: a halt would say it did not, and give no way to send it again.
    const at = S1.start + RULES.freshForMs + 1;
    const e = warm(at);
    expect(decide(e, delivery(['s1'], at, { deadline: at + CALL_MS - 1 }), at)).toEqual({ kind: 'error' });
    expect(decide(e, delivery(['s1'], at, { deadline: at + CALL_MS }), at)).toEqual({ kind: 'read' });
  });

  it('backs off from 50 ms, doubling, to at most 2 s', () => {
    expect([-1, 0, 1, 2, 3, 6, 7, 20].map(backoffMs)).toEqual([0, 0, 50, 100, 200, 1_600, 2_000, 2_000]);
  });
});

describe('sharing the history through z.cache', () => {
  it('shares where none is, and where another got there first looks before writing, backing off if empty', () => {
    const e = newEndpoint(MADE, S1);
    const d = delivery(['s1'], 2_000);
    expect(decide(e, d, 2_000)).toEqual({ kind: 'look' });
    apply(e, { kind: 'looked', start: 2_000, ok: true }, 2_010);
    expect(decide(e, d, 2_010)).toEqual({ kind: 'share', history: { current: S1, old: [] }, onlyIfAbsent: true });
    apply(e, { kind: 'shared', start: 2_010, history: { current: S1, old: [] }, stored: false }, 2_020);
    expect(decide(e, d, 2_020)).toEqual({ kind: 'look' });
    apply(e, { kind: 'looked', start: 2_020, ok: true }, 2_030);
    expect(decide(e, d, 2_030)).toEqual({ kind: 'wait', until: 2_030 + backoffMs(1) });
  });

  it('writes the merged history over one found lacking it; once stored, the endpoint is sure', () => {
    const e = newEndpoint(MADE, S1);
    const d = delivery(['s1'], 2_000);
    expect(decide(e, d, 2_000)).toEqual({ kind: 'look' });
    apply(e, { kind: 'looked', start: 2_000, ok: true, value: { current: S0, old: [] } }, 2_010);
    const history = { current: S1, old: [S0] };
    expect(decide(e, d, 2_010)).toEqual({ kind: 'share', history, onlyIfAbsent: false });
    expect(decide(e, delivery(['s1'], 2_010), 2_010)).toEqual({ kind: 'wait', until: 2_010 + RULES.shareForMs });
    apply(e, { kind: 'shared', start: 2_010, history, stored: true }, 2_020);
    expect(decide(e, delivery(['s1'], 2_020), 2_020)).toEqual({ kind: 'run' });
  });
});

describe('two quick rotations answered out of order leave the replaced secret current for 10 minutes', () => {
  it('reads after the two sightings settle, and the replaced secret then no longer runs on its body', () => {
    // Process A saw s3 (the newest) at 10 s, process B then s2 (the one it replaced) on a clock 500 ms ahead.
    const shared = { current: seen('s2', 10_500, 'B', 10_600), old: [seen('s3', 10_000, 'A', 10_100), S1] };
    const e = warm(12_000, shared);
    const d = delivery(['s2'], 12_000);
    expect(decide(e, d, 12_000)).toEqual({ kind: 'wait', until: 10_600 + RULES.skewMs });
    expect(decide(e, d, 12_650)).toEqual({ kind: 'read' });
    read(e, 's3', 12_650);
    const cache = { value: shared };
    const replaced = delivery(['s2'], 12_800);
    expect(synced(e, replaced, 12_800, cache)).toEqual({ kind: 'wait', until: 12_800 });
    expect(e.windows.get(12_000)?.owner).toBe(replaced);
    expect(decide(e, delivery(['s3'], 12_800), 12_800)).toEqual({ kind: 'run' });
    expect(cache.value.current.secret).toBe('s3');
  });

  it('out of time before a read settles them, one signed with the secret seen current ends in an error: it may be the replaced one', () => {
    const shared = { current: seen('s2', 10_500, 'B', 10_600), old: [seen('s3', 10_000, 'A', 10_100), S1] };
    const d = delivery(['s2'], 12_000, { deadline: 12_000 + CALL_MS - 1 });
    expect(decide(warm(12_000, shared), d, 12_000)).toEqual({ kind: 'error' });
  });
});

/** A read its owner scheduled for 3.15 s (after a failed one), and another delivery waiting on it. */
const readAwaited = () => {
  const e = warm(2_000);
  const owner = delivery(['sX'], 3_000);
  expect(decide(e, owner, 3_000)).toEqual({ kind: 'read' });
  transient(e, 0, 3_100);
  expect(decide(e, owner, 3_100)).toEqual({ kind: 'wait', until: 3_150 });
  const other = delivery(['sY'], 3_100);
  expect(decide(e, other, 3_100)).toEqual({ kind: 'wait', until: other.deadline });
  return { e, owner, other };
};

describe('leave', () => {
  it('drops a read its delivery scheduled and did not make: another schedules its own', () => {
    const { e, owner, other } = readAwaited();
    leave(e, other);
    expect(e.read?.owner).toBe(owner);
    leave(e, owner);
    expect(decide(e, other, 3_100)).toEqual({ kind: 'wait', until: 3_150 });
    expect(e.read?.owner).toBe(other);
    expect(decide(e, other, 3_150)).toEqual({ kind: 'read' });
  });

  it('drops a listing its delivery scheduled and did not make, or was making when it ended', () => {
    const e = warm(2_000, { current: S1, old: [S0] });
    transient(e, 0, 3_000);
    const d = delivery(['s0'], 3_000);
    expect(decide(e, d, 3_000)).toEqual({ kind: 'wait', until: 3_000 + backoffMs(1) });
    leave(e, d);
    expect(e.windows.size).toBe(0);
    expect(decide(e, d, 3_100)).toEqual({ kind: 'wait', until: 3_100 });
    expect(decide(e, d, 3_100)).toMatchObject({ kind: 'list', window: 2_000 });
    leave(e, d);
    expect(e.windows.get(2_000)).toBeUndefined();
  });
});

describe('deliveries under way together', () => {
  it('take on, without paying again, a listing one of them paid for and no longer needs; the last drops what is left', () => {
    const e = warm(2_000);
    const cache = { value: e.history };
    read(e, 's1', 3_000);
    transient(e, 4_000, 3_100);
    const [a, b] = [delivery(['sX'], 3_000), delivery(['sY'], 3_000)];
    stay(e);
    stay(e);
    // a pays for its window's listing, due after Svix's back-off; b waits for it.
    expect(synced(e, a, 3_100, cache)).toEqual({ kind: 'wait', until: 7_100 });
    const paid = e.tat.listings;
    expect(decide(e, b, 3_100)).toEqual({ kind: 'wait', until: b.deadline });
    // Another process's history shows sX current: a runs, and leaves its listing to b.
    const shared = { current: seen('sX', 5_500, 'q'), old: [seen('s1', 3_000)] };
    apply(e, { kind: 'looked', start: 3_200, ok: true, value: shared }, 3_200);
    expect(decide(e, a, 3_200)).toEqual({ kind: 'run' });
    leave(e, a);
    expect(decide(e, b, 3_200)).toEqual({ kind: 'wait', until: 7_100 });
    expect(e.tat.listings).toBe(paid);
    leave(e, b);
    expect(e.windows.size).toBe(0);
  });
});

describe('a call its delivery no longer needs', () => {
  it('is given up at its next decision, and a delivery waiting on it takes it on at its time', () => {
    const { e, owner, other } = readAwaited();
    // Another process's history, looked at now, shows sX current: the owner runs, and leaves the read to others.
    const shared = { current: seen('sX', 3_050, 'q'), old: [S1] };
    apply(e, { kind: 'looked', start: 3_120, ok: true, value: shared }, 3_120);
    expect(decide(e, owner, 3_130)).toEqual({ kind: 'run' });
    expect(e.read?.owner).toBeUndefined();
    expect(decide(e, other, 3_150)).toEqual({ kind: 'read' });
    expect(e.read?.owner).toBe(other);
  });
});

describe('breaks a review found on 8c1b55a', () => {
  it('1. the delivery that read a new current secret shares it before it ends, however long z.cache backs off', () => {
    const e = warm(2_000);
    const d = delivery(['s2'], 3_000);
    expect(decide(e, d, 3_000)).toEqual({ kind: 'read' });
    apply(e, { kind: 'read', sighting: seen('s2', 3_000) }, 3_100, d);
    // Its looks fail eight times, each after the back-off: by then the back-off (2 s) outlasts the 1.5 s the
    // other deliveries wait for the sharing.
    let now = 3_100;
    for (let failures = 1; failures <= 8; failures += 1) {
      expect(decide(e, d, now)).toEqual({ kind: 'look' });
      apply(e, { kind: 'looked', start: now, ok: false }, now, d);
      if (failures < 8) now += backoffMs(failures);
    }
    const at = now + backoffMs(8);
    expect(now).toBeGreaterThan(e.shareUntil);
    // Another delivery goes on; the one that read waits out the back-off, then shares before its verdict.
    expect(decide(e, delivery(['s2'], now + 1), now + 1)).toEqual({ kind: 'run' });
    expect(decide(e, d, now + 1)).toEqual({ kind: 'wait', until: at });
    expect(decide(e, d, at)).toEqual({ kind: 'look' });
    apply(e, { kind: 'looked', start: at, ok: true, value: { current: S1, old: [] } }, at, d);
    const share = decide(e, d, at);
    if (share.kind !== 'share') throw new Error('a write was expected');
    expect(share).toMatchObject({ onlyIfAbsent: false, history: { current: { secret: 's2' } } });
    apply(e, { kind: 'shared', start: at, history: share.history, stored: true }, at, d);
    expect(decide(e, d, at)).toEqual({ kind: 'run' });
  });

  it('1. out of time before it could share, it still gets its verdict', () => {
    const e = warm(2_000);
    const d = delivery(['s2'], 3_000, { deadline: 7_000 });
    expect(decide(e, d, 3_000)).toEqual({ kind: 'read' });
    apply(e, { kind: 'read', sighting: seen('s2', 3_000) }, 3_100, d);
    expect(decide(e, d, 3_100)).toEqual({ kind: 'look' });
    apply(e, { kind: 'looked', start: 3_100, ok: false }, 3_100, d);
    expect(decide(e, d, 7_000)).toEqual({ kind: 'run' });
  });

  it.each([
    ['signed 295 s ahead', 295_000],
    ['signed 240 s behind', -240_000],
  ])('2 and 8. a complete listing begun before a delivery arrived never refutes it (%s): listed again', (_, ahead) => {
    const e = warm(2_000, { current: S1, old: [S0] });
    // A listing of the window 2–4 s began at 5 s, three seconds after its messages' times, and found nothing. A
    // delivery signed with the old secret arrived after it began: its message, made at 2.5 s, may have committed
    // later than 5 s (Svix's commits have no bound), so only a listing begun after it arrived can refute it.
    const earlier = delivery(['s0'], 5_000, { createdAt: 2_500 });
    expect(decide(e, earlier, 5_000)).toEqual({ kind: 'wait', until: 5_000 });
    expect(decide(e, earlier, 5_000)).toEqual({ kind: 'list', window: 2_000, after: 1_996, before: 4_004 });
    apply(e, { kind: 'listed', window: 2_000, start: 5_000, page: { messages: [] } }, 5_100, earlier);
    const late = delivery(['s0'], 5_050, { createdAt: 2_500, signedAt: 5_000 + ahead });
    expect(decide(e, late, 5_100)).toEqual({ kind: 'wait', until: 5_000 + RULES.togetherMs });
    expect(decide(e, earlier, 5_100)).toEqual({ kind: 'halt', why: 'not-confirmed' });
  });

  it('6. a window its delivery scheduled, then no longer needed, goes when it leaves: none without a page is kept', () => {
    const e = warm(2_000);
    const cache = { value: e.history };
    const d = delivery(['sX'], 3_000);
    // A read at 3 s showed s1, so its window is to be listed; Svix failed, asking for 4 s.
    read(e, 's1', 3_000);
    transient(e, 4_000, 3_100);
    expect(synced(e, d, 3_100, cache)).toEqual({ kind: 'wait', until: 7_100 });
    expect(e.windows.size).toBe(1);
    // Another process's history, looked at now, shows sX current: the delivery runs, and leaves.
    const shared = { current: seen('sX', 5_500, 'q'), old: [seen('s1', 3_000)] };
    apply(e, { kind: 'looked', start: 3_200, ok: true, value: shared }, 3_200);
    expect(decide(e, d, 3_200)).toEqual({ kind: 'run' });
    leave(e, d);
    expect(e.windows.size).toBe(0);
  });

  it('7. a write that stored an older history than the process knows now leaves the newer to share', () => {
    const e = newEndpoint(MADE, S1);
    const d = delivery(['s1'], 2_000);
    expect(decide(e, d, 2_000)).toEqual({ kind: 'look' });
    apply(e, { kind: 'looked', start: 2_000, ok: true, value: { current: S0, old: [] } }, 2_010);
    const write = decide(e, d, 2_010);
    if (write.kind !== 'share') throw new Error('a write was expected');
    // While the write of s1 is under way, a read teaches s3.
    apply(e, { kind: 'read', sighting: seen('s3', 2_020) }, 2_030);
    apply(e, { kind: 'shared', start: 2_010, history: write.history, stored: true }, 2_040);
    expect(e.cache.next).toBe('look');
    expect(decide(e, delivery(['s3'], 2_050), 2_050)).toEqual({ kind: 'look' });
  });

  it('keeps no decision loop going past its step limit', () => {
    const e = warm(2_000);
    const d = delivery(['sX'], 3_000, { steps: RULES.maxSteps });
    expect(decide(e, d, 3_000)).toEqual({ kind: 'error' });
  });
});

describe('breaks found on 962d0e2 (#51)', () => {
  /** An endpoint whose record confirmed a delivery signed with sN, a secret not known here (s1 was replaced at once,
   * as a stolen secret is), with the reads allowance spent by junk or not. */
  const confirmedUnknown = (readsSpent: boolean) => {
    const e = warm(2_000);
    if (readsSpent) e.tat.reads = 200_000;
    const cache = { value: e.history };
    const genuine = delivery(['sN'], 3_000);
    if (!readsSpent) e.readAt = 2_500; // a read just before it arrived settles it: straight to the record
    expect(synced(e, genuine, 3_000, cache)).toEqual({ kind: 'wait', until: 3_000 });
    expect(decide(e, genuine, 3_000)).toEqual({ kind: 'list', window: 2_000, after: 1_996, before: 4_004 });
    const confirmed: [string, Listed] = [genuine.id, { payload: { n: 1 } }];
    apply(e, { kind: 'listed', window: 2_000, start: 3_000, page: { messages: [confirmed] } }, 3_100);
    return { e, cache, genuine };
  };

  it('2. once the record confirms a delivery no known secret signed, a body signed with the current secret alone does not run', () => {
    // 962d0e2 ran the forgery below: junk had spent the reads allowance, so nothing read the new secret.
    const { e, cache, genuine } = confirmedUnknown(true);
    expect(decide(e, genuine, 3_100)).toEqual({ kind: 'confirmed', event: { n: 1 } });
    const forgery = delivery(['s1'], 3_150, { createdAt: 3_150 });
    expect(synced(e, forgery, 3_150, cache)).toEqual({ kind: 'wait', until: 4_000 });
    expect(decide(e, forgery, 4_000)).toEqual({ kind: 'list', window: 2_000, after: 1_996, before: 4_004 });
    apply(e, { kind: 'listed', window: 2_000, start: 4_000, page: { messages: [] } }, 4_150);
    expect(decide(e, forgery, 4_150)).toEqual({ kind: 'halt', why: 'not-confirmed' });
  });

  it('2. the confirmed delivery reads the secret before it ends, from the allowance; then the new secret runs as usual', () => {
    const { e, cache, genuine } = confirmedUnknown(false);
    expect(decide(e, genuine, 3_100)).toEqual({ kind: 'read' });
    expect(e.tat.reads).toBe(3_100 + RULES.reads.everyMs);
    const forgery = delivery(['s1'], 3_150);
    expect(decide(e, forgery, 3_150)).toEqual({ kind: 'wait', until: forgery.deadline });
    apply(e, { kind: 'read', sighting: seen('sN', 3_100) }, 3_150, genuine);
    expect(synced(e, genuine, 3_200, cache)).toEqual({ kind: 'confirmed', event: { n: 1 } });
    expect(cache.value.current.secret).toBe('sN');
    expect(synced(e, forgery, 3_200, cache)).not.toEqual({ kind: 'run' });
    expect(decide(e, delivery(['sN'], 3_300), 3_300)).toEqual({ kind: 'run' });
  });

  it('2. out of time for that read, a body signed with the secret in doubt ends in an error, never a run', () => {
    const e = warm(2_000);
    e.doubtAt = 2_500;
    const d = delivery(['s1'], 3_000, { deadline: 3_000 + CALL_MS - 1 });
    expect(decide(e, d, 3_000)).toEqual({ kind: 'error' });
  });

  it('4. junk holding the listings allowance: a genuine delivery reads the secret instead of halting at once', () => {
    // seed 7407 of junk-100 with junkSpreadSeconds=600: a read begun 0.5 s before it arrived (before its secret was
    // made) settled it, the record was out of reach, and 962d0e2 halted it on arrival with 25 s to go.
    const e = warm(2_000);
    e.tat.listings = 200_000;
    read(e, 's1', 2_500);
    const d = delivery(['sN'], 3_000);
    expect(synced(e, d, 3_000, { value: e.history })).toEqual({ kind: 'read' });
    read(e, 'sN', 3_000);
    expect(synced(e, d, 3_100, { value: e.history })).toEqual({ kind: 'run' });
  });

  it('a write answered false, then a look that finds nothing, writes again as new: the false was a throttle', () => {
    // edits-wide seeds 208 and 571 with throttled sets answering false: 962d0e2 looked again and again, never wrote,
    // and another process ran a replaced secret 153 s after this one read the new one.
    const e = newEndpoint(MADE, S1);
    const d = delivery(['s1'], 2_000);
    expect(decide(e, d, 2_000)).toEqual({ kind: 'look' });
    apply(e, { kind: 'looked', start: 2_000, ok: true }, 2_010);
    const share = { kind: 'share', history: { current: S1, old: [] }, onlyIfAbsent: true };
    expect(decide(e, d, 2_010)).toEqual(share);
    apply(e, { kind: 'shared', start: 2_010, history: { current: S1, old: [] }, stored: false }, 2_020);
    expect(decide(e, d, 2_020)).toEqual({ kind: 'look' });
    apply(e, { kind: 'looked', start: 2_020, ok: true }, 2_030);
    expect(decide(e, d, 2_030 + backoffMs(1))).toEqual(share);
    // Answered false and found empty again: looked at again this time, so that a cache throttling every other call
    // cannot keep its look on the throttled ones for ever (history-faults seed 7).
    const at = 2_030 + backoffMs(1);
    apply(e, { kind: 'shared', start: at, history: { current: S1, old: [] }, stored: false }, at + 10);
    expect(decide(e, d, at + 10)).toEqual({ kind: 'look' });
    apply(e, { kind: 'looked', start: at + 10, ok: true }, at + 20);
    expect(decide(e, d, at + 20 + backoffMs(2))).toEqual({ kind: 'look' });
  });

  it('junk retrying a failed listing long after its time pays for it: the allowance excuses a retry at its time only', () => {
    // junk-recent-windows seed 387: a listing Svix failed at 78 s, left by its delivery, made free by junk at 93 s.
    const e = warm(2_000, { current: S1, old: [S0] });
    const first = delivery(['sX'], 3_000, { createdAt: 2_500 });
    e.readAt = 2_900; // a read just before it arrived settles it: straight to the record
    expect(decide(e, first, 3_000)).toEqual({ kind: 'wait', until: 3_000 });
    expect(decide(e, first, 3_000)).toEqual({ kind: 'list', window: 2_000, after: 1_996, before: 4_004 });
    const failure: Failure = { kind: 'error', code: 'ProviderUnavailable', status: 503, message: 'Svix had trouble.' };
    apply(e, { kind: 'listed', window: 2_000, failure }, 3_100);
    // Another delivery is still under way, so the window stays when its own leaves.
    stay(e);
    stay(e);
    leave(e, first);
    expect(e.windows.get(2_000)?.failed).toBe(true);
    const tat = e.tat.listings;
    // Within its time, the retry is free; fifteen seconds later, it is paid again.
    const late = delivery(['sY'], 18_000, { createdAt: 2_600 });
    e.readAt = 17_900;
    expect(decide(e, late, 18_000)).toEqual({ kind: 'wait', until: 18_000 });
    expect(e.tat.listings).toBe(Math.max(18_000, tat) + RULES.listings.everyMs);
  });
});

describe('breaks the sweep of 000ae2f found (#51)', () => {
  it('a body signed with the current secret waits for a read when any older sighting is within the skew, not only the latest', () => {
    // everything-fast seed 289: process A, ahead, read s2 then s3; process B, behind, read s4, the newest, which its
    // clock filed below both. Judged by s2 alone (A's own earlier read), s3 passed as sure, and a body it signed ran.
    const shared = {
      current: seen('s3', 10_500, 'A', 10_600),
      old: [seen('s2', 10_300, 'A', 10_400), seen('s4', 10_000, 'B', 10_100), S1],
    };
    const e = warm(12_000, shared);
    expect(decide(e, delivery(['s3'], 12_000), 12_000)).toEqual({ kind: 'wait', until: 10_600 + RULES.skewMs });
    // One signed with s4 waits on that read too.
    const newest = delivery(['s4'], 12_000);
    expect(decide(e, newest, 12_000)).toEqual({ kind: 'wait', until: newest.deadline });
    expect(e.read?.at).toBe(10_600 + RULES.skewMs);
  });

  /** Junk whose window's listing was scheduled at 3 s, its delivery gone and another still under way. */
  const leftListing = (answer?: Failure) => {
    const e = warm(2_000, { current: S1, old: [S0] });
    const first = delivery(['sX'], 3_000, { createdAt: 2_500 });
    e.readAt = 2_900; // a read just before it arrived settles it: straight to the record
    expect(decide(e, first, 3_000)).toEqual({ kind: 'wait', until: 3_000 });
    if (answer) {
      expect(decide(e, first, 3_000)).toMatchObject({ kind: 'list', window: 2_000 });
      apply(e, { kind: 'listed', window: 2_000, failure: answer }, 3_100);
    }
    stay(e);
    stay(e);
    leave(e, first);
    return e;
  };

  it('junk taking on a listing paid for over a second ago pays for it again: a flood cannot save paid calls for later', () => {
    // junk-recent-windows seed 545, as it could also have gone: listings paid for and left, then made at once.
    const e = leftListing();
    expect(e.windows.get(2_000)).toMatchObject({ paid: true, at: 3_000 });
    const late = delivery(['sY'], 5_000, { createdAt: 2_600 });
    e.readAt = 4_900;
    expect(decide(e, late, 5_000)).toEqual({ kind: 'wait', until: 5_000 });
    expect(e.tat.listings).toBe(5_000 + RULES.listings.everyMs);
  });

  it("junk paying for a failed listing's window long after its retry's time makes no later retry free", () => {
    // junk-recent-windows seed 545: the window kept its failure once paid for again at 97 s, so at its next decision
    // the retry's time looked ahead, and the listing was made at once, free: one past the allowance.
    const failure: Failure = { kind: 'error', code: 'ProviderUnavailable', status: 503, message: 'Svix had trouble.' };
    const e = leftListing(failure);
    e.tat.listings = 30_000; // junk has booked the allowance until 22 s
    const late = delivery(['sY'], 18_000, { createdAt: 2_600 });
    e.readAt = 17_900;
    expect(decide(e, late, 18_000)).toEqual({ kind: 'wait', until: 22_000 });
    expect(decide(e, late, 18_100)).toEqual({ kind: 'wait', until: 22_000 });
    expect(e.windows.get(2_000)).toMatchObject({ paid: true, at: 22_000, failed: false });
  });
});
