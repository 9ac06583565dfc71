import fc from 'fast-check';
import { ApiModel, AuctionStatusChange, describeDecodeErrors } from '../../src/models';
import { MARKER, MARKER_NUMBER } from '../fixtures/hostileDeliveries';
import { deliver, expectPlainError, headersFor, messageId, pollutionFree, secretReread } from '../helpers/deliveries';

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
    await fc.assert(
      fc.asyncProperty(jsonish, async (payload) => {
        const body = JSON.stringify(payload) ?? 'null';
        const id = messageId();
        try {
          const result: unknown = await deliver(body, headersFor('valid', 'Http-Svix', id, body));
          expect(Array.isArray(result)).toBe(true);
          expect(AuctionStatusChange.is(payload)).toBe(true);
        } catch (error) {
          expect(expectPlainError(error).code).toBe('InvalidPayload');
        }
      }),
      { numRuns: 120 },
    );
    pollutionFree();
  });

  it('perform, given any signed text as the body, never fails with a JavaScript error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), marked), async (body) => {
        try {
          await deliver(body, headersFor('valid', 'Http-Svix', messageId(), body));
        } catch (error) {
          expect(expectPlainError(error).code).toBe('InvalidPayload');
        }
      }),
      { numRuns: 100 },
    );
  });
});
