import { HOSTILE_DELIVERIES, type HostileDelivery } from '../fixtures/hostileDeliveries';
import {
  expectPlainError,
  headersFor,
  messageId,
  pollutionFree,
  secretReread,
  useDeliveries,
} from '../helpers/deliveries';

const deliver = useDeliveries();

// Hundreds of invocations through core's handler: seconds on a busy machine, not a measure.
jest.setTimeout(60_000);

/**
 * The bad-input corpus (test/fixtures/hostileDeliveries.ts) through perform.
 * Each delivery gets a clear error or is dropped by design; none gets a
 * JavaScript error, a stack trace, an echoed payload value or a polluted
 * prototype. Generated inputs are in hostileProperties.test.ts.
 */

beforeEach(secretReread);

afterAll(pollutionFree);

describe('the bad-input corpus', () => {
  it('has at least 200 deliveries, each named once', () => {
    expect(HOSTILE_DELIVERIES.length).toBeGreaterThanOrEqual(200);
    expect(new Set(HOSTILE_DELIVERIES.map((delivery) => delivery.name)).size).toBe(HOSTILE_DELIVERIES.length);
  });

  it.each(HOSTILE_DELIVERIES.map((delivery): [string, HostileDelivery] => [delivery.name, delivery]))(
    '%s',
    async (_name, delivery) => {
      const id = messageId();
      const headers = headersFor(delivery.signing, delivery.headerPrefix, id, delivery.body);
      let result: unknown;
      let error: unknown;
      try {
        result = await deliver(delivery.body, headers);
      } catch (caught) {
        error = caught ?? new Error('thrown without a value');
      }
      const { expect: expectation } = delivery;
      if (expectation.outcome === 'runs') {
        expect(error).toBeUndefined();
        expect(Array.isArray(result)).toBe(true);
        expect(result).toHaveLength(1);
        if (expectation.fields) expect(result).toEqual([expect.objectContaining({ ...expectation.fields, id })]);
        if (expectation.extras) expect(result).toEqual([expect.objectContaining(expectation.extras)]);
      } else {
        if (error === undefined) throw new Error('perform accepted a delivery it should not have');
        const details = expectPlainError(error);
        if (expectation.outcome === 'refused') expect(details.name).toBe('HaltedError');
        else {
          expect(details.code).toBe('InvalidPayload');
          for (const name of expectation.names ?? []) expect(details.message).toContain(name);
        }
      }
      pollutionFree();
    },
  );
});
