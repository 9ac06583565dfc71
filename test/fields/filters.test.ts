import { readFilters } from '../../src/fields/filters';
import { authData, failure, payload, signedRequest, subscription } from '../helpers/fixtures';
import { usePlatform } from '../helpers/platform';

/** The trigger's filters fail closed: a field that cannot be read stops the run, naming it. */

const zapier = usePlatform();
const deliver = (inputData: unknown) =>
  zapier().perform({
    authData,
    subscribeData: subscription,
    rawRequest: signedRequest(JSON.stringify(payload)),
    inputData,
  });

describe('the filters', () => {
  it.each([
    ['Only These Statuses', { statuses: 42 }],
    ['Only These Statuses', { statuses: { OPEN: true } }],
    ['Only These Statuses', { statuses: ['OPEN_FOR_BIDDING', 7] }],
    ['Only This Auctioneer', { auctioneerUuid: ['a', 'b'] }],
    ['Only This Auctioneer', { auctioneerUuid: 12 }],
    ['Skip Outdated Events', { skipOutdated: 'sometimes' }],
  ])(
    'stop the run, naming "%s", when it cannot be read (%j), rather than run for every event',
    async (label, input) => {
      const refused = await failure(deliver(input));
      expect(refused.code).toBe('InvalidFilter');
      expect(refused.message).toContain(`Open the Zap, set "${label}" again`);
      expect(refused.message).not.toMatch(/npm|terminal/);
      // Nothing was claimed: fixing the field later still runs this event.
      expect(
        zapier()
          .calls()
          .filter((call) => call.key.startsWith('seen:')),
      ).toEqual([]);
    },
  );

  it('stop Test trigger the same way', async () => {
    const refused = await failure(zapier().performList({ authData, inputData: { statuses: 42 } }));
    expect(refused.code).toBe('InvalidFilter');
  });

  it.each([
    [{}, 1],
    [{ statuses: null, auctioneerUuid: null, skipOutdated: null }, 1],
    [{ statuses: '', auctioneerUuid: '' }, 1],
    [{ statuses: 'closed, open_for_bidding' }, 1],
    [{ statuses: ['CLOSED', null, ''] }, 0],
  ])('read what the Zap editor stores (%j)', async (input, runs) => {
    await expect(deliver(input)).resolves.toHaveLength(runs);
  });

  it('reads the statuses, the auctioneer and the yes/no field', () => {
    expect(
      readFilters({ statuses: ['Open For Bidding', 'lots-sold'], auctioneerUuid: ' ABC ', skipOutdated: 'Yes' }),
    ).toEqual({
      ok: true,
      filters: {
        ...{ statuses: new Set(['open_for_bidding', 'lots_sold']), auctioneerUuid: 'abc' },
        ...{ skipOutdated: true, catchUp: false, showSkipped: false },
      },
    });
    expect(readFilters(undefined)).toEqual({
      ok: true,
      filters: { statuses: new Set(), skipOutdated: false, catchUp: false, showSkipped: false },
    });
    expect(readFilters({ catchUp: 'yes' })).toEqual({
      ok: true,
      filters: { statuses: new Set(), skipOutdated: false, catchUp: true, showSkipped: false },
    });
    expect(readFilters({ catchUp: 'perhaps' })).toEqual({ ok: false, field: 'catchUp' });
  });
});
