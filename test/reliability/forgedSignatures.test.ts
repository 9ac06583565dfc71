import fc from 'fast-check';
import { messageId, secretReread, useDeliveries } from '../helpers/deliveries';

const deliver = useDeliveries();

// Hundreds of invocations through core's handler: seconds on a busy machine, not a measure.
jest.setTimeout(60_000);
import { errorDetails } from '../helpers/fixtures';

/** Generated forgeries (fast-check): perform refuses every signature not made with the endpoint's secret. */

beforeEach(secretReread);

describe('generated signatures (fast-check)', () => {
  it('perform refuses any signature header that was not made with the secret', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.base64String(), async (noise, base64) => {
        const body = JSON.stringify({ auctioneerUuid: 'a', auctionUuid: 'b', status: 'OPEN' });
        const id = messageId();
        const headers = {
          'Http-Svix-Id': id,
          'Http-Svix-Timestamp': String(Math.floor(Date.now() / 1000)),
          'Http-Svix-Signature': `${noise} v1,${base64}`,
        };
        let error: unknown;
        await deliver(body, headers).catch((caught: unknown) => {
          error = caught;
        });
        expect(errorDetails(error).name).toBe('HaltedError');
      }),
      { numRuns: 200 },
    );
  });
});
