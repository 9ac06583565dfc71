import { endpointUid } from '../../src/provider/ids';
import { requestSettings } from '../../src/provider/request';
import { newSecret } from '../../src/sandbox/emulator/store';
import { refusalMessage } from '../../src/triggers/delivery';
import { secretHistoryKey, secretSettings } from '../../src/triggers/endpointSecret';
import { RECORD_REFUSALS } from '../../src/triggers/record';
import { CLAIM_TTL_SECONDS } from '../../src/triggers/claim';
import { classify, currentOf } from '../../src/triggers/secretHistory';
import { failure } from '../helpers/fixtures';
import { IDENTITY } from '../helpers/platform';
import { UNAVAILABLE, useSecretWorld, type AuctionEvent } from '../helpers/secretWorld';

/**
 * Deliveries signed with no secret known here (junk, or a secret this side
 * has not seen yet) and what they cost: reads of the secret, the provider's
 * record, the allowance, and what z.cache shares, when Svix or z.cache has
 * trouble too. Run as Zapier runs them, as in endpointSecret.test.ts.
 */

const world = useSecretWorld();
const {
  calls,
  faults,
  main,
  zapier,
  later,
  send,
  junk,
  delivery,
  rotate,
  ranWith,
  rotateAndTeach,
  inBatches,
  sharedHistory,
  historyCalls,
} = world;

describe('deliveries signed with no secret known here', () => {
  it('a genuine delivery after an immediate rotation runs after one read; 12 at once share it', async () => {
    const rotated = await rotate(0);
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 12; index += 1) events.push(await send());
    const outcomes = await Promise.all(events.map((event) => main.perform(delivery(event, [rotated]))));
    expect(outcomes).toEqual(events.map(ranWith));
    expect(calls).toEqual({ secret: 1, record: 0 });
  });

  it('40 junk deliveries, 8 at a time, cost at most 6 provider calls, and a genuine one with a new secret runs right after', async () => {
    const outcomes = await inBatches(
      Array.from({ length: 40 }, () => delivery(junk(), [newSecret()])),
      8,
    );
    // Halts, every one: errors would count towards Zapier turning the Zap off.
    expect(outcomes).toEqual(Array.from({ length: 40 }, () => ({ error: 'HaltedError' })));
    expect(calls.secret + calls.record).toBeLessThanOrEqual(6);
    const rotated = await rotate(0);
    const genuine = await send();
    await expect(main.perform(delivery(genuine, [rotated]))).resolves.toEqual(ranWith(genuine));
  });

  it('junk one after another: three reads of the secret, then none until the allowance refills', async () => {
    secretSettings.refillMs = 60_000;
    const refusals: string[] = [];
    for (let index = 0; index < 6; index += 1) {
      const refused = await failure(main.perform(delivery(junk(), [newSecret()])));
      expect(refused.name).toBe('HaltedError');
      refusals.push(refused.message);
    }
    expect(calls).toEqual({ secret: 3, record: 0 });
    // Past the allowance, no read can be made in time: refused as unchecked, without waiting.
    expect(refusals.slice(3)).toEqual(Array.from({ length: 3 }, () => refusalMessage('unchecked-signature')));
  });

  it('a read that finds a new secret costs nothing: genuine rotations never use the allowance up', async () => {
    secretSettings.refillMs = 60_000;
    for (let index = 0; index < 5; index += 1) await rotateAndTeach();
    expect(calls.secret).toBe(5);
    // The whole burst is still there for whatever comes next: three calls, then none.
    for (let index = 0; index < 4; index += 1) await failure(main.perform(delivery(junk(), [newSecret()])));
    expect(calls.secret + calls.record).toBe(5 + 3);
  });

  it('a read of the secret that fails for a moment is tried again, and the delivery runs', async () => {
    const rotated = await rotate(0);
    faults.secret = [UNAVAILABLE];
    const event = await send();
    await expect(main.perform(delivery(event, [rotated]))).resolves.toEqual(ranWith(event));
    expect(calls.secret).toBe(2);
  });

  it('a read that fails twice leaves the decision to the record, which needs no secret', async () => {
    const rotated = await rotate(0);
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    const event = await send();
    await expect(main.perform(delivery(event, [rotated]))).resolves.toEqual(ranWith(event));
    expect(calls).toEqual({ secret: 2, record: 1 });
    // Junk is still refused that way: the record does not know it.
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    expect((await failure(main.perform(delivery(junk(), [newSecret()])))).message).toBe(RECORD_REFUSALS.notConfirmed);
  });

  it('when neither the secret nor the record can be read, the error names the event and how to send it again', async () => {
    const rotated = await rotate(0);
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    faults.record = [UNAVAILABLE, UNAVAILABLE];
    const event = await send();
    const failed = await failure(main.perform(delivery(event, [rotated])));
    expect(failed.name).not.toBe('HaltedError');
    expect(failed.code).toBe('EventNotConfirmed');
    expect(failed.message).toContain(event.id);
    expect(failed.message).toMatch(/Svix's dashboard.*resend it/);
  });

  it('keeps what it learnt in z.cache, scoped to the connection, for as long as runs are remembered', async () => {
    await rotateAndTeach();
    expect(historyCalls('zcache_set')).toEqual([
      expect.objectContaining({ scope: ['auth'], ttl: CLAIM_TTL_SECONDS, nx: false }),
    ]);
  });

  it('writes again when another process overwrote what it shared, so no process loses the new secret', async () => {
    const stale = { secrets: [{ secret: world.zap.secret, from: Date.now() - 60_000, seen: Date.now() - 60_000 }] };
    let overwritten = false;
    world.zapierFault = (call) => {
      // Between this process's write and its read-back, another process writes what it knew: only the old secret.
      if (call.method === 'zcache_get' && call.key === secretHistoryKey(world.zap.id) && !overwritten && written()) {
        overwritten = true;
        zapier().platform.poke(IDENTITY, secretHistoryKey(world.zap.id), stale);
      }
    };
    const written = () => historyCalls('zcache_set').length > 0;
    const rotated = await rotateAndTeach();
    expect(overwritten).toBe(true);
    const kept = sharedHistory();
    expect(currentOf(kept)?.secret).toBe(rotated);
    expect(classify(kept, (secret) => secret === world.zap.secret).kind).toBe('replaced');
  });

  it('a Zap turned on by an older version (no word on the cache) learns it honours nx on its first read', async () => {
    const { cacheHonoursNx, ...older } = world.zap;
    expect(cacheHonoursNx).toBe(true);
    world.zap = older;
    await rotateAndTeach();
    zapier().platform.resetCalls();
    const next = await send();
    const rotated = currentOf(sharedHistory())?.secret;
    if (rotated === undefined) throw new Error('no current secret in z.cache');
    await expect(main.perform(delivery(next, [rotated]))).resolves.toEqual(ranWith(next));
    // One round trip: the claim alone, with nx (no read first).
    expect(
      zapier()
        .calls()
        .map((call) => call.method),
    ).toEqual(['zcache_set']);
  });

  it('an endpoint whose id carries no time and whose subscribe did not say when refuses what the record would check', async () => {
    const waiting = await send();
    await rotateAndTeach();
    // The same endpoint, named by the uid its subscribe gave it, which carries no time.
    const { checkedAt, ...undated } = {
      ...world.zap,
      id: endpointUid('zapier', 'http://127.0.0.1:9/hooks/standard/1/'),
    };
    expect(checkedAt).toBeDefined();
    zapier().coldStart();
    const refused = await failure(main.perform(delivery(waiting, [world.zap.secret], undated)));
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.notConfirmed });
    expect(calls.record).toBe(0);
  });
});

describe('secrets used again', () => {
  it('a secret rotated back to (a key used again) is current again once a second read confirms it', async () => {
    await rotateAndTeach();
    // Back to the first key: a read that shows a replaced secret is made twice before it is believed.
    await world.client.call({
      method: 'POST',
      path: `/api/v1/app/${world.authData.appId}/endpoint/${world.zap.id}/secret/rotate`,
      body: { key: world.zap.secret, gracePeriodSeconds: 0 },
      action: 'rotating back',
    });
    const before = calls.secret;
    await failure(main.perform(delivery(junk(), [newSecret()])));
    expect(calls.secret - before).toBe(2);
    // Signed with the first key, which is current again: it runs on its signature, without the record.
    const records = calls.record;
    const event = await send();
    await expect(main.perform(delivery(event, [world.zap.secret]))).resolves.toEqual(ranWith(event));
    expect(calls.record).toBe(records);
  });
});

describe('when z.cache has trouble', () => {
  it('a failed look at what other processes learnt is tried again after a few seconds, not a minute', async () => {
    let failNextHistoryRead = false;
    world.zapierFault = (call) => {
      if (failNextHistoryRead && call.method === 'zcache_get' && call.key === secretHistoryKey(world.zap.id)) {
        failNextHistoryRead = false;
        return { kind: 'error' };
      }
      return undefined;
    };
    const historyReads = () => historyCalls('zcache_get').length;
    await main.perform(delivery(await send(), [world.zap.secret]));
    const start = historyReads();
    later(61_000);
    failNextHistoryRead = true;
    await expect(main.perform(delivery(await send(), [world.zap.secret]))).resolves.toHaveLength(1);
    expect(historyReads()).toBe(start + 1);
    later(61_000 + secretSettings.syncRetryAfterMs + 1_000);
    await expect(main.perform(delivery(await send(), [world.zap.secret]))).resolves.toHaveLength(1);
    expect(historyReads()).toBe(start + 2);
  });
});

describe('when Svix has trouble', () => {
  it('a stale secret whose re-read fails is trusted, and read again no sooner than 30 seconds later', async () => {
    const first = await send();
    await expect(main.perform(delivery(first, [world.zap.secret]))).resolves.toHaveLength(1);
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    later(11 * 60_000);
    for (let index = 0; index < 3; index += 1) {
      const event = await send();
      await expect(main.perform(delivery(event, [world.zap.secret]))).resolves.toHaveLength(1);
    }
    // Two attempts of one read; the next deliveries trusted it without a read.
    expect(calls.secret).toBe(2);
    later(11 * 60_000 + secretSettings.staleRetryAfterMs + 1_000);
    const after = await send();
    await expect(main.perform(delivery(after, [world.zap.secret]))).resolves.toHaveLength(1);
    expect(calls.secret).toBe(3);
  });

  it('junk arriving while the secret cannot be read costs the allowance in record calls, and a read every few seconds', async () => {
    secretSettings.refillMs = 60_000;
    secretSettings.readRetryAfterMs = 1_000;
    // A shorter budget keeps the test short: junk gives up after a few seconds of Svix's trouble.
    requestSettings.operationBudgetMs = 8_000;
    faults.secret = Array.from({ length: 100 }, () => UNAVAILABLE);
    const started = Date.now();
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, () => failure(main.perform(delivery(junk(), [newSecret()])))),
    );
    const elapsed = Date.now() - started;
    // However much arrives: the record within the allowance, and one read (two attempts) a second.
    expect(calls.record).toBe(secretSettings.burst);
    expect(calls.secret).toBeLessThanOrEqual(2 * (1 + Math.floor(elapsed / secretSettings.readRetryAfterMs)));
    expect(outcomes.filter((outcome) => outcome.name === 'HaltedError')).toHaveLength(calls.record);
    const unchecked = outcomes.filter((outcome) => outcome.code === 'SignatureNotChecked');
    expect(unchecked).toHaveLength(12 - calls.record);
    for (const outcome of unchecked) expect(outcome.message).toMatch(/resend it/);
  });

  it('once Svix answers again, the secret is read at once, even when junk used the allowance up meanwhile', async () => {
    secretSettings.refillMs = 60_000;
    secretSettings.readRetryAfterMs = 1_000;
    const rotated = await rotate(0);
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    // Junk that arrives while Svix fails the read asks the record, and uses the allowance up.
    const refused = await Promise.all(
      Array.from({ length: secretSettings.burst }, () => failure(main.perform(delivery(junk(), [newSecret()])))),
    );
    expect(refused.map((outcome) => outcome.message)).toEqual(
      Array.from({ length: secretSettings.burst }, () => RECORD_REFUSALS.notConfirmed),
    );
    expect(calls).toEqual({ secret: 2, record: secretSettings.burst });
    // The read Svix failed is owed: made a second later without the allowance, and it settles the delivery.
    const event = await send();
    await expect(main.perform(delivery(event, [rotated]))).resolves.toEqual(ranWith(event));
    expect(calls).toEqual({ secret: 3, record: secretSettings.burst });
  });

  it('deliveries arriving a moment after Svix failed a read wait for the read owed, and one read settles them all', async () => {
    secretSettings.readRetryAfterMs = 1_000;
    const rotated = await rotate(0);
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    const first = await send();
    // The first delivery's read fails twice: the record decides for it.
    await expect(main.perform(delivery(first, [rotated]))).resolves.toEqual(ranWith(first));
    expect(calls).toEqual({ secret: 2, record: 1 });
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 6; index += 1) events.push(await send());
    const outcomes = await Promise.all(events.map((event) => main.perform(delivery(event, [rotated]))));
    expect(outcomes).toEqual(events.map(ranWith));
    expect(calls).toEqual({ secret: 3, record: 1 });
  });

  it('a delivery that saw Svix fail a read asks the record, and does not wait for reads Svix keeps failing', async () => {
    secretSettings.burst = 1;
    secretSettings.readRetryAfterMs = 1_000;
    const rotated = await rotate(0);
    faults.secret = Array.from({ length: 20 }, () => UNAVAILABLE);
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 3; index += 1) events.push(await send());
    // One place: the record is asked for one delivery at a time, each giving the place back.
    const outcomes = await Promise.all(events.map((event) => main.perform(delivery(event, [rotated]))));
    expect(outcomes).toEqual(events.map(ranWith));
    expect(calls).toEqual({ secret: 2, record: 3 });
  });

  it('the read owed after Svix failed one is not charged to the allowance', async () => {
    secretSettings.refillMs = 600_000;
    secretSettings.readRetryAfterMs = 1_000;
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    // Junk while the read fails: the record is asked, and charged (two calls left).
    expect((await failure(main.perform(delivery(junk(), [newSecret()])))).message).toBe(RECORD_REFUSALS.notConfirmed);
    later(2_000);
    // The next junk makes the owed read, which finds the same secret: refused, and not charged.
    expect((await failure(main.perform(delivery(junk(), [newSecret()])))).message).toBe(
      refusalMessage('no-valid-signature'),
    );
    expect(calls).toEqual({ secret: 3, record: 1 });
    expect(sharedHistory().allowance?.tokens).toBeCloseTo(2, 1);
  });

  it('a delivery waiting for the allowance while the owed read is due waits, without spinning', async () => {
    secretSettings.refillMs = 1_500;
    secretSettings.readRetryAfterMs = 1_000;
    // Signed with a secret this side never sees (two rotations while it waited), and junk of that moment.
    const waiting = await send();
    const first = await rotate(0);
    const queued = delivery(waiting, [first]);
    const forged = Array.from({ length: secretSettings.burst }, () => delivery(junk(), [newSecret()]));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await rotateAndTeach();
    // The junk uses the allowance up on the record; then Svix fails a read, which is owed.
    for (const bundle of forged) await failure(main.perform(bundle));
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    await failure(main.perform(delivery(junk(), [newSecret()])));
    later(secretSettings.readRetryAfterMs + 100);
    const timers = jest.spyOn(global, 'setTimeout');
    await expect(main.perform(queued)).resolves.toEqual(ranWith(waiting));
    // A few timers of the wait and the calls, not one every millisecond until the allowance refills.
    expect(timers.mock.calls.length).toBeLessThan(200);
  });

  it('a call the record gave back is not taken away again by the allowance z.cache held before', async () => {
    secretSettings.refillMs = 600_000;
    secretSettings.readRetryAfterMs = 60_000;
    const rotated = await rotate(0);
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    // Junk while the read fails: one record call, charged and shared (two calls left).
    expect((await failure(main.perform(delivery(junk(), [newSecret()])))).message).toBe(RECORD_REFUSALS.notConfirmed);
    // A genuine one, too soon to wait for the read owed, asks the record, which confirms it and
    // gives the call back: three again, in this process.
    const event = await send();
    await expect(main.perform(delivery(event, [rotated]))).resolves.toEqual(ranWith(event));
    expect(calls).toEqual({ secret: 2, record: 2 });
    // A minute later this process looks at z.cache again, which still holds the spending of before.
    later(61_000);
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    expect((await failure(main.perform(delivery(junk(), [newSecret()])))).message).toBe(RECORD_REFUSALS.notConfirmed);
    // Three, less the one just spent (the refill over a minute is a tenth of a call).
    expect(sharedHistory().allowance?.tokens).toBeCloseTo(2, 5);
  });
});
