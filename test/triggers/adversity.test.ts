import { anotherProcess } from '../helpers/platform';
import { UNAVAILABLE, useSecretWorld } from '../helpers/secretWorld';

/**
 * The three cases a review of the delivery path found at a little more
 * adversity than its soaks used, each as it was reported: a failed read of
 * the secret next to a rotation, a revoked secret after a second rotation,
 * and junk right after a rotation. The simulation (test/sim) sweeps the same
 * ground over many seeds; these name the cases.
 */

const world = useSecretWorld();

describe('a failed read of the secret next to a rotation', () => {
  it('does not stop a warm process from learning the new secret: every genuine delivery signed with it runs', async () => {
    const { send, delivery, rotate, inBatches, ranWith, faults, calls, main } = world;
    const before = await send();
    await expect(main.perform(delivery(before, [world.zap.secret]))).resolves.toEqual(ranWith(before));
    const rotated = await rotate(0);
    // The first read after the rotation fails, tried again at once or not: Svix is unavailable for a moment.
    faults.secret.push(UNAVAILABLE, UNAVAILABLE);
    // And Svix's record fails for a while: whatever waits on it instead of a read fails with it.
    faults.record.push(...Array.from({ length: 8 }, () => UNAVAILABLE));
    const events = await Promise.all(Array.from({ length: 12 }, () => send()));
    const outcomes = await inBatches(
      events.map((event) => delivery(event, [rotated])),
      6,
    );
    expect(outcomes).toEqual(events.map((event) => ({ items: ranWith(event) })));
    // The failed read, and the one after it that learnt the secret for all twelve.
    expect(calls.secret).toBeLessThanOrEqual(4);
  });
});

describe('a revoked secret after a second rotation', () => {
  it('is refused by a warm process once a cold one has seen the newest secret, a minute later at most', async () => {
    const { send, delivery, rotate, ranWith, junk, rotateAndTeach, zapier, main } = world;
    // Two processes both learn the first new secret.
    const second = await anotherProcess(zapier().platform);
    const first = await rotateAndTeach(main);
    await rotateAndTeach(second);
    // The first new secret leaks: rotated again at once. A cold process meets the newest one first.
    const newest = await rotate(0);
    const cold = await anotherProcess(zapier().platform);
    const event = await send();
    await expect(cold.perform(delivery(event, [newest]))).resolves.toEqual(ranWith(event));
    // A minute later, a forgery signed with the revoked secret reaches the warm process.
    world.later(61_000);
    const forged = junk();
    const outcome = main.perform(delivery(forged, [first]));
    await expect(outcome).rejects.toMatchObject({ name: 'HaltedError' });
  });
});

describe('junk right after a rotation', () => {
  it('costs no more Svix calls than the allowance, even when it claims the second the new secret first signed', async () => {
    const { send, delivery, rotate, ranWith, junk, inBatches, calls, main } = world;
    const elapsed = world.virtualWaits();
    const rotated = await rotate(0);
    // A genuine delivery signed with the new secret: this process learns it, and the second it first signed.
    const taught = await send();
    await expect(main.perform(delivery(taught, [rotated]))).resolves.toEqual(ranWith(taught));
    const before = calls.secret + calls.record;
    // Forty junk deliveries signed in that same second with secrets nobody has, eight at a time.
    const outcomes = await inBatches(
      Array.from({ length: 40 }, () => delivery(junk(), [`whsec_${Buffer.alloc(24, 7).toString('base64')}`])),
      8,
    );
    expect(outcomes.every((outcome) => outcome.error === 'HaltedError')).toBe(true);
    const cost = calls.secret + calls.record - before;
    // The allowance: 3 reads and 5 listings at once, and one of each every 2 seconds after.
    expect(cost).toBeLessThanOrEqual(8 + Math.floor(elapsed() / 1_000));
    expect(cost).toBeLessThan(40);
  });
});
