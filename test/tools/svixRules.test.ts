import { encodeKsuidMs } from '../../src/svix/ksuid';
import {
  afterRetriesUsedUp,
  checkListLimit,
  DISABLE_AFTER_MS,
  GRACE_SECONDS,
  isGraceSeconds,
  isThrottleRate,
  keysSigningAt,
  LIST_LIMIT,
  listById,
  listMessages,
  MAX_OLD_KEYS,
  OVERLOAD_PENALTY_MS,
  retryAfterMs,
  retryDelayMs,
  rotateKeys,
  type ExpiringKey,
  type Listed,
} from '../../src/tools/svix/rules';

/**
 * The rules both models of Svix share (src/tools/svix/rules.ts), each against the server file that states it, in
 * Svix's published server (svix-webhooks, server/svix-server).
 */

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const DAY = 24 * 60 * 60 * 1000;

/** A message id made at `ms`, with its random part all `fill` (0: the first id of its 4 ms slot). */
const idAt = (ms: number, fill = 7): string => `msg_${encodeKsuidMs(ms, new Uint8Array(15).fill(fill))}`;

const ids = <T>(listed: Listed<T>, idOf: (item: T) => string): string[] => {
  if (!listed.ok) throw new Error(`refused: ${listed.refusal.msg}`);
  return listed.page.data.map(idOf);
};
const same = (id: string): string => id;

describe('message listings (v1/utils/mod.rs, filter_and_paginate_time_limited and list_response_inner)', () => {
  // One message a second, from T0 to T0 + 5 s.
  const sent = Array.from({ length: 6 }, (_, second) => idAt(T0 + second * 1000));
  const now = T0 + 60_000;

  it('lists newest first with no bounds, and pages on with the id of the last one', () => {
    const first = listMessages(sent, same, { limit: 4, now });
    expect(ids(first, same)).toEqual([sent[5], sent[4], sent[3], sent[2]]);
    expect(first.ok && first.page).toMatchObject({ done: false, iterator: sent[2], prevIterator: `-${sent[5]}` });
    const rest = listMessages(sent, same, { limit: 4, now, iterator: sent[2] });
    expect(ids(rest, same)).toEqual([sent[1], sent[0]]);
    expect(rest.ok && rest.page.done).toBe(true);
  });

  it('bounds on the id at 4 ms: after keeps its own slot, before leaves out its own', () => {
    // Both at T0 + 1 s: `after` keeps the message made then, `before` does not.
    expect(ids(listMessages(sent, same, { limit: 50, now, after: T0 + 1000 }), same)).toHaveLength(5);
    expect(ids(listMessages(sent, same, { limit: 50, now, before: T0 + 1000 }), same)).toEqual([sent[0]]);
    // The first id of a slot is not above `after` (greater, not equal), so a message with that very id is left out.
    const onTheEdge = idAt(T0 + 1000, 0);
    expect(ids(listMessages([onTheEdge], same, { limit: 50, now, after: T0 + 1000 }), same)).toEqual([]);
    // Within a 4 ms slot, after keeps it all; 4 ms later, the slot is out.
    expect(ids(listMessages(sent, same, { limit: 50, now, after: T0 + 1003 }), same)).toHaveLength(5);
    expect(ids(listMessages(sent, same, { limit: 50, now, after: T0 + 1004 }), same)).toHaveLength(4);
  });

  it('with both bounds: newest first; with after alone: the oldest after it, each page printed newest first', () => {
    const both = listMessages(sent, same, { limit: 2, now, after: T0 + 1500, before: T0 + 5000 });
    expect(ids(both, same)).toEqual([sent[4], sent[3]]);
    const afterOnly = listMessages(sent, same, { limit: 2, now, after: T0 + 1500 });
    expect(ids(afterOnly, same)).toEqual([sent[3], sent[2]]);
    // Its prevIterator leads on to newer messages.
    if (!afterOnly.ok) throw new Error('refused');
    const newer = listMessages(sent, same, { limit: 2, now, iterator: afterOnly.page.prevIterator ?? '' });
    expect(ids(newer, same)).toEqual([sent[5], sent[4]]);
  });

  it('takes an iterator that names no message (an id cursor), but refuses one of another kind (422)', () => {
    const between = idAt(T0 + 2500);
    expect(ids(listMessages(sent, same, { limit: 50, now, iterator: between }), same)).toEqual([
      sent[2],
      sent[1],
      sent[0],
    ]);
    const refused = listMessages(sent, same, { limit: 50, now, iterator: 'ep_2pSandboxLocalConsumerApp01' });
    expect(refused).toEqual({ ok: false, refusal: expect.objectContaining({ loc: ['query', 'iterator'] }) });
  });

  it('with no bounds, lists the last 90 days only; a bound reaches 90 days from it', () => {
    const old = [idAt(now - 91 * DAY), idAt(now - 89 * DAY), idAt(now - 5 * DAY)];
    expect(ids(listMessages(old, same, { limit: 50, now }), same)).toEqual([old[2], old[1]]);
    expect(ids(listMessages(old, same, { limit: 50, now, before: now - 60 * DAY }), same)).toEqual([old[1], old[0]]);
    expect(ids(listMessages(old, same, { limit: 50, now, after: now - 100 * DAY }), same)).toEqual([old[1], old[0]]);
  });

  it('never lists an id more than an hour ahead of its clock', () => {
    const ahead = [idAt(now + 30 * 60_000), idAt(now + 2 * 60 * 60_000)];
    expect(ids(listMessages(ahead, same, { limit: 50, now }), same)).toEqual([ahead[0]]);
  });

  it('refuses a limit over 250 (422), and takes 250', () => {
    expect(checkListLimit(LIST_LIMIT.max)).toBeUndefined();
    expect(checkListLimit(251)).toEqual(expect.objectContaining({ loc: ['query', 'limit'] }));
    expect(listMessages(sent, same, { limit: 251, now }).ok).toBe(false);
  });
});

describe('listings by id (v1/utils/mod.rs, apply_pagination)', () => {
  const made = [0, 1, 2].map((second) => `ep_${encodeKsuidMs(T0 + second * 1000, new Uint8Array(15))}`);

  it('orders by id either way, from an iterator that need not exist, and walks back with -id', () => {
    const query = { limit: 2, prefix: 'ep_' } as const;
    expect(ids(listById(made, same, { ...query, order: 'descending' }), same)).toEqual([made[2], made[1]]);
    expect(ids(listById(made, same, { ...query, order: 'ascending' }), same)).toEqual([made[0], made[1]]);
    const gone = `ep_${encodeKsuidMs(T0 + 1500, new Uint8Array(15))}`;
    expect(ids(listById(made, same, { ...query, order: 'descending', iterator: gone }), same)).toEqual([
      made[1],
      made[0],
    ]);
    expect(ids(listById(made, same, { ...query, order: 'descending', iterator: `-${made[0]}` }), same)).toEqual([
      made[2],
      made[1],
    ]);
    expect(listById(made, same, { ...query, order: 'descending', iterator: 'msg_x' }).ok).toBe(false);
  });
});

describe('rotation (v1/endpoints/endpoint/secrets.rs rotate_key; core/types/mod.rs MAX_OLD_KEYS)', () => {
  const rotateTimes = (count: number, graceSeconds: number) => {
    let old: Array<ExpiringKey<string>> = [];
    for (let index = 0; index < count; index += 1) {
      const rotated = rotateKeys(`key${index}`, old, graceSeconds, T0 + index);
      if (!rotated.ok) return { refusedAt: index, old };
      old = rotated.old;
    }
    return { refusedAt: undefined, old };
  };

  it('keeps at most 10 replaced keys signing: the 11th rotation within their grace is refused (limit_reached)', () => {
    expect(MAX_OLD_KEYS).toBe(10);
    const { refusedAt, old } = rotateTimes(11, 3600);
    expect(refusedAt).toBe(10);
    expect(old).toHaveLength(10);
    const refusal = rotateKeys('key10', old, 3600, T0 + 10);
    expect(refusal).toEqual({ ok: false, code: 'limit_reached', nextExpiry: T0 + 3600_000 });
  });

  it('drops a key replaced with no grace at once, and expired keys before counting', () => {
    expect(rotateTimes(30, 0).refusedAt).toBeUndefined();
    const old = [{ key: 'gone', expiresAt: T0 }];
    expect(rotateKeys('current', old, 60, T0)).toEqual({ ok: true, old: [{ key: 'current', expiresAt: T0 + 60_000 }] });
  });

  it('signs with the current key, then each replaced key still in its grace', () => {
    const old = [
      { key: 'a', expiresAt: T0 + 10 },
      { key: 'b', expiresAt: T0 + 20 },
    ];
    expect(keysSigningAt('now', old, T0 + 15)).toEqual(['now', 'b']);
    expect(keysSigningAt('now', old, T0 + 20)).toEqual(['now']);
  });

  it('takes a grace of 0 to 604,800 whole seconds (v1/endpoints/endpoint/mod.rs EndpointSecretRotateIn)', () => {
    expect([0, 1, GRACE_SECONDS.max].every(isGraceSeconds)).toBe(true);
    expect([-1, GRACE_SECONDS.max + 1, 1.5, '60', null].some(isGraceSeconds)).toBe(false);
    expect(GRACE_SECONDS.default).toBe(86_400);
  });
});

describe('retries (worker.rs calculate_retry_delay, limit_retry_delay, retry_after)', () => {
  it('varies each wait by up to 20% either way', () => {
    const failed = { kind: 'status', status: 500 } as const;
    expect(retryDelayMs(300_000, failed, 0)).toBe(240_000);
    expect(retryDelayMs(300_000, failed, 0.5)).toBe(300_000);
    expect(retryDelayMs(300_000, failed, 1)).toBe(360_000);
  });

  it('waits at least 60 s after a time-out or a 429, and the schedule otherwise', () => {
    expect(retryDelayMs(5_000, { kind: 'timeout' }, 0.5)).toBe(OVERLOAD_PENALTY_MS);
    expect(retryDelayMs(5_000, { kind: 'status', status: 429 }, 0.5)).toBe(OVERLOAD_PENALTY_MS);
    expect(retryDelayMs(5_000, { kind: 'unreachable' }, 0.5)).toBe(5_000);
    expect(retryDelayMs(300_000, { kind: 'timeout' }, 0.5)).toBe(300_000);
    // Compressed as the sandbox compresses the schedule.
    expect(retryDelayMs(5, { kind: 'timeout' }, 0.5, 60)).toBe(60);
  });

  it("holds an endpoint's Retry-After to 1-2x the wait it would have had", () => {
    const after = (retryAfter: number) =>
      retryDelayMs(5_000, { kind: 'status', status: 503, retryAfterMs: retryAfter }, 0.5);
    expect(after(0)).toBe(5_000);
    expect(after(8_000)).toBe(8_000);
    expect(after(3_600_000)).toBe(10_000);
    expect(retryDelayMs(5_000, { kind: 'status', status: 429, retryAfterMs: 3_600_000 }, 0.5)).toBe(120_000);
  });

  it('reads Retry-After as seconds (a fraction rounds up) or an HTTP date', () => {
    expect(retryAfterMs('120', T0)).toBe(120_000);
    expect(retryAfterMs('120.1', T0)).toBe(121_000);
    expect(retryAfterMs(new Date(T0 + 30_000).toUTCString(), T0)).toBe(30_000);
    expect(retryAfterMs(new Date(T0 - 30_000).toUTCString(), T0)).toBe(0);
    expect(retryAfterMs('soon', T0)).toBeUndefined();
    expect(retryAfterMs(undefined, T0)).toBeUndefined();
  });
});

describe('disabling an endpoint (worker.rs process_endpoint_failure; config.default.toml, 120 h)', () => {
  const HOUR = 60 * 60 * 1000;

  it('disables it when a message uses up its retries over 120 h after the first one did, with no success between', () => {
    expect(DISABLE_AFTER_MS).toBe(120 * HOUR);
    const first = afterRetriesUsedUp(undefined, T0);
    expect(first).toEqual({ since: { at: T0 }, disable: false });
    expect(afterRetriesUsedUp(first.since, T0 + 120 * HOUR).disable).toBe(false);
    expect(afterRetriesUsedUp(first.since, T0 + 120 * HOUR + 1).disable).toBe(true);
    // A success between forgets the first: the caller drops the record, and counting starts again.
    expect(afterRetriesUsedUp(undefined, T0 + 121 * HOUR)).toEqual({
      since: { at: T0 + 121 * HOUR },
      disable: false,
    });
  });

  it('forgets a first failure 240 h on (the record lapses), and starts counting again', () => {
    expect(afterRetriesUsedUp({ at: T0 }, T0 + 240 * HOUR)).toEqual({ since: { at: T0 + 240 * HOUR }, disable: false });
  });
});

describe('what the server takes in a body (v1/endpoints/endpoint/mod.rs)', () => {
  it('takes a throttleRate of 1 to 65,535 whole messages a second, and nothing else', () => {
    expect([1, 25, 65_535].every(isThrottleRate)).toBe(true);
    expect([0, -1, 2.5, 65_536, '25', null].some(isThrottleRate)).toBe(false);
  });
});
