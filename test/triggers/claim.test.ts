import nock from 'nock';
import { createAppTester, type ZObject } from 'zapier-platform-core';
import app from '../../src';
import { CLAIM_TTL_SECONDS, claimKey } from '../../src/delivery/claim';
import { CACHE_SCOPE, requestSettings } from '../../src/zapier/io';
import { PROVIDER_RETRY_SCHEDULE_MS } from '../../src/tools/sandbox/emulator';
import type { RpcFault } from '../../src/tools/sandbox/platform';
import {
  MSG_ID,
  PROVIDER,
  SECRET,
  authData,
  failure,
  messageIdAt,
  payload,
  signedRequest,
  subscription,
} from '../helpers/fixtures';
import { IDENTITY, usePlatform } from '../helpers/platform';

/**
 * Exactly-once Zap runs under Svix's at-least-once delivery, proven as
 * Zapier runs the app: z.cache over core's RPC client to a stand-in that
 * answers `set` as Zapier documents it (`true` stored, `false` the key exists,
 * `null` throttled), and, switched over, as Redis's own SET NX does (`null`
 * when the key exists).
 */

const body = JSON.stringify(payload);
const OTHER_ENDPOINT = 'ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Zz9';
const claim = claimKey(subscription.id, MSG_ID);

/** Faults for the claim of the message under test, as a test sets them. */
let claimFaults: RpcFault[] = [];
/** Faults for reads of that claim. */
let claimReadFaults: RpcFault[] = [];
const zapier = usePlatform({
  // A round trip of a few ms, so simultaneous deliveries really overlap at the cache.
  delayMs: 3,
  fault: (call) =>
    call.key !== claim
      ? undefined
      : call.method === 'zcache_set'
        ? claimFaults.shift()
        : call.method === 'zcache_get'
          ? claimReadFaults.shift()
          : undefined,
});
beforeEach(() => {
  claimFaults = [];
  claimReadFaults = [];
  zapier().platform.answerConflictsWith(false);
  zapier().platform.answerThrottledSetsWith(null);
});

const deliver = (subscribeData: object = subscription, msgId = MSG_ID) =>
  zapier().perform({ authData, subscribeData, rawRequest: signedRequest(body, { msgId }), inputData: {} });

const claimSets = () =>
  zapier()
    .calls()
    .filter((call) => call.method === 'zcache_set' && call.key.startsWith('seen:'));

describe('exactly-once Zap runs, as Zapier runs them', () => {
  it('claims a message with one set: its key, the TTL, the connection scope and nx', async () => {
    await expect(deliver()).resolves.toHaveLength(1);
    expect(claimSets()).toEqual([
      expect.objectContaining({
        method: 'zcache_set',
        key: `seen:${subscription.id}:${MSG_ID}`,
        // 7 days, plus the 5-minute signing allowance, plus 5 minutes for clocks.
        ttl: 7 * 24 * 60 * 60 + 10 * 60,
        scope: CACHE_SCOPE,
        nx: true,
        result: true,
      }),
    ]);
    // The claim lives in the connection's scope: it is found there, and only there.
    expect(zapier().platform.peek(IDENTITY, claim, CACHE_SCOPE)).toEqual(expect.any(String));
    expect(zapier().platform.peek(IDENTITY, claim, null)).toBeUndefined();
  });

  it('remembers a run, as sent to the cache, for longer than Svix retries and a week of resends', async () => {
    await deliver();
    const [claimed] = claimSets();
    const retriesSeconds = PROVIDER_RETRY_SCHEDULE_MS.reduce((sum, delay) => sum + delay, 0) / 1000;
    expect(claimed?.ttl).toBeGreaterThanOrEqual(7 * 24 * 60 * 60);
    expect(claimed?.ttl).toBeGreaterThan(retriesSeconds);
    expect(claimed?.ttl).toBe(CLAIM_TTL_SECONDS);
  });

  it('does not run a message a second time for the same Zap', async () => {
    await expect(deliver()).resolves.toHaveLength(1);
    // A redelivery is signed afresh (new timestamp) but carries the same message id.
    await expect(deliver()).resolves.toEqual([]);
  });

  it.each([
    ['false, as Zapier documents', false],
    ['null, as Redis does', null],
  ] as const)(
    'runs 12 simultaneous deliveries of one message exactly once, a conflict answered %s',
    async (_how, answer) => {
      zapier().platform.answerConflictsWith(answer);
      const results = await Promise.all(Array.from({ length: 12 }, () => deliver()));
      expect(results.filter((items) => Array.isArray(items) && items.length === 1)).toHaveLength(1);
      expect(results.filter((items) => Array.isArray(items) && items.length === 0)).toHaveLength(11);
      expect(claimSets().filter((call) => call.result === answer)).toHaveLength(11);
      await expect(deliver()).resolves.toEqual([]);
    },
  );

  it('runs the same message once in each of two Zaps', async () => {
    await expect(deliver()).resolves.toHaveLength(1);
    await expect(deliver({ ...subscription, id: OTHER_ENDPOINT, zap: OTHER_ENDPOINT })).resolves.toHaveLength(1);
  });

  it('warm or cold, one cache round trip and no Svix call while the secret was read in the last 10 minutes', async () => {
    await deliver(subscription, messageIdAt(Date.now()));
    zapier().platform.resetCalls();
    await expect(deliver()).resolves.toHaveLength(1);
    expect(
      zapier()
        .calls()
        .map((call) => call.method),
    ).toEqual(['zcache_set']);

    zapier().coldStart();
    zapier().platform.resetCalls();
    const cold = messageIdAt(Date.now());
    await expect(deliver(subscription, cold)).resolves.toHaveLength(1);
    expect(
      zapier()
        .calls()
        .map((call) => `${call.method} ${call.key}`),
    ).toEqual([`zcache_set seen:${subscription.id}:${cold}`]);
  });

  it('a throttled claim (null, nothing stored) is tried again at once, so a one-off throttle never doubles a run', async () => {
    claimFaults = [{ kind: 'throttle' }];
    await expect(deliver()).resolves.toHaveLength(1);
    expect(claimSets().map((call) => call.fault ?? call.result)).toEqual(['throttle', true]);
    // The claim was stored on the second try: a redelivery does not run again.
    await expect(deliver()).resolves.toEqual([]);
  });

  it('a throttled claim whose read-back is throttled too is tried again, and still runs once', async () => {
    claimFaults = [{ kind: 'throttle' }];
    // The read-back answers null as well: it looks like nothing was stored, so the claim is made again.
    claimReadFaults = [{ kind: 'throttle' }];
    await expect(deliver()).resolves.toHaveLength(1);
    // The read-back was made, and throttled.
    expect(claimReadFaults).toEqual([]);
    expect(claimSets().map((call) => call.fault ?? call.result)).toEqual(['throttle', true]);
    await expect(deliver()).resolves.toEqual([]);
  });

  it("a cache that keeps throttling: tried again until the delivery's time is up, then the Zap runs unclaimed", async () => {
    // The pauses pass at once on the process's virtual clock, which each moves on by what it waits.
    claimFaults = Array.from({ length: 200 }, () => ({ kind: 'throttle' }) satisfies RpcFault);
    await expect(deliver()).resolves.toHaveLength(1);
    const moved = zapier().clock.moved();
    const longest = 2_000; // the claim's longest back-off
    // A try after each pause of the one back-off; the pauses filled the delivery's time, short at first.
    expect(claimSets().length).toBeGreaterThan(requestSettings.operationBudgetMs / longest);
    expect(moved).toBeLessThanOrEqual(requestSettings.operationBudgetMs);
    expect(moved).toBeGreaterThan(requestSettings.operationBudgetMs - 2 * longest);
    // It ran without a claim: a redelivery would find none.
    expect(zapier().platform.peek(IDENTITY, claim)).toBeUndefined();
  });

  it('a first delivery whose every claim is throttled with false (core mocks a throttle so) still runs: never a silent loss', async () => {
    // #51.1: on 962d0e2 the perform ended after 25 s with no run and no error, and Svix had been answered 200.
    zapier().platform.answerThrottledSetsWith(false);
    claimFaults = Array.from({ length: 200 }, () => ({ kind: 'throttle' }) satisfies RpcFault);
    claimReadFaults = Array.from({ length: 200 }, () => ({ kind: 'throttle' }) satisfies RpcFault);
    await expect(deliver()).resolves.toHaveLength(1);
    expect(claimSets().every((call) => call.fault === 'throttle')).toBe(true);
    expect(zapier().platform.peek(IDENTITY, claim)).toBeUndefined();
  });

  it('still drops a redelivery when the cache answers its claim with null and an earlier delivery holds it', async () => {
    await expect(deliver()).resolves.toHaveLength(1);
    claimFaults = [{ kind: 'throttle' }];
    await expect(deliver()).resolves.toEqual([]);
  });

  it('runs once when its own claim was stored but the answer was lost (core retries, and meets it)', async () => {
    claimFaults = [{ kind: 'store-then-unavailable' }];
    await expect(deliver()).resolves.toHaveLength(1);
    await expect(deliver()).resolves.toEqual([]);
  });

  it('runs the Zap when the cache cannot answer at all: a possible duplicate, never a lost event', async () => {
    claimFaults = [{ kind: 'error' }];
    await expect(deliver()).resolves.toHaveLength(1);
  });

  it.each([
    ['a forged delivery', () => signedRequest(body, { secrets: [SECRET.replace(/.$/, 'A')] })],
    ['a delivery signed 8 days ago', () => signedRequest(body, { at: new Date(Date.now() - 8 * 86_400_000) })],
  ])('never claims %s', async (_what, request) => {
    const secretRead = nockSecret();
    const refused = await failure(
      zapier().perform({ authData, subscribeData: subscription, rawRequest: request(), inputData: {} }),
    );
    secretRead.persist(false);
    expect(refused.name).toBe('HaltedError');
    expect(claimSets()).toEqual([]);
    await expect(deliver()).resolves.toHaveLength(1);
  });

  it('claims a delivery the Zap filtered out too, so an edit widening the filter does not run it when sent again', async () => {
    const zap = 'zap-under-test';
    await expect(
      zapier().perform({
        authData,
        subscribeData: { ...subscription, zap },
        rawRequest: signedRequest(body),
        inputData: { statuses: ['LOTS_SOLD'] },
      }),
    ).resolves.toEqual([]);
    // Claimed under the Zap's scope, not its endpoint's.
    expect(claimSets()).toEqual([expect.objectContaining({ key: `seen:${zap}:${MSG_ID}`, nx: true })]);
    // The edited Zap (no filter, a new endpoint of the same Zap) is sent it again, as its catch-up sends what the Zap
    // may have missed.
    await expect(deliver({ ...subscription, id: OTHER_ENDPOINT, zap })).resolves.toEqual([]);
  });
});

describe("the local tester's cache", () => {
  it('ignores nx and answers true every time: there (not on Zapier) a redelivery runs again', async () => {
    const tester = createAppTester(app);
    const answers = await tester(async (z: ZObject) => [
      await z.cache.set('key', 1, 60, ['auth'], true),
      await z.cache.set('key', 2, 60, ['auth'], true),
    ]);
    expect(answers).toEqual([true, true]);
  });
});

/** Svix as a forged delivery meets it: no such message. */
const nockSecret = () =>
  nock(PROVIDER)
    .persist()
    .get(/\/secret$/)
    .reply(200, { key: SECRET })
    .get(/\/msg\/msg_[A-Za-z0-9]+$/)
    .query(true)
    .reply(404, { code: 'not_found', detail: 'Entity not found' });
