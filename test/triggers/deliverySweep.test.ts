import nock from 'nock';
import { SWEEP_EVERY_MS, SWEEP_PARKED_AFTER_MS } from '../../src/limits';
import {
  APP_ID,
  PROVIDER,
  SECRET,
  authData,
  messageIdAt,
  payload,
  signedRequest,
  subscription,
} from '../helpers/fixtures';
import { usePlatform } from '../helpers/platform';

/**
 * Deliveries sweep the Consumer App now and then (#59.6): a Zap turned off and deleted leaves no endpoint failing on
 * purpose once another Zap's deliveries run on. A process sweeps ten minutes after its first delivery there, and
 * every ten after, so a cold process's delivery never waits for it.
 */

const zapier = usePlatform();
const body = JSON.stringify(payload);
const deliver = (msgId: string) =>
  zapier().perform({
    ...{ authData, subscribeData: { ...subscription, checkedAt: zapier().clock.now() } },
    ...{ rawRequest: signedRequest(body, { msgId }), inputData: {} },
  });
const parkedLongAgo = {
  ...{ id: 'ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Gone', uid: 'zapier-zap-0123', url: 'https://parked.invalid/zapier/0' },
  metadata: { zap: 'zap-gone', gen: '2', on: '1', parked: String(Date.now() - SWEEP_PARKED_AFTER_MS - 60_000) },
};

it("sweeps from a delivery ten minutes after the process's first there, not before, and runs the event", async () => {
  const listing = () =>
    nock(PROVIDER)
      .get(`/api/v1/app/${APP_ID}/endpoint`)
      .query(true)
      .reply(200, { data: [parkedLongAgo], done: true, iterator: null });
  const early = listing();
  await expect(deliver(messageIdAt(zapier().clock.now()))).resolves.toHaveLength(1);
  expect(early.isDone()).toBe(false);
  nock.cleanAll();

  zapier().clock.advance(SWEEP_EVERY_MS + 1_000);
  const swept = listing().delete(`/api/v1/app/${APP_ID}/endpoint/${parkedLongAgo.id}`).reply(204);
  // The machine may read the secret again after ten minutes: Svix answers the one the Zap has.
  nock(PROVIDER)
    .get(/\/secret$/)
    .optionally()
    .reply(200, { key: SECRET });
  await expect(deliver(messageIdAt(zapier().clock.now()))).resolves.toHaveLength(1);
  swept.done();
});
