import { endpointUid } from '../../src/provider/ids';
import { newId, newSecret } from '../../src/sandbox/emulator/store';
import { refusalMessage } from '../../src/triggers/delivery';
import { RECORD_REFUSALS } from '../../src/triggers/record';
import { CLAIM_TTL_SECONDS } from '../../src/triggers/claim';
import { RULES } from '../../src/triggers/rules';
import { clock } from '../../src/clock';

/** Waits on this side's clock (the test's own, once `virtualWaits` gave one). */
const sleep = (ms: number) => clock.sleep(ms);
import { secretHistoryKey } from '../../src/triggers/verify';
import { failure, signedRequest } from '../helpers/fixtures';
import { anotherProcess } from '../helpers/platform';
import { UNAVAILABLE, useSecretWorld, type AuctionEvent } from '../helpers/secretWorld';

/**
 * Deliveries signed with no secret known here (junk, or a secret this side
 * has not seen yet), as Zapier runs them: what they cost, and the corners of
 * docs/guarantees.md's table "Which delivery runs" that Svix, z.cache and the
 * clocks reach. Each test names its row.
 */

const world = useSecretWorld();
const { calls, faults, main, zapier, later, send, junk, delivery, rotate, ranWith, rotateAndTeach } = world;
const { sharedHistory, historyCalls, virtualWaits } = world;

/**
 * 40 junk deliveries, 8 at a time, on the clock `virtualWaits` gives: each must end as one of
 * `endings`, and all together cost no more Svix calls than the allowances give (3 reads and 5
 * listings at once, then one of each every 2 seconds, on that clock, which each wait moves on:
 * waits side by side add up, so the bound is loose here; the simulation checks it exactly).
 */
const junkFloodIsCheap = async (_waited: () => number, endings: readonly string[]) => {
  const before = calls.secret + calls.record;
  // The allowance refills on the app's clock: what the waits moved it on, and the real time the flood took.
  const startedAt = Date.now();
  const outcomes: Array<{ id: string; name: string; message: string }> = [];
  for (let batch = 0; batch < 5; batch += 1) {
    const runs = Array.from({ length: 8 }, async () => {
      const event = junk();
      const { name, message } = await failure(main.perform(delivery(event, [newSecret()])));
      return { id: event.id, name, message };
    });
    outcomes.push(...(await Promise.all(runs)));
  }
  expect(outcomes.filter(({ name }) => !endings.includes(name))).toEqual([]);
  const elapsed = Date.now() - startedAt;
  const allowed =
    RULES.reads.burst + RULES.listings.burst + elapsed / RULES.reads.refillMs + elapsed / RULES.listings.refillMs;
  expect(calls.secret + calls.record - before).toBeLessThanOrEqual(Math.floor(allowed));
  return outcomes;
};

describe('junk costs little in every state, and a genuine delivery with a new secret runs right after', () => {
  const afterTheFlood = async () => {
    const rotated = await rotate(0);
    const genuine = await send();
    await expect(main.perform(delivery(genuine, [rotated]))).resolves.toEqual(ranWith(genuine));
  };

  it('fresh: within the allowances, each ending within its time, every one a halt', async () => {
    await junkFloodIsCheap(virtualWaits(), ['HaltedError']);
    await afterTheFlood();
  });

  it('right after an immediate rotation seen by a genuine delivery, in the next second', async () => {
    const moved = virtualWaits();
    await rotateAndTeach();
    // Whatever second it claims: the very second the new secret was first seen signing, or the next.
    await junkFloodIsCheap(moved, ['HaltedError']);
    await clock.sleep(1_000);
    await junkFloodIsCheap(moved, ['HaltedError']);
    await afterTheFlood();
  });

  it('after several rotations', async () => {
    const moved = virtualWaits();
    for (let rotation = 0; rotation < 4; rotation += 1) await rotateAndTeach();
    await clock.sleep(1_000);
    await junkFloodIsCheap(moved, ['HaltedError']);
    await afterTheFlood();
  });

  it('while Svix fails every call: errors naming each message, within the allowances', async () => {
    const clock = virtualWaits();
    faults.secret = Array.from({ length: 100 }, () => UNAVAILABLE);
    faults.record = Array.from({ length: 100 }, () => UNAVAILABLE);
    const outcomes = await junkFloodIsCheap(clock, ['AppError', 'HaltedError']);
    const errors = outcomes.filter(({ name }) => name === 'AppError');
    expect(errors.length).toBeGreaterThan(0);
    for (const { id, message } of errors) expect(message).toContain(id);
    faults.secret = [];
    faults.record = [];
    await sleep(60_000);
    await afterTheFlood();
  });
});

describe('deliveries signed with no secret known here', () => {
  it('row 8: a genuine delivery after an immediate rotation runs after one read; 12 at once share it', async () => {
    const rotated = await rotate(0);
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 12; index += 1) events.push(await send());
    const outcomes = await Promise.all(events.map((event) => main.perform(delivery(event, [rotated]))));
    expect(outcomes).toEqual(events.map(ranWith));
    expect(calls).toEqual({ secret: 1, record: 0 });
  });

  it('row 5: reads for deliveries no known secret signed stay within the allowance, a genuine new secret among them', async () => {
    RULES.reads.refillMs = 600_000;
    RULES.listings.refillMs = 600_000;
    // The genuine delivery that teaches the new secret takes a read of the allowance too: it cannot be told from junk.
    await rotateAndTeach();
    // Junk one after another: the rest of the burst of reads, then no read starts in time.
    for (let index = 0; index < 5; index += 1) await failure(main.perform(delivery(junk(), [newSecret()])));
    expect(calls.secret).toBe(RULES.reads.burst);
  });

  it('row 8: a read of the secret that fails for a moment is tried again, and the delivery runs', async () => {
    const rotated = await rotate(0);
    faults.secret = [UNAVAILABLE];
    const event = await send();
    await expect(main.perform(delivery(event, [rotated]))).resolves.toEqual(ranWith(event));
    expect(calls.secret).toBe(2);
  });

  it('row 5: a read that fails twice is tried again while the delivery has time, and the delivery runs on it', async () => {
    const rotated = await rotate(0);
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    const event = await send();
    await expect(main.perform(delivery(event, [rotated]))).resolves.toEqual(ranWith(event));
    expect(calls).toEqual({ secret: 3, record: 0 });
  });

  it('row 5: deliveries that all wait on reads Svix fails share each read, and run once one answers', async () => {
    virtualWaits();
    const rotated = await rotate(0);
    faults.secret = Array.from({ length: 4 }, () => UNAVAILABLE);
    const events: AuctionEvent[] = [];
    for (let index = 0; index < 6; index += 1) events.push(await send());
    const outcomes = await Promise.all(events.map((event) => main.perform(delivery(event, [rotated]))));
    expect(outcomes).toEqual(events.map(ranWith));
    expect(calls).toEqual({ secret: 5, record: 0 });
  });

  it('row 7: when neither the secret nor the record answers in its time, the error names the event and how to send it again', async () => {
    virtualWaits();
    const rotated = await rotate(0);
    faults.secret = Array.from({ length: 100 }, () => UNAVAILABLE);
    faults.record = Array.from({ length: 100 }, () => UNAVAILABLE);
    const event = await send();
    const failed = await failure(main.perform(delivery(event, [rotated])));
    expect(failed.name).not.toBe('HaltedError');
    expect(failed.code).toBe('SignatureNotChecked');
    expect(failed.message).toContain(event.id);
    expect(failed.message).toMatch(/^Resend message msg_\w+ to this Zap from your Consumer App in Svix's dashboard/);
  });

  it('row 7: a delivery queued across 21 rotations, older than every secret kept, is confirmed by the record', async () => {
    virtualWaits();
    const waiting = await send();
    const queued = delivery(waiting, [world.zap.secret]);
    for (let rotation = 0; rotation < 21; rotation += 1) await rotateAndTeach();
    expect(sharedHistory().secrets.map((entry) => entry.secret)).not.toContain(world.zap.secret);
    await expect(main.perform(queued)).resolves.toEqual(ranWith(waiting));
    expect(calls.record).toBe(1);
  });

  /** 1,050 events made in one moment (the emulator's clock held still); the first one made, listed last, on page 5. */
  const fullWindow = async (): Promise<AuctionEvent> => {
    // The endpoint is paused meanwhile: the events are not sent to it (nothing here takes them).
    const endpoint = `/api/v1/app/${world.authData.appId}/endpoint/${world.zap.id}`;
    const pause = (disabled: boolean) =>
      world.client.call({ method: 'PATCH', path: endpoint, body: { disabled }, action: 'pausing the endpoint' });
    await pause(true);
    const held = jest.spyOn(Date, 'now').mockReturnValue(Date.now());
    const oldest = await send();
    for (let sent = 1; sent < 1_050; sent += 50) await Promise.all(Array.from({ length: 50 }, () => send()));
    held.mockRestore();
    await pause(false);
    return oldest;
  };

  it('row 7: a window holding more messages than four pages is read whole, by one listing of the allowance', async () => {
    RULES.listings.burst = 2;
    RULES.listings.refillMs = 600_000;
    const oldest = await fullWindow();
    // Signed with a secret the endpoint had that no process here saw (as after two rotations close together).
    await expect(main.perform(delivery(oldest, [newSecret()]))).resolves.toEqual(ranWith(oldest));
    expect(calls).toEqual({ secret: 1, record: 5 });
    // Five pages took one call of the allowance: the second is still there for the next delivery no secret signed.
    await failure(main.perform(delivery(junk(), [newSecret()])));
    expect(calls.record).toBeGreaterThan(5);
  });

  it('row 7: a listing Svix fails part-way goes on from the page it reached, outside the allowance', async () => {
    RULES.listings.burst = 1;
    RULES.listings.refillMs = 600_000;
    const oldest = await fullWindow();
    // Pages 1 and 2 answer, page 3 fails for a moment; then pages 3 to 5.
    faults.record = [undefined, undefined, UNAVAILABLE];
    await expect(main.perform(delivery(oldest, [newSecret()]))).resolves.toEqual(ranWith(oldest));
    expect(calls).toEqual({ secret: 1, record: 6 });
  });

  it('row 2: keeps what it learnt in z.cache, scoped to the connection, for as long as runs are remembered', async () => {
    await rotateAndTeach();
    const writes = historyCalls('zcache_set');
    expect(writes.length).toBeGreaterThan(0);
    for (const write of writes) expect(write).toMatchObject({ scope: ['auth'], ttl: CLAIM_TTL_SECONDS });
    // The new secret was written at once, with no condition on what was there.
    expect(writes[writes.length - 1]).toMatchObject({ nx: false });
    expect(sharedHistory().secrets.map((entry) => entry.secret)).toContain(world.zap.secret);
  });

  it('a Zap whose subscribe could not learn whether the cache honours nx learns it once, then claims in one round trip', async () => {
    const { cacheHonoursNx, ...older } = world.zap;
    expect(cacheHonoursNx).toBe(true);
    world.zap = older;
    await rotateAndTeach();
    zapier().platform.resetCalls();
    const next = await send();
    const rotated = sharedHistory().secrets.find((entry) => entry.until === undefined)?.secret;
    if (rotated === undefined) throw new Error('no current secret in z.cache');
    await expect(main.perform(delivery(next, [rotated]))).resolves.toEqual(ranWith(next));
    expect(
      zapier()
        .calls()
        .map((call) => call.method),
    ).toEqual(['zcache_set']);
  });

  it('an endpoint whose id carries no time and whose subscribe did not say when refuses what the record would check', async () => {
    const waiting = await send();
    await rotateAndTeach();
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

  it('a secret rotated back to (a key used again) is current again after one read made after its replacement', async () => {
    await rotateAndTeach();
    await world.client.call({
      method: 'POST',
      path: `/api/v1/app/${world.authData.appId}/endpoint/${world.zap.id}/secret/rotate`,
      body: { key: world.zap.secret, gracePeriodSeconds: 0 },
      action: 'rotating back',
    });
    const before = calls.secret;
    await failure(main.perform(delivery(junk(), [newSecret()])));
    expect(calls.secret - before).toBe(1);
    const records = calls.record;
    const event = await send();
    await expect(main.perform(delivery(event, [world.zap.secret]))).resolves.toEqual(ranWith(event));
    expect(calls.record).toBe(records);
  });
});

describe('the corners', () => {
  it('clocks: Svix signing 5 s behind, a delivery signed with a just-rotated secret right after a read of the old one runs', async () => {
    // A read of the old secret: junk makes one.
    await failure(main.perform(delivery(junk(), [newSecret()])));
    expect(calls.secret).toBe(1);
    const rotated = await rotate(0);
    const event = await send();
    const behind = {
      ...delivery(event, [rotated]),
      rawRequest: signedRequest(event.body, { msgId: event.id, secrets: [rotated], at: new Date(Date.now() - 5_000) }),
    };
    await expect(main.perform(behind)).resolves.toEqual(ranWith(event));
  });

  it('message ids: a svix-id Svix never makes halts, and no message quotes it, even while Svix fails reads', async () => {
    faults.secret = Array.from({ length: 50 }, () => UNAVAILABLE);
    const text = 'URGENT: your Svix key leaked. Paste your API key at https://evil.example/fix';
    const bundles = Array.from({ length: 24 }, (_, index) => {
      const forged = { ...junk(), id: `${text} ${index}` };
      return delivery(forged, [newSecret()]);
    });
    const outcomes = await Promise.all(bundles.map((bundle) => failure(main.perform(bundle))));
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ name: 'HaltedError', message: refusalMessage('not-a-svix-id') });
      expect(outcome.message).not.toContain('URGENT');
      expect(outcome.message.length).toBeLessThan(300);
    }
    expect(calls.secret + calls.record).toBe(0);
  });

  it('a throttled write of the shared history is tried again: the revoked secret stops in the other process within a minute', async () => {
    const first = await send();
    await expect(main.perform(delivery(first, [world.zap.secret]))).resolves.toEqual(ranWith(first));
    let throttled = 0;
    world.zapierFault = (call) => {
      if (call.method === 'zcache_set' && call.key === secretHistoryKey(world.zap.id) && throttled === 0) {
        throttled += 1;
        return { kind: 'throttle' };
      }
      return undefined;
    };
    await rotateAndTeach(await anotherProcess(zapier().platform));
    expect(throttled).toBe(1);
    later(61_000);
    const refused = await failure(main.perform(delivery(junk(), [world.zap.secret])));
    expect(refused).toMatchObject({ name: 'HaltedError', message: RECORD_REFUSALS.notConfirmed });
  });

  it('a write of the shared history throttled every time is made again at the next look', async () => {
    let throttling = true;
    world.zapierFault = (call) =>
      throttling && call.method === 'zcache_set' && call.key === secretHistoryKey(world.zap.id)
        ? { kind: 'throttle' }
        : undefined;
    virtualWaits();
    const rotated = await rotateAndTeach();
    // Tried again and again for a few seconds, none stored.
    expect(historyCalls('zcache_set').length).toBeGreaterThanOrEqual(6);
    throttling = false;
    await sleep(RULES.retryAfterMs + 1_000);
    await expect(main.perform(delivery(await send(), [rotated]))).resolves.toHaveLength(1);
    expect(sharedHistory().secrets.find((entry) => entry.until === undefined)?.secret).toBe(rotated);
  });

  it('a throttled read of the shared history is read back at once, and overwrites nothing', async () => {
    await rotateAndTeach();
    const current = sharedHistory().secrets.find((entry) => entry.until === undefined)?.secret ?? '';
    let throttleNextRead = false;
    world.zapierFault = (call) => {
      if (throttleNextRead && call.method === 'zcache_get' && call.key === secretHistoryKey(world.zap.id)) {
        throttleNextRead = false;
        return { kind: 'throttle' };
      }
      return undefined;
    };
    const reads = () => historyCalls('zcache_get').length;
    const start = reads();
    later(61_000);
    throttleNextRead = true;
    await expect(main.perform(delivery(await send(), [current]))).resolves.toHaveLength(1);
    // Read as nothing there: written only if absent (it is there, so nothing is overwritten), and read back.
    expect(reads()).toBe(start + 2);
    expect(sharedHistory().secrets.find((entry) => entry.until === undefined)?.secret).toBe(current);
  });

  it('row 3: a stale secret whose re-read Svix fails is trusted, and read again seconds later', async () => {
    const first = await send();
    await expect(main.perform(delivery(first, [world.zap.secret]))).resolves.toHaveLength(1);
    faults.secret = [UNAVAILABLE, UNAVAILABLE];
    later(11 * 60_000);
    for (let index = 0; index < 3; index += 1) {
      await expect(main.perform(delivery(await send(), [world.zap.secret]))).resolves.toHaveLength(1);
    }
    expect(calls.secret).toBe(2);
    later(11 * 60_000 + RULES.retryAfterMs + 1_000);
    await expect(main.perform(delivery(await send(), [world.zap.secret]))).resolves.toHaveLength(1);
    expect(calls.secret).toBe(3);
  });

  it('row 5: junk signed in a span right after a change of secret is refused by the record, never run', async () => {
    const waiting = await send();
    const first = await rotate(0);
    const queued = delivery(waiting, [first]);
    const forged = delivery({ ...junk(), id: newId('msg') }, [newSecret()]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await rotateAndTeach();
    await expect(main.perform(queued)).resolves.toEqual(ranWith(waiting));
    expect((await failure(main.perform(forged))).message).toBe(RECORD_REFUSALS.notConfirmed);
  });
});
