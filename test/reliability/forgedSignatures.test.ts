import fc from 'fast-check';
import { errors } from 'zapier-platform-core';
import type { Io } from '../../src/zapier/io';
import { newId } from '../../src/tools/sandbox/emulator/store';
import { operationsFor } from '../../src/triggers/auctionStatusChanged';
import { messageId } from '../helpers/deliveries';
import { authData, errorDetails, SECRET, subscription } from '../helpers/fixtures';
import { virtualRuntime } from '../helpers/clock';

/**
 * Generated forgeries (fast-check): perform refuses every signature not made with the endpoint's secret. The
 * delivery path alone, on ports in memory (core's errors; Svix shows the secret and has no such message): hundreds of
 * forgeries take well under a second. The same path through core's handler is covered in test/triggers.
 */

const io: Io = {
  send: async ({ url }) =>
    url.endsWith('/secret')
      ? { status: 200, content: JSON.stringify({ key: SECRET }) }
      : { status: 404, content: JSON.stringify({ code: 'not_found', detail: 'Entity not found' }) },
  cache: { get: async () => undefined, set: async () => true },
  errors,
  log: () => undefined,
};
const { deliver } = operationsFor(virtualRuntime());

describe('generated signatures (fast-check)', () => {
  it('perform refuses any signature header that was not made with the secret', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.base64String(), async (noise, base64) => {
        const body = JSON.stringify({ auctioneerUuid: 'a', auctionUuid: 'b', status: 'OPEN' });
        const headers = {
          'Http-Svix-Id': messageId(),
          'Http-Svix-Timestamp': String(Math.floor(Date.now() / 1000)),
          'Http-Svix-Signature': `${noise} v1,${base64}`,
        };
        // Each forgery comes to a Zap of its own (made an hour ago), so none waits behind the others' allowance.
        const subscribeData = { ...subscription, id: newId('ep', Date.now() - 3_600_000) };
        let error: unknown;
        await Promise.resolve()
          .then(() => deliver(io, { authData, subscribeData, rawRequest: { content: body, headers }, inputData: {} }))
          .catch((caught: unknown) => (error = caught));
        expect(errorDetails(error).name).toBe('HaltedError');
      }),
      { numRuns: 500 },
    );
  });
});
