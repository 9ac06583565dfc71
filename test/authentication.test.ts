import nock from 'nock';
import { createAppTester } from 'zapier-platform-core';
import app from '../src';
import { authentication, testConnection } from '../src/authentication';
import { API_KEY, APP_ID, EU_API_KEY, PROVIDER, authData, failure } from './helpers/fixtures';

const appTester = createAppTester(app);
const test = testConnection;

const application = {
  id: APP_ID,
  name: 'Acme Auctions',
  uid: null,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  metadata: {},
};

describe('authentication', () => {
  it('has exactly the three documented fields', () => {
    expect(authentication.fields.map((field) => [field.key, field.type, field.required])).toEqual([
      ['apiKey', 'password', true],
      ['appId', 'string', true],
      ['serverUrl', 'string', false],
    ]);
    expect(authentication.fields.map((field) => field.label)).toEqual([
      'Integration Key or API Access Key',
      'Consumer App ID',
      'Server URL',
    ]);
  });

  it('reads the Consumer App with the bearer key and JSON headers, and returns its id and name', async () => {
    const scope = nock(PROVIDER, {
      reqheaders: {
        authorization: `Bearer ${API_KEY}`,
        accept: 'application/json',
        'content-type': 'application/json',
      },
    })
      .get(`/api/v1/app/${APP_ID}`)
      .reply(200, application);
    await expect(appTester(test, { authData })).resolves.toEqual({ id: APP_ID, name: 'Acme Auctions' });
    scope.done();
  });

  it('labels the connection with the app name and id, and no secret', () => {
    expect(authentication.connectionLabel).toBe('{{bundle.inputData.name}} ({{bundle.inputData.id}})');
    expect(authentication.connectionLabel).not.toMatch(/apiKey|authData/);
  });

  it('uses the regional server named by the key suffix', async () => {
    const scope = nock('https://api.eu.svix.com').get(`/api/v1/app/${APP_ID}`).reply(200, application);
    await appTester(test, { authData: { apiKey: EU_API_KEY, appId: APP_ID } });
    scope.done();
  });

  it('lets an explicit server URL win over the region', async () => {
    const scope = nock('https://webhooks.example.test').get(`/api/v1/app/${APP_ID}`).reply(200, application);
    await appTester(test, {
      authData: { apiKey: EU_API_KEY, appId: APP_ID, serverUrl: 'https://webhooks.example.test/' },
    });
    scope.done();
  });

  it('allows plain http only on a loopback host', async () => {
    const scope = nock('http://127.0.0.1:8071').get(`/api/v1/app/${APP_ID}`).reply(200, application);
    await appTester(test, { authData: { ...authData, serverUrl: 'http://127.0.0.1:8071' } });
    scope.done();
    const refused = await failure(appTester(test, { authData: { ...authData, serverUrl: 'http://api.svix.com' } }));
    expect(refused.message).toMatch(/must start with https:\/\//);
    expect(nock.pendingMocks()).toEqual([]);
  });

  it.each(['', 'app', 'ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9', 'app_short', 'app_../../event-type', `${APP_ID} `.repeat(2)])(
    'refuses the malformed app id %j before any request',
    async (appId) => {
      // Any request would fail the test: the network is closed and nothing is mocked.
      const refused = await failure(appTester(test, { authData: { apiKey: API_KEY, appId } }));
      expect(refused.message).toMatch(/must start with app_/);
    },
  );

  it('says to reconnect with a valid key when the key is rejected, never echoing it', async () => {
    nock(PROVIDER)
      .get(`/api/v1/app/${APP_ID}`)
      .reply(401, { code: 'authentication_failed', detail: `bad key ${API_KEY}` });
    const refused = await failure(appTester(test, { authData }));
    expect(refused.message).toMatch(/Reconnect the account in Zapier with a current key/);
    expect(refused.message).not.toContain(API_KEY);
    expect(refused.name).toBe('ExpiredAuthError');
  });

  it('names the app id and says to check the account and region when the app is unknown', async () => {
    nock(PROVIDER).get(`/api/v1/app/${APP_ID}`).reply(404, { code: 'not_found', detail: 'Entity not found' });
    const refused = await failure(appTester(test, { authData }));
    expect(refused.message).toContain(APP_ID);
    expect(refused.message).toMatch(/same Svix account, the same environment .* and the same region/);
  });

  it('gives every auth field help text; the key and app id link to where they are found', () => {
    for (const field of authentication.fields) expect(field.helpText.length).toBeGreaterThan(20);
    const [key, appId] = authentication.fields;
    expect(key?.helpText).toMatch(/\(https:\/\/[^)]+\)/);
    expect(appId?.helpText).toMatch(/\(https:\/\/[^)]+\)/);
  });
});
