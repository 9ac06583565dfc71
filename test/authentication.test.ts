import nock from 'nock';
import { createAppTester } from 'zapier-platform-core';
import app from '../src';
import { authentication, connectionLabelOf, testConnection } from '../src/authentication';
import { endpointDescription, EVENT_TYPE_ARCHIVED } from '../src/zap/endpoint';
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
/** What the connection test labels it. */
const label = `Acme Auctions (app_…${APP_ID.slice(-4)})`;

/**
 * What a key that may do all a Zap needs answers to the connection test's checks: each a read that changes nothing.
 * `eventType` 'archived': Svix reads an archived type back with 200 and archived: true.
 */
const mayDoAll = (scope: nock.Scope, eventType: 200 | 404 | 'archived' = 200, endpoints: object[] = []): nock.Scope =>
  scope
    .get(`/api/v1/app/${APP_ID}/endpoint`)
    .query({ limit: '250' })
    .reply(200, { data: endpoints, done: true, iterator: null })
    .get(`/api/v1/app/${APP_ID}/msg`)
    .query({ limit: '1', event_types: 'AUCTION_STATUS_CHANGE' })
    .reply(200, { data: [], done: true, iterator: null })
    .get('/api/v1/event-type/AUCTION_STATUS_CHANGE')
    .reply(
      eventType === 404 ? 404 : 200,
      eventType === 404
        ? { code: 'not_found', detail: 'x' }
        : { name: 'AUCTION_STATUS_CHANGE', archived: eventType === 'archived' },
    );

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
    mayDoAll(scope);
    await expect(appTester(test, { authData })).resolves.toEqual({
      id: APP_ID,
      name: 'Acme Auctions',
      label: `Acme Auctions (app_…${APP_ID.slice(-4)})`,
    });
    scope.done();
  });

  it('labels the connection shortly, by the Consumer App name and the end of its ID, never the whole ID or a secret', () => {
    expect(authentication.connectionLabel).toBe('{{bundle.inputData.label}}');
    expect(authentication.connectionLabel).not.toMatch(/apiKey|authData/);
    const production = connectionLabelOf({ id: 'app_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9', name: 'Auction Status Webhooks' });
    const development = connectionLabelOf({ id: 'app_3Mg29tDpakOvVO95XDtoLmkorBT', name: 'Auction Status Webhooks' });
    // Two auction houses, or two environments, that kept the set-up's default name still read apart.
    expect(production).toBe('Auction Status Webhooks (app_…7Hi9)');
    expect(development).toBe('Auction Status Webhooks (app_…orBT)');
    for (const label of [production, development]) expect(label).not.toMatch(/app_[A-Za-z0-9]{27}/);
    const long = connectionLabelOf({ id: APP_ID, name: 'Harbour Street Auctions and Valuers of the North East Ltd' });
    expect(long).toBe(`Harbour Street Auctions and Valuers of… (app_…${APP_ID.slice(-4)})`);
    expect(long.length).toBeLessThanOrEqual(52);
    expect(connectionLabelOf({ id: APP_ID, name: '  ' })).toBe(`Consumer App (app_…${APP_ID.slice(-4)})`);
  });

  it('uses the regional server named by the key suffix', async () => {
    const scope = mayDoAll(nock('https://api.eu.svix.com').get(`/api/v1/app/${APP_ID}`).reply(200, application));
    await appTester(test, { authData: { apiKey: EU_API_KEY, appId: APP_ID } });
    scope.done();
  });

  it('lets an explicit server URL win over the region', async () => {
    const scope = mayDoAll(nock('https://webhooks.example.test').get(`/api/v1/app/${APP_ID}`).reply(200, application));
    await appTester(test, {
      authData: { apiKey: EU_API_KEY, appId: APP_ID, serverUrl: 'https://webhooks.example.test/' },
    });
    scope.done();
  });

  it('allows plain http only on a loopback host', async () => {
    const scope = mayDoAll(nock('http://127.0.0.1:8071').get(`/api/v1/app/${APP_ID}`).reply(200, application));
    await appTester(test, { authData: { ...authData, serverUrl: 'http://127.0.0.1:8071' } });
    scope.done();
    const refused = await failure(appTester(test, { authData: { ...authData, serverUrl: 'http://api.svix.com' } }));
    expect(refused.message).toMatch(/^Start the Server URL with https:\/\//);
    expect(nock.pendingMocks()).toEqual([]);
  });

  it.each(['', 'app', 'ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9', 'app_short', 'app_../../event-type', `${APP_ID} `.repeat(2)])(
    'refuses the malformed app id %j before any request',
    async (appId) => {
      // Any request would fail the test: the network is closed and nothing is mocked.
      const refused = await failure(appTester(test, { authData: { apiKey: API_KEY, appId } }));
      expect(refused.message).toMatch(/^Copy the Consumer App ID again.*starts with app_/);
    },
  );

  it('says to reconnect with a valid key when the key is rejected, never echoing it', async () => {
    nock(PROVIDER)
      .get(`/api/v1/app/${APP_ID}`)
      .reply(401, { code: 'authentication_failed', detail: `bad key ${API_KEY}` });
    const refused = await failure(appTester(test, { authData }));
    expect(refused.message).toMatch(/^Reconnect your account in Zapier with a current key/);
    expect(refused.message).not.toContain(API_KEY);
    expect(refused.name).toBe('ExpiredAuthError');
  });

  it('names the app id and says to check the account and region when the app is unknown', async () => {
    nock(PROVIDER).get(`/api/v1/app/${APP_ID}`).reply(404, { code: 'not_found', detail: 'Entity not found' });
    const refused = await failure(appTester(test, { authData }));
    expect(refused.message).toContain(APP_ID);
    expect(refused.message).toMatch(
      /^Check that the Consumer App ID and the key come from the same Svix account, environment/,
    );
  });

  it('gives every auth field help text; the key and app id link to where they are found', () => {
    for (const field of authentication.fields) expect(field.helpText.length).toBeGreaterThan(20);
    const [key, appId] = authentication.fields;
    expect(key?.helpText).toMatch(/\(https:\/\/[^)]+\)/);
    expect(appId?.helpText).toMatch(/\(https:\/\/[^)]+\)/);
  });

  describe('checks what a Zap will need, and names what the key may not do', () => {
    const refusedAt = async (path: string, status: 401 | 403) => {
      const app = nock(PROVIDER).get(`/api/v1/app/${APP_ID}`).reply(200, application);
      const answers: Record<string, [number, object]> = {
        [`/api/v1/app/${APP_ID}/endpoint`]: [200, { data: [], done: true, iterator: null }],
        [`/api/v1/app/${APP_ID}/msg`]: [200, { data: [], done: true, iterator: null }],
        '/api/v1/event-type/AUCTION_STATUS_CHANGE': [200, { name: 'AUCTION_STATUS_CHANGE' }],
        [path]: [status, { code: 'forbidden', detail: `not for ${API_KEY}` }],
      };
      for (const [at, [code, body]] of Object.entries(answers)) app.get(at).query(true).reply(code, body);
      const refused = await failure(appTester(test, { authData }));
      expect(refused.message).not.toContain(API_KEY);
      app.done();
      return refused.message;
    };

    it.each([401, 403] as const)('refuses a key that may read the app but not its messages (%d)', async (status) => {
      const message = await refusedAt(`/api/v1/app/${APP_ID}/msg`, status);
      expect(message).toMatch(/integration key that may read messages:.*Svix does not let this key/);
      expect(message).toMatch(/confirm an event its signature alone cannot/);
      expect(message).toMatch(/Reconnect with an API Access Key/);
    });

    it('refuses a key that may not read the endpoints, or the event types, naming which', async () => {
      expect(await refusedAt(`/api/v1/app/${APP_ID}/endpoint`, 403)).toMatch(/may list your Zaps' links/);
      expect(await refusedAt('/api/v1/event-type/AUCTION_STATUS_CHANGE', 403)).toMatch(/may read event types/);
    });

    it('passes an API Access Key when the event type is missing (turning a Zap on registers it)', async () => {
      const scope = mayDoAll(nock(PROVIDER).get(`/api/v1/app/${APP_ID}`).reply(200, application), 404);
      await expect(appTester(test, { authData })).resolves.toMatchObject({ id: APP_ID, name: 'Acme Auctions' });
      scope.done();
    });

    it('refuses an integration key when the event type is missing: it may not register it, so says whom to ask', async () => {
      const key = 'integsk_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9';
      const scope = mayDoAll(nock(PROVIDER).get(`/api/v1/app/${APP_ID}`).reply(200, application), 404);
      const refused = await failure(appTester(test, { authData: { ...authData, apiKey: key } }));
      expect(refused.message).toMatch(
        /^Ask whoever set up your Consumer App to register the AUCTION_STATUS_CHANGE event type/,
      );
      expect(refused.message).toMatch(/Ask whoever set up your Consumer App/);
      expect(refused.message).not.toContain(key);
      scope.done();
    });

    it('passes an API Access Key when the event type is archived (turning a Zap on un-archives it)', async () => {
      const scope = mayDoAll(nock(PROVIDER).get(`/api/v1/app/${APP_ID}`).reply(200, application), 'archived');
      await expect(appTester(test, { authData })).resolves.toEqual({ id: APP_ID, name: 'Acme Auctions', label });
      scope.done();
    });

    it('refuses an integration key when the event type is archived, with the words turning a Zap on gives', async () => {
      const key = 'integsk_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9';
      const scope = mayDoAll(nock(PROVIDER).get(`/api/v1/app/${APP_ID}`).reply(200, application), 'archived');
      const refused = await failure(appTester(test, { authData: { ...authData, apiKey: key } }));
      expect(refused.message).toBe(EVENT_TYPE_ARCHIVED);
      expect(refused.message).not.toMatch(/throttl|pacing|plan/i);
      scope.done();
    });

    it('passes whatever endpoints Svix disabled (their Zaps may be off or gone), and sweeps what no Zap will use', async () => {
      const endpoint = (id: string, metadata: Record<string, string>, disabled = true) => ({
        ...{ id, url: 'https://parked.invalid/zapier/0', uid: `zapier-zap-${id.slice(3)}` },
        ...{ description: endpointDescription({ name: 'Email bidders' }), disabled, metadata },
      });
      const parkedLongAgo = { zap: 'zap-1', gen: '2', on: '1', parked: '1' };
      const scope = mayDoAll(nock(PROVIDER).get(`/api/v1/app/${APP_ID}`).reply(200, application), 200, [
        endpoint('ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Hk1', parkedLongAgo),
        endpoint('ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Hk2', { ...parkedLongAgo, keep: '1' }, false),
        { ...endpoint('ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Hk3', {}), uid: 'setup-0123' },
      ])
        .delete(`/api/v1/app/${APP_ID}/endpoint/ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Hk1`)
        .reply(204);
      await expect(appTester(test, { authData })).resolves.toEqual({ id: APP_ID, name: 'Acme Auctions', label });
      scope.done();
    });
  });
});
