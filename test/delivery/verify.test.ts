import { errors } from 'zapier-platform-core';
import { known, type Known } from '../../src/delivery/known';
import { verify, type Delivery, type Verdict } from '../../src/delivery/verify';
import { DELIVERY_CALL_MS, JUNK_ALLOWANCE, OPERATION_BUDGET_MS, SECRET_SIGNS_ALONE_MS } from '../../src/limits';
import { callerOf } from '../../src/svix/client';
import { timeOfSvixId } from '../../src/svix/ksuid';
import { clockOf } from '../../src/zapier/clock';
import type { Io } from '../../src/zapier/io';
import { EventLoop, Scheduler } from '../../src/tools/sim/scheduler';
import { ENDPOINT_ID, authData, messageIdAt } from '../helpers/fixtures';

/**
 * A delivery's checks (src/delivery/verify.ts), on a virtual clock the test owns (every wait exact, none real), with
 * Svix scripted: which secret is current, which messages it keeps, and how it fails. Each Svix call takes 50 ms.
 */

const T0 = Date.UTC(2026, 11, 1, 12);
const MINUTE = 60_000;
type Answer = { status: number; content: string; retryAfter?: string };
const json = (status: number, body: unknown, retryAfter?: string): Answer => ({
  status,
  content: JSON.stringify(body),
  ...(retryAfter === undefined ? {} : { retryAfter }),
});
const NOT_FOUND = json(404, { code: 'not_found', detail: 'Entity not found' });
const message = (id: string, payload: unknown, eventType = 'AUCTION_STATUS_CHANGE') =>
  json(200, { id, eventType, payload, timestamp: new Date(T0).toISOString() });

/** Svix as scripted: the current secret, the messages it keeps, failures handed to the next calls in turn. */
const svixWorld = () => {
  const scheduler = new Scheduler(T0);
  const loop = new EventLoop(scheduler);
  const clock = clockOf({ now: () => scheduler.now, setTimeout: loop.setTimeout, clearTimeout: loop.clearTimeout });
  const failures: Answer[] = [];
  const state = { secret: 'whsec_new', messages: new Map<string, Answer>(), failures };
  const calls: Array<{ kind: 'secret' | 'message'; at: number }> = [];
  const io: Io = {
    send: (options) =>
      loop.call(async () => {
        const kind = options.url.endsWith('/secret') ? 'secret' : 'message';
        calls.push({ kind, at: scheduler.now });
        await scheduler.sleep(50);
        const failed = state.failures.shift();
        if (failed) return failed;
        if (kind === 'secret') return json(200, { key: state.secret });
        const id = decodeURIComponent(options.url.split('/').pop() ?? '');
        return state.messages.get(id) ?? NOT_FOUND;
      }),
    cache: { get: async () => undefined, set: async () => true },
    ...{ errors, log: () => undefined },
  };
  /** Starts the checks of one delivery arriving now. */
  const start = (e: Known, signers: string[], id = messageIdAt(scheduler.now - 1_000)): Promise<Verdict> => {
    const arrivedAt = scheduler.now;
    const delivery: Delivery = {
      id,
      createdAt: timeOfSvixId(id),
      signedWith: (secret) => signers.includes(secret),
      arrivedAt,
      deadline: arrivedAt + OPERATION_BUDGET_MS,
    };
    const caller = () => callerOf(io, { authData }, 'zap-run', arrivedAt, clock.now);
    return verify({ clock, caller, endpointId: ENDPOINT_ID, known: e, delivery });
  };
  /** Runs every timer the checks started set. */
  const settle = () => scheduler.run(100_000, () => undefined);
  /** Checks one delivery arriving now: its verdict once every timer it set has run. */
  const check = async (e: Known, signers: string[], id?: string): Promise<Verdict> => {
    const verdict = start(e, signers, id);
    await settle();
    return verdict;
  };
  return { scheduler, state, calls, check, start, settle };
};

/** What the subscribe saw, `ago` ms before now: the secret `whsec_old`. */
const subscribed = (now: number, ago: number, secret = 'whsec_old') => known(secret, now - ago, now - 60 * MINUTE);

describe("a delivery's checks", () => {
  it('1. signed with the secret read in the last 10 minutes: its body runs, with no call to Svix', async () => {
    const { scheduler, calls, check } = svixWorld();
    const e = subscribed(scheduler.now, SECRET_SIGNS_ALONE_MS);
    await expect(check(e, ['whsec_old'])).resolves.toEqual({ kind: 'signed' });
    expect(calls).toEqual([]);
  });

  it('2. past 10 minutes the secret is read again before it signs alone; then trusted for 10 more', async () => {
    const { scheduler, state, calls, check } = svixWorld();
    state.secret = 'whsec_old';
    const e = subscribed(scheduler.now, SECRET_SIGNS_ALONE_MS + 1);
    await expect(check(e, ['whsec_old'])).resolves.toEqual({ kind: 'signed' });
    expect(calls.map((call) => call.kind)).toEqual(['secret']);
    scheduler.now += SECRET_SIGNS_ALONE_MS - 1_000;
    await expect(check(e, ['whsec_old'])).resolves.toEqual({ kind: 'signed' });
    expect(calls).toHaveLength(1);
  });

  it('revocation: past 10 minutes, a body only the replaced secret signed runs as Svix keeps it, never as sent', async () => {
    const { scheduler, state, calls, check } = svixWorld();
    const e = subscribed(scheduler.now, SECRET_SIGNS_ALONE_MS + 1);
    const id = messageIdAt(scheduler.now - 1_000);
    state.messages.set(id, message(id, { status: 'CLOSED' }));
    await expect(check(e, ['whsec_old'], id)).resolves.toEqual({ kind: 'confirmed', event: { status: 'CLOSED' } });
    expect(calls.map((call) => call.kind)).toEqual(['secret', 'message']);
    // A forgery signed with it, naming no message Svix sent: refuted.
    await expect(check(e, ['whsec_old'])).resolves.toEqual({ kind: 'halt', why: 'not-confirmed' });
  });

  it('3. signed by no known secret and confirmed: Svix’s copy runs, and the new secret is read for the next', async () => {
    const { scheduler, state, calls, check } = svixWorld();
    const e = subscribed(scheduler.now, MINUTE);
    const id = messageIdAt(scheduler.now - 1_000);
    state.messages.set(id, message(id, { status: 'OPEN' }));
    await expect(check(e, ['whsec_new'], id)).resolves.toEqual({ kind: 'confirmed', event: { status: 'OPEN' } });
    expect(calls.map((call) => call.kind)).toEqual(['message', 'secret']);
    expect([e.secret, e.replaced, e.doubted]).toEqual(['whsec_new', ['whsec_old'], false]);
    await expect(check(e, ['whsec_new'])).resolves.toEqual({ kind: 'signed' });
    expect(calls).toHaveLength(2);
  });

  it('a delivery queued across a rotation (signed by the replaced secret) runs as Svix keeps it, with no doubt', async () => {
    const { scheduler, state, calls, check } = svixWorld();
    const e = subscribed(scheduler.now, MINUTE);
    const id = messageIdAt(scheduler.now - 1_000);
    state.messages.set(id, message(id, { status: 'OPEN' }));
    await check(e, ['whsec_new'], id);
    calls.length = 0;
    const queued = messageIdAt(scheduler.now - 2_000);
    state.messages.set(queued, message(queued, { status: 'DRAFT' }));
    // Free: junk cannot sign with a replaced secret, so it waits for no token, however spent the allowance.
    e.allowance = { tokens: -20, at: scheduler.now };
    const arrived = scheduler.now;
    await expect(check(e, ['whsec_old'], queued)).resolves.toEqual({ kind: 'confirmed', event: { status: 'DRAFT' } });
    expect(calls.map((call) => [call.kind, call.at - arrived])).toEqual([['message', 0]]);
    expect(e.doubted).toBe(false);
  });

  it('a delivery waiting for a token runs on its body once another taught the process its secret (performs at once)', async () => {
    const { scheduler, state, calls, start, settle } = svixWorld();
    const e = subscribed(scheduler.now, MINUTE);
    e.allowance = { tokens: 0, at: scheduler.now };
    const first = messageIdAt(scheduler.now - 1_000);
    state.messages.set(first, message(first, { status: 'OPEN' }));
    const [a, b] = [start(e, ['whsec_new'], first), start(e, ['whsec_new'])];
    await settle();
    await expect(a).resolves.toEqual({ kind: 'confirmed', event: { status: 'OPEN' } });
    await expect(b).resolves.toEqual({ kind: 'signed' });
    expect(calls.map((call) => call.kind)).toEqual(['message', 'secret']);
    // Its token given back: the allowance holds what the first took only.
    expect(e.allowance.tokens).toBe(-1);
  });

  it.each<[string, Answer, Verdict]>([
    ['Svix keeps no such message', NOT_FOUND, { kind: 'halt', why: 'not-confirmed' }],
    ['the message is another event type', message('x', {}, 'OTHER'), { kind: 'halt', why: 'not-confirmed' }],
    ['Svix no longer keeps its content', message('x', { expired: true }), { kind: 'halt', why: 'expired' }],
  ])('halts a delivery no known secret signed where %s', async (_, answer, verdict) => {
    const { scheduler, state, check } = svixWorld();
    const id = messageIdAt(scheduler.now - 1_000);
    state.messages.set(id, answer);
    await expect(check(subscribed(scheduler.now, MINUTE), ['whsec_stranger'], id)).resolves.toEqual(verdict);
  });

  it('halts, with no call, a delivery made before the endpoint (past the clocks’ allowance), or not a Svix id', async () => {
    const { scheduler, calls, check } = svixWorld();
    const e = known('whsec_old', scheduler.now, scheduler.now);
    const before = messageIdAt(scheduler.now - 6 * MINUTE);
    await expect(check(e, [], before)).resolves.toEqual({ kind: 'halt', why: 'before-endpoint' });
    await expect(check(e, [], 'msg_not-one-svix-makes')).resolves.toEqual({ kind: 'halt', why: 'not-a-svix-id' });
    expect(calls).toEqual([]);
  });

  it('halts as gone where Svix no longer has the endpoint', async () => {
    const { scheduler, state, check } = svixWorld();
    state.failures.push(NOT_FOUND);
    await expect(check(subscribed(scheduler.now, SECRET_SIGNS_ALONE_MS + 1), ['whsec_old'])).resolves.toEqual({
      kind: 'halt',
      why: 'gone',
    });
  });

  it('a call Svix fails for a moment is made again; a 429 waits out its Retry-After, on the clock handed in', async () => {
    const { scheduler, state, calls, check } = svixWorld();
    const id = messageIdAt(scheduler.now - 1_000);
    state.messages.set(id, message(id, { status: 'OPEN' }));
    state.failures.push(json(503, ''), json(429, { code: 'rate_limited', detail: 'slow down' }, '3'));
    const verdict = await check(subscribed(scheduler.now, MINUTE), ['whsec_stranger'], id);
    expect(verdict).toEqual({ kind: 'confirmed', event: { status: 'OPEN' } });
    const messages = calls.filter((call) => call.kind === 'message').map((call) => call.at - T0);
    // 503 at 0, again 100 ms after it answered; 429 at 150, again 3 s after it answered.
    expect(messages).toEqual([0, 150, 3_200]);
  });

  it('Svix failing throughout: an error naming the message to resend (unchecked), never past its deadline', async () => {
    const { scheduler, state, calls, check } = svixWorld();
    state.failures.push(...Array.from({ length: 100 }, () => json(503, '')));
    const verdict = await check(subscribed(scheduler.now, MINUTE), ['whsec_stranger']);
    expect(verdict).toEqual({ kind: 'unchecked' });
    const last = calls[calls.length - 1]?.at ?? Infinity;
    expect(last - T0).toBeLessThanOrEqual(OPERATION_BUDGET_MS - DELIVERY_CALL_MS);
    expect(scheduler.now - T0).toBeLessThanOrEqual(OPERATION_BUDGET_MS);
  });

  it('a refusal (the key revoked) is not tried again: Svix refused it', async () => {
    const { scheduler, state, calls, check } = svixWorld();
    state.failures.push(json(401, { code: 'authentication_failed', detail: 'Invalid token' }));
    const verdict = await check(subscribed(scheduler.now, SECRET_SIGNS_ALONE_MS + 1), ['whsec_old']);
    expect(verdict).toEqual(expect.objectContaining({ kind: 'refused', call: 'read' }));
    expect(calls).toHaveLength(1);
  });

  it(`junk takes the allowance: ${JUNK_ALLOWANCE.burst} calls at once, then one a token, none past its time`, async () => {
    const { scheduler, calls, start, settle } = svixWorld();
    const e = subscribed(scheduler.now, MINUTE);
    const { burst, everyMs } = JUNK_ALLOWANCE;
    // More junk at once than the allowance takes in a delivery's time: 25 s less room for the call and the read a
    // confirmation may lead to.
    const last = Math.floor((OPERATION_BUDGET_MS - 2 * DELIVERY_CALL_MS) / everyMs);
    const count = burst + last + 20;
    const started = Array.from({ length: count }, () => start(e, ['whsec_stranger']));
    await settle();
    const verdicts = await Promise.all(started);
    expect(verdicts.every((verdict) => verdict.kind === 'halt' || verdict.kind === 'unchecked')).toBe(true);
    expect(calls).toHaveLength(burst + last);
    for (const [n, call] of calls.entries()) expect(call.at - T0).toBeGreaterThanOrEqual((n - burst + 1) * everyMs - 1);
    expect(verdicts.filter((verdict) => verdict.kind === 'unchecked')).toHaveLength(count - calls.length);
  });
});
