import { errors } from 'zapier-platform-core';
import { SWEEP_PARKED_AFTER_MS } from '../../src/limits';
import { callerOf } from '../../src/svix/client';
import { sweep } from '../../src/zap/life';
import { zapUidOf } from '../../src/zap/policy';
import { clockOf } from '../../src/zapier/clock';
import type { Io } from '../../src/zapier/io';
import { APP_ID, ENDPOINT_ID, authData } from '../helpers/fixtures';

/**
 * A sweep reads a Zap's marks in z.cache twice where the first read finds none: Zapier's cache answers a throttled
 * read as it answers an absent key, and a mark missed leaves live an endpoint whose Zap is off (the simulation's
 * no-zap-named seed 601 found one so).
 */

const NOW = 1_800_000_000_000;
const UID = zapUidOf('zap-under-test');
/** A Zap's endpoint still live (Svix failed its park), its Zap marked off past the grace. */
const endpoint = {
  ...{
    id: ENDPOINT_ID,
    uid: UID,
    url: 'https://hooks.zapier.com/hooks/standard/1/',
    eventTypes: ['AUCTION_STATUS_CHANGE'],
  },
  ...{ disabled: false, throttleRate: 25, metadata: { zap: 'zap-under-test', gen: '1', on: String(NOW - 3_600_000) } },
  ...{ description: 'Zapier', createdAt: '2026-11-22T10:00:00Z', updatedAt: '2026-11-22T10:00:00Z' },
};
const offMark = { id: ENDPOINT_ID, gen: 1, at: NOW - SWEEP_PARKED_AFTER_MS - 1_000 };

const sweepWith = async (offReads: unknown[]) => {
  const calls: string[] = [];
  const io: Io = {
    send: async ({ method = 'GET', url }) => {
      calls.push(`${method} ${new URL(url).pathname}`);
      if (method === 'GET') return { status: 200, content: JSON.stringify({ data: [endpoint], done: true }) };
      return { status: method === 'DELETE' ? 204 : 200, content: method === 'DELETE' ? '' : JSON.stringify(endpoint) };
    },
    cache: {
      get: async (key) => (key === `zap-off:${APP_ID}:${UID}` ? offReads.shift() : null),
      set: async () => true,
    },
    ...{ errors, log: () => undefined },
  };
  const clock = clockOf<NodeJS.Timeout>({ now: () => NOW, setTimeout, clearTimeout });
  await sweep(
    callerOf(io, { authData }, 'zap-editor', NOW, () => NOW),
    clock,
  );
  return calls;
};

describe("a sweep's reading of a Zap's marks", () => {
  it('removes the endpoint of a Zap marked off, its mark found on the second read after a throttled first', async () => {
    const calls = await sweepWith([null, offMark]);
    expect(calls).toContain(`DELETE /api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}`);
  });

  it('leaves it where neither read finds a mark (the Zap may be on)', async () => {
    const calls = await sweepWith([null, null]);
    expect(calls.filter((call) => call.startsWith('DELETE'))).toEqual([]);
  });
});
