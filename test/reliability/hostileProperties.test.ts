import fc from 'fast-check';
import { ApiModel, AuctionStatusChange, describeDecodeErrors } from '../../src/models';
import { MARKER, MARKER_NUMBER } from '../fixtures/hostileDeliveries';
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
 * Generated input (fast-check) through the codecs and perform. Each test file
 * stays under 250 invocations of the app: zapier-platform-core keeps every
 * invocation's bundle in memory and stops a process past 250 invocations and
 * 450 MB of memory, here as on the platform (jest gives each file a fresh worker).
 */

beforeEach(secretReread);

afterAll(pollutionFree);

describe('generated input (fast-check)', () => {
  /** Marked text: any text a payload may carry, prefixed so an echo can be seen. */
  const marked = fc.string().map((text) => `${MARKER}${text}`);
  const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      marked,
      fc.constant(MARKER_NUMBER),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(
        fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'status', 'auctionUuid')),
        tie('value'),
        {
          maxKeys: 3,
        },
      ),
    ),
  })).value;

  it('the event codec never throws, accepts exactly three non-empty texts, and never echoes a value', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          jsonish,
          fc.record(
            {
              auctioneerUuid: fc.oneof(marked, jsonish),
              auctionUuid: fc.oneof(marked, jsonish),
              status: fc.oneof(marked, jsonish),
            },
            { requiredKeys: [] },
          ),
        ),
        (input) => {
          const decoded = AuctionStatusChange.decode(input);
          const fieldsValid =
            typeof input === 'object' &&
            input !== null &&
            !Array.isArray(input) &&
            ['auctioneerUuid', 'auctionUuid', 'status'].every((field) => {
              const value: unknown = Reflect.get(input, field);
              return typeof value === 'string' && value.length > 0;
            });
          expect(decoded._tag === 'Right').toBe(fieldsValid);
          if (decoded._tag === 'Left') {
            for (const line of describeDecodeErrors(decoded.left)) {
              expect(line).not.toContain(MARKER);
              expect(line).not.toContain(String(MARKER_NUMBER));
            }
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('the published models never throw on any input, and their errors never echo a value', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          jsonish,
          fc.record(
            {
              '@class': fc.constantFrom(
                'com.vendor.scaffold.models.auctionapi.AuctioneerApiModel',
                'com.vendor.scaffold.models.auctionapi.UrlAttachmentApiModel',
                'com.vendor.scaffold.models.address.AddressModel',
                'com.vendor.scaffold.models.address.CountryModel',
                'com.vendor.scaffold.models.reference.CurrencyModel',
              ),
              id: jsonish,
              name: jsonish,
              code: jsonish,
              url: jsonish,
              countryCode: jsonish,
            },
            { requiredKeys: ['@class'] },
          ),
        ),
        (input) => {
          const decoded = ApiModel.decode(input);
          if (decoded._tag === 'Left') {
            for (const line of describeDecodeErrors(decoded.left)) expect(line).not.toContain(MARKER);
          }
        },
      ),
      { numRuns: 1_000 },
    );
    pollutionFree();
  });

  it('perform, given any signed JSON payload, runs it or names the problem, never a value', async () => {
    // Payloads that keep the published contract (with anything else beside it), and payloads that do not.
    const contract = fc.record({ auctioneerUuid: marked, auctionUuid: marked, status: marked });
    const kept = fc.tuple(contract, fc.dictionary(fc.string(), jsonish, { maxKeys: 3 })).map(([fields, extra]) => ({
      ...extra,
      ...fields,
    }));
    let ran = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(kept, jsonish), async (payload) => {
        const body = JSON.stringify(payload) ?? 'null';
        const id = messageId();
        const outcome = await deliver(body, headersFor('valid', 'Http-Svix', id, body)).then(
          (result: unknown) => ({ result }),
          (error: unknown) => ({ error }),
        );
        const keepsContract = typeof payload === 'object' && payload !== null && AuctionStatusChange.is(payload);
        if (keepsContract) {
          ran += 1;
          expect(outcome).toEqual({
            result: [
              expect.objectContaining({
                id,
                auctioneerUuid: Reflect.get(payload, 'auctioneerUuid'),
                auctionUuid: Reflect.get(payload, 'auctionUuid'),
                status: Reflect.get(payload, 'status'),
              }),
            ],
          });
        } else {
          refused += 1;
          expect('error' in outcome).toBe(true);
          expect(expectPlainError('error' in outcome ? outcome.error : undefined).code).toBe('InvalidPayload');
        }
      }),
      { numRuns: 120 },
    );
    // Both kinds were generated, so both branches were checked.
    expect(ran).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(20);
    pollutionFree();
  });

  it('perform, given any signed text as the body, never fails with a JavaScript error', async () => {
    let invalid = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), marked), async (body) => {
        const outcome = await deliver(body, headersFor('valid', 'Http-Svix', messageId(), body)).then(
          (result: unknown) => ({ result }),
          (error: unknown) => ({ error }),
        );
        // Text that happens to be a valid event may run; anything else is a plain InvalidPayload error.
        if ('error' in outcome) {
          invalid += 1;
          expect(expectPlainError(outcome.error).code).toBe('InvalidPayload');
        } else {
          expect(Array.isArray(outcome.result)).toBe(true);
        }
      }),
      { numRuns: 100 },
    );
    expect(invalid).toBeGreaterThan(50);
  });
});
