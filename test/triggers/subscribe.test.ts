import nock from 'nock';
import { createAppTester } from 'zapier-platform-core';
import app from '../../src';
import { auctionStatusChangeEventType } from '../../src/provider/eventType';
import {
  ENDPOINT_DESCRIPTION,
  auctionStatusChangedOperations,
  endpointUid,
} from '../../src/triggers/auctionStatusChanged';
import { APP_ID, ENDPOINT_ID, PROVIDER, SECRET, TARGET_URL, authData, failure } from '../helpers/fixtures';

const appTester = createAppTester(app);
const subscribe = auctionStatusChangedOperations.performSubscribe;
const unsubscribe = auctionStatusChangedOperations.performUnsubscribe;

const endpointOut = {
  id: ENDPOINT_ID,
  url: TARGET_URL,
  uid: endpointUid(TARGET_URL),
  description: ENDPOINT_DESCRIPTION,
  eventTypes: ['AUCTION_STATUS_CHANGE'],
  disabled: false,
  metadata: {},
  createdAt: '2026-11-22T10:00:00Z',
  updatedAt: '2026-11-22T10:00:00Z',
};
const eventTypeOut = {
  ...auctionStatusChangeEventType,
  deprecated: false,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
};
const expectedEndpointBody = {
  url: TARGET_URL,
  uid: endpointUid(TARGET_URL),
  description: ENDPOINT_DESCRIPTION,
  eventTypes: ['AUCTION_STATUS_CHANGE'],
};

describe('performSubscribe', () => {
  it('checks the event type, creates one endpoint for the target URL and returns its id and secret', async () => {
    const scope = nock(PROVIDER)
      .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
      .reply(200, eventTypeOut)
      .post(`/api/v1/app/${APP_ID}/endpoint`, expectedEndpointBody)
      .reply(201, endpointOut)
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .reply(200, { key: SECRET });
    await expect(appTester(subscribe, { authData, targetUrl: TARGET_URL })).resolves.toEqual({
      id: ENDPOINT_ID,
      secret: SECRET,
    });
    scope.done();
  });

  it('registers the event type exactly as the published interface gives it when it is missing', async () => {
    const scope = nock(PROVIDER)
      .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
      .reply(404, { code: 'not_found', detail: 'Entity not found' })
      .post('/api/v1/event-type', {
        name: 'AUCTION_STATUS_CHANGE',
        description: auctionStatusChangeEventType.description,
        archived: false,
        schemas: {
          '1': {
            description: auctionStatusChangeEventType.schemas['1'].description,
            title: 'Auction Status Change',
            type: 'object',
            properties: {
              auctioneerUuid: { type: 'string', description: 'UUID of the auctioneer the auction belongs to.' },
              auctionUuid: { type: 'string', description: 'UUID of the auction.' },
              status: { type: 'string', description: "The auction's new status (its registration status)." },
            },
            required: ['auctionUuid', 'auctioneerUuid', 'status'],
          },
        },
      })
      .reply(201, eventTypeOut)
      .post(`/api/v1/app/${APP_ID}/endpoint`, expectedEndpointBody)
      .reply(201, endpointOut)
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .reply(200, { key: SECRET });
    await appTester(subscribe, { authData, targetUrl: TARGET_URL });
    scope.done();
  });

  it.each([
    ['reading', 403, 'get'],
    ['registering', 403, 'post'],
  ])('goes on when the key may not manage event types (403 while %s)', async (_what, status, failingStep) => {
    const scope = nock(PROVIDER);
    if (failingStep === 'get') {
      scope.get('/api/v1/event-type/AUCTION_STATUS_CHANGE').reply(status, { code: 'forbidden', detail: 'no' });
    } else {
      scope
        .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
        .reply(404, { code: 'not_found', detail: 'x' })
        .post('/api/v1/event-type')
        .reply(status, { code: 'forbidden', detail: 'no' });
    }
    scope
      .post(`/api/v1/app/${APP_ID}/endpoint`, expectedEndpointBody)
      .reply(201, endpointOut)
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .reply(200, { key: SECRET });
    await expect(appTester(subscribe, { authData, targetUrl: TARGET_URL })).resolves.toEqual({
      id: ENDPOINT_ID,
      secret: SECRET,
    });
    scope.done();
  });

  it('reuses the endpoint of an earlier attempt when Zapier retries the subscribe (409 on the stable uid)', async () => {
    const uid = endpointUid(TARGET_URL);
    const scope = nock(PROVIDER)
      .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
      .reply(200, eventTypeOut)
      .post(`/api/v1/app/${APP_ID}/endpoint`, expectedEndpointBody)
      .reply(409, { code: 'conflict', detail: 'An endpoint with this uid already exists' })
      .get(`/api/v1/app/${APP_ID}/endpoint/${uid}`)
      .reply(200, endpointOut)
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .reply(200, { key: SECRET });
    await expect(appTester(subscribe, { authData, targetUrl: TARGET_URL })).resolves.toEqual({
      id: ENDPOINT_ID,
      secret: SECRET,
    });
    scope.done();
  });

  it('derives the same uid for the same target URL and another for another', () => {
    expect(endpointUid(TARGET_URL)).toBe(endpointUid(TARGET_URL));
    expect(endpointUid(TARGET_URL)).not.toBe(endpointUid(`${TARGET_URL}x`));
    expect(endpointUid(TARGET_URL)).toMatch(/^[a-zA-Z0-9\-_.]{1,256}$/);
  });

  it('explains that the event type must be registered when the endpoint is refused with 422', async () => {
    nock(PROVIDER)
      .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
      .reply(403, { code: 'forbidden', detail: 'no' })
      .post(`/api/v1/app/${APP_ID}/endpoint`)
      .reply(422, { detail: [{ loc: ['body', 'eventTypes'], msg: 'Unknown event type', type: 'value_error' }] });
    const refused = await failure(appTester(subscribe, { authData, targetUrl: TARGET_URL }));
    expect(refused.message).toMatch(/AUCTION_STATUS_CHANGE event type is not registered/);
  });
});

describe('performUnsubscribe', () => {
  const stored = { id: ENDPOINT_ID, secret: SECRET };
  const damaged = { id: '../../app', secret: SECRET };

  it('deletes the endpoint the subscribe created', async () => {
    const scope = nock(PROVIDER).delete(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}`).reply(204);
    await expect(appTester(unsubscribe, { authData, targetUrl: TARGET_URL, subscribeData: stored })).resolves.toEqual({
      removed: true,
    });
    scope.done();
  });

  it('succeeds when the endpoint is already gone (404)', async () => {
    const scope = nock(PROVIDER)
      .delete(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}`)
      .reply(404, { code: 'not_found', detail: 'Entity not found' });
    await expect(appTester(unsubscribe, { authData, subscribeData: stored })).resolves.toEqual({ removed: false });
    scope.done();
  });

  it('falls back to the uid of the target URL when the stored id is missing or malformed', async () => {
    const scope = nock(PROVIDER)
      .delete(`/api/v1/app/${APP_ID}/endpoint/${endpointUid(TARGET_URL)}`)
      .reply(204);
    await appTester(unsubscribe, { authData, targetUrl: TARGET_URL, subscribeData: damaged });
    scope.done();
  });

  it('says to reconnect when the key was revoked after the Zap was turned on', async () => {
    nock(PROVIDER)
      .delete(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}`)
      .reply(401, { code: 'authentication_failed', detail: 'Invalid token' });
    const refused = await failure(appTester(unsubscribe, { authData, subscribeData: stored }));
    expect(refused.message).toMatch(/Reconnect with a valid API Access Key/);
  });
});
