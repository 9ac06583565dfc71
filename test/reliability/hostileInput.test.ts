import { HOSTILE_DELIVERIES, type HostileDelivery } from '../fixtures/hostileDeliveries';
import {
  expectPlainError,
  headersFor,
  headersSignedAt,
  messageId,
  pollutionFree,
  secretReread,
  useDeliveries,
} from '../helpers/deliveries';
import { failure, messageIdAt, payload } from '../helpers/fixtures';
import { SIGNING_WINDOW } from '../../src/delivery/claim';

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

/**
 * The edges of the signing window, to the second. Date.now() is frozen, so the
 * delivery is signed at the very second perform checks against however long
 * the machine pauses in between; the corpus above keeps its cases many minutes
 * from either edge for the same reason.
 */
describe('the signing window, on a frozen clock', () => {
  const body = JSON.stringify(payload);
  const ahead = SIGNING_WINDOW.maxAheadSeconds;
  const ago = SIGNING_WINDOW.maxAgeSeconds;

  beforeEach(() => {
    // On a whole second, as signing times are, so "exactly" is exact.
    const frozen = Math.floor(Date.now() / 1000) * 1000;
    jest.spyOn(Date, 'now').mockReturnValue(frozen);
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('is five minutes ahead and seven days and five minutes back', () => {
    expect(ahead).toBe(5 * 60);
    expect(ago).toBe(7 * 86_400 + 5 * 60);
  });

  it.each([
    ['signed exactly five minutes ahead', ahead, undefined],
    ['signed five minutes and a second ahead', ahead + 1, /more than 5 minutes in the future/],
    ['signed exactly at the far edge of the window', -ago, undefined],
    ['signed a second before the window', -ago - 1, /sent over 7 days ago/],
  ] as const)('%s (%i s)', async (_name, deltaSeconds, refusal) => {
    for (const prefix of ['Http-Svix', 'Http-Webhook']) {
      // A message made when it was signed: the event's own time is at the edge too.
      const id = messageIdAt(Date.now() + Math.min(0, deltaSeconds) * 1000);
      const delivered = deliver(body, headersSignedAt(deltaSeconds, prefix, id, body));
      if (refusal === undefined) await expect(delivered).resolves.toHaveLength(1);
      else {
        const refused = await failure(delivered);
        expect(refused.name).toBe('HaltedError');
        expect(refused.message).toMatch(refusal);
      }
    }
  });
});
