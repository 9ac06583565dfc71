import { Svix } from 'svix';
import { SvixEmulator } from '../../src/tools/sandbox/emulator';
import { EVENT_TYPE_NAME } from '../../src/svix/eventType';
import { timeOfSvixId } from '../../src/svix/ksuid';
import { apiError, recordingFetch, schemaFor, schemaMismatches, type Recorded } from '../helpers/svixSchemas';

/**
 * Integrations and their app-scoped keys, through Svix's JS SDK and
 * raw HTTP. Every answer is checked against Svix's response schemas.
 */

const KEY = 'testsk_emulatorIntegrations.eu';
const KEY_SHAPE = /^integsk_[0-9A-Za-z]{32}$/;
const NOT_FOUND = { code: 'not_found', detail: 'Entity not found' };

let emulator: SvixEmulator;
let recorded: Recorded[] = [];

/** The SDK, recording each raw answer for the schema check. */
const sdk = (key: string): Svix =>
  new Svix(key, { serverUrl: emulator.url, fetch: recordingFetch(recorded), numRetries: 0 });

/** A raw request with the key given, recorded too. */
const call = async (
  key: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> => {
  const response = await recordingFetch(recorded)(`${emulator.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
};

const payload = { auctioneerUuid: 'a1', auctionUuid: 'b2', status: 'OPEN_FOR_BIDDING' };

let account: Svix;

beforeEach(async () => {
  emulator = new SvixEmulator({ apiKey: KEY, retryScheduleMs: [] });
  await emulator.start();
  recorded = [];
  account = sdk(KEY);
});

afterEach(async () => {
  const mismatches = schemaMismatches(recorded, schemaFor);
  expect(mismatches).toEqual([]);
  await emulator.stop();
});

/** An app with an integration, and a key for it made by a rotation. */
const appWithKey = async (uid?: string) => {
  const app = await account.application.create({ name: 'Harbour Street Auctions', ...(uid ? { uid } : {}) });
  const integration = await account.integration.create(app.id, { name: 'Zapier' });
  const { key } = await account.integration.rotateKey(app.id, integration.id);
  return { app, integration, key };
};

describe('integrations', () => {
  it('creates (201), reads, lists, updates with PUT and deletes', async () => {
    const app = await account.application.create({ name: 'Integrations' });
    const zapier = await account.integration.create(app.id, { name: 'Zapier' });
    expect(zapier.id).toMatch(/^integ_[A-Za-z0-9]{27}$/);
    expect(zapier.createdAt.getTime() - (timeOfSvixId(zapier.id) ?? 0)).toBeLessThan(4);
    expect(zapier.featureFlags).toBeUndefined();
    // Ids made in one 4 ms slot list in the order of their random part, as Svix's do: the next one in a later slot.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const flagged = await account.integration.create(app.id, { name: 'Flagged', featureFlags: ['beta'] });
    expect(flagged.featureFlags).toEqual(['beta']);
    expect(
      recorded.filter((answer) => answer.path.endsWith('/integration')).map((answer) => [answer.status, answer.body]),
    ).toEqual([
      [201, expect.not.objectContaining({ key: expect.anything() })],
      [201, expect.not.objectContaining({ key: expect.anything() })],
    ]);

    expect(await account.integration.get(app.id, zapier.id)).toEqual(zapier);
    const first = await account.integration.list(app.id, { limit: 1 });
    expect(first.data.map((integration) => integration.id)).toEqual([zapier.id]);
    expect(first.done).toBe(false);
    const rest = await account.integration.list(app.id, { limit: 1, iterator: first.iterator ?? '' });
    expect(rest.data.map((integration) => integration.name)).toEqual(['Flagged']);
    expect(rest.done).toBe(true);

    const renamed = await account.integration.update(app.id, zapier.id, { name: 'Zapier (EU)', featureFlags: ['a'] });
    expect(renamed).toMatchObject({ id: zapier.id, name: 'Zapier (EU)', featureFlags: ['a'] });
    expect(renamed.createdAt).toEqual(zapier.createdAt);
    // A PUT is the whole integration: flags left out are cleared.
    expect((await account.integration.update(app.id, zapier.id, { name: 'Zapier' })).featureFlags).toBeUndefined();

    await account.integration.delete(app.id, zapier.id);
    expect((await apiError(account.integration.get(app.id, zapier.id))).code).toBe(404);
    expect((await apiError(account.integration.delete(app.id, zapier.id))).code).toBe(404);
    expect((await account.integration.list(app.id)).data.map((integration) => integration.id)).toEqual([flagged.id]);
  });

  it('keeps each app to its own integrations', async () => {
    const one = await account.application.create({ name: 'One', uid: 'one' });
    const two = await account.application.create({ name: 'Two' });
    const integration = await account.integration.create('one', { name: 'Zapier' });
    expect((await account.integration.get(one.id, integration.id)).name).toBe('Zapier');
    expect((await apiError(account.integration.get(two.id, integration.id))).code).toBe(404);
    expect((await account.integration.list(two.id)).data).toEqual([]);
  });

  it('refuses bodies the contract refuses (422)', async () => {
    const app = await account.application.create({ name: 'Integrations' });
    const path = `/api/v1/app/${app.id}/integration`;
    expect(await call(KEY, 'POST', path, { featureFlags: ['a'] })).toEqual({
      status: 422,
      body: { detail: [{ loc: ['body', 'name'], msg: 'field required', type: 'value_error.missing' }] },
    });
    for (const featureFlags of [[], ['a', 'a'], ['has space'], Array.from({ length: 26 }, (_, index) => `f${index}`)]) {
      expect((await call(KEY, 'POST', path, { name: 'Zapier', featureFlags })).status).toBe(422);
    }
    const integration = await account.integration.create(app.id, { name: 'Zapier' });
    expect((await call(KEY, 'PUT', `${path}/${integration.id}`, { featureFlags: ['a'] })).status).toBe(422);
    expect((await call(KEY, 'PATCH', `${path}/${integration.id}`, { name: 'x' })).status).toBe(405);
    expect((await account.integration.list(app.id)).data).toHaveLength(1);
  });
});

describe('integration keys', () => {
  it('makes a first key nobody sees, and shows a key only when a rotation makes it', async () => {
    const app = await account.application.create({ name: 'Keys' });
    const integration = await account.integration.create(app.id, { name: 'Zapier' });
    expect(emulator.integrationKeyCount(app.id)).toBe(1);
    // Svix has no operation to read an existing key (svix 2 dropped its deprecated getKey).
    expect((await call(KEY, 'GET', `/api/v1/app/${app.id}/integration/${integration.id}/key`)).status).toBe(404);

    const { key } = await account.integration.rotateKey(app.id, integration.id);
    expect(key).toMatch(KEY_SHAPE);
    expect(recorded[recorded.length - 1]).toMatchObject({ method: 'POST', status: 200 });
    expect(emulator.integrationKeyCount(app.id)).toBe(1);
    expect((await sdk(key).application.get(app.id)).id).toBe(app.id);
    expect((await call(KEY, 'GET', `/api/v1/app/${app.id}/integration/${integration.id}/key/rotate`)).status).toBe(405);
  });

  it('stops the old key at once when it is rotated', async () => {
    const { app, integration, key: before } = await appWithKey();
    const { key: after } = await account.integration.rotateKey(app.id, integration.id);
    expect(after).toMatch(KEY_SHAPE);
    expect(after).not.toBe(before);
    expect(emulator.integrationKeyCount(app.id)).toBe(1);
    expect(await call(before, 'GET', `/api/v1/app/${app.id}`)).toEqual({
      status: 401,
      body: { code: 'authentication_failed', detail: 'Invalid token' },
    });
    expect((await call(after, 'GET', `/api/v1/app/${app.id}`)).status).toBe(200);
  });

  it('stops the key when its integration or its app is deleted', async () => {
    const first = await appWithKey();
    await account.integration.delete(first.app.id, first.integration.id);
    expect((await call(first.key, 'GET', `/api/v1/app/${first.app.id}`)).status).toBe(401);
    expect(emulator.integrationKeyCount(first.app.id)).toBe(0);

    const second = await appWithKey();
    await account.application.delete(second.app.id);
    expect((await call(second.key, 'GET', `/api/v1/app/${second.app.id}`)).status).toBe(401);
  });

  it('gives each of several integrations its own working key', async () => {
    const app = await account.application.create({ name: 'Two integrations' });
    const one = await account.integration.create(app.id, { name: 'One' });
    const two = await account.integration.create(app.id, { name: 'Two' });
    const keyOne = (await account.integration.rotateKey(app.id, one.id)).key;
    const keyTwo = (await account.integration.rotateKey(app.id, two.id)).key;
    expect(emulator.integrationKeyCount(app.id)).toBe(2);
    await account.integration.delete(app.id, one.id);
    expect((await call(keyOne, 'GET', `/api/v1/app/${app.id}`)).status).toBe(401);
    expect((await call(keyTwo, 'GET', `/api/v1/app/${app.id}`)).status).toBe(200);
  });

  // The routes each key may use, as Svix's server decides (core/permissions.rs; the extractor each route takes).
  it('works everywhere under its own app, by id or uid, but posting messages', async () => {
    const { app, key } = await appWithKey('harbour');
    await account.eventType.create({ name: EVENT_TYPE_NAME, description: 'Auctions' });
    const scoped = sdk(key);
    expect((await scoped.application.get('harbour')).id).toBe(app.id);
    const endpoint = await scoped.endpoint.create('harbour', {
      url: 'http://127.0.0.1:9/hook',
      uid: 'zap-1',
      eventTypes: [EVENT_TYPE_NAME],
    });
    expect((await scoped.endpoint.list(app.id)).data.map((listed) => listed.id)).toEqual([endpoint.id]);
    expect((await scoped.endpoint.get(app.id, 'zap-1')).id).toBe(endpoint.id);
    expect((await scoped.endpoint.patch(app.id, endpoint.id, { description: 'Patched' })).description).toBe('Patched');
    const { key: secret } = await scoped.endpoint.getSecret(app.id, endpoint.id);
    await scoped.endpoint.rotateSecret(app.id, endpoint.id, {});
    expect((await scoped.endpoint.getSecret(app.id, endpoint.id)).key).not.toBe(secret);
    // Posting a message is for the account's key (the auction service's), not an app's.
    const message = await account.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    expect((await scoped.message.get(app.id, message.id, { withContent: true })).payload).toEqual(payload);
    expect((await scoped.message.list(app.id)).data.map((listed) => listed.id)).toEqual([message.id]);
    expect((await scoped.eventType.get(EVENT_TYPE_NAME)).name).toBe(EVENT_TYPE_NAME);
    expect((await scoped.eventType.list()).data).toHaveLength(1);
    await scoped.endpoint.delete(app.id, endpoint.id);
    expect(emulator.stats().endpoints).toBe(0);
  });

  it('may not manage integrations, list or create apps, change its app, post messages, expunge or write event types (403)', async () => {
    const { app, integration, key } = await appWithKey('harbour');
    await account.eventType.create({ name: EVENT_TYPE_NAME, description: 'Auctions' });
    const message = await account.message.create(app.id, { eventType: EVENT_TYPE_NAME, payload });
    const integrations = `/api/v1/app/${app.id}/integration`;
    const refused: Array<[string, string, unknown?]> = [
      ['GET', integrations],
      ['POST', integrations, { name: 'Another' }],
      ['GET', `${integrations}/${integration.id}`],
      ['PUT', `${integrations}/${integration.id}`, { name: 'Renamed' }],
      ['DELETE', `${integrations}/${integration.id}`],
      ['POST', `${integrations}/${integration.id}/key/rotate`],
      ['GET', '/api/v1/app/harbour/integration'],
      ['GET', '/api/v1/app'],
      ['POST', '/api/v1/app', { name: 'Another' }],
      ['POST', '/api/v1/app?get_if_exists=true', { name: 'Harbour', uid: 'harbour' }],
      ['DELETE', `/api/v1/app/${app.id}`],
      ['POST', `/api/v1/app/${app.id}/msg`, { eventType: EVENT_TYPE_NAME, payload }],
      ['DELETE', `/api/v1/app/${app.id}/msg/${message.id}/content`],
      ['POST', '/api/v1/event-type', { name: 'OTHER', description: 'Other' }],
      ['PUT', `/api/v1/event-type/${EVENT_TYPE_NAME}`, { description: 'Changed' }],
      ['PATCH', `/api/v1/event-type/${EVENT_TYPE_NAME}`, { archived: true }],
      ['DELETE', `/api/v1/event-type/${EVENT_TYPE_NAME}`],
    ];
    for (const [method, path, body] of refused) {
      const answer = await call(key, method, path, body);
      expect({ method, path, status: answer.status, body: answer.body }).toEqual({
        method,
        path,
        status: 403,
        // With a space, as the server writes it (error.rs, HttpError::permission_denied).
        body: { code: 'insufficient access', detail: 'Insufficient access for the given operation.' },
      });
      expect(JSON.stringify(answer.body)).not.toContain(key);
    }
    // Nothing changed.
    expect((await account.integration.get(app.id, integration.id)).name).toBe('Zapier');
    expect((await account.application.list()).data).toHaveLength(1);
    expect((await account.eventType.list()).data.map((eventType) => eventType.description)).toEqual(['Auctions']);
    expect((await call(key, 'GET', `/api/v1/app/${app.id}`)).status).toBe(200);
  });

  it("answers 404 for any other app's routes it could use in its own, as if it did not exist", async () => {
    const { key } = await appWithKey();
    const other = await account.application.create({ name: 'Northgate Fine Art', uid: 'northgate' });
    const endpoint = await account.endpoint.create(other.id, { url: 'http://127.0.0.1:9/' });
    const scoped = sdk(key);
    const attempts: Array<Promise<unknown>> = [
      scoped.application.get(other.id),
      scoped.application.get('northgate'),
      scoped.application.get('app_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9'),
      scoped.endpoint.list(other.id),
      scoped.endpoint.get(other.id, endpoint.id),
      scoped.endpoint.getSecret(other.id, endpoint.id),
      scoped.endpoint.patch(other.id, endpoint.id, { disabled: true }),
      scoped.endpoint.delete(other.id, endpoint.id),
      scoped.message.list(other.id),
    ];
    for (const attempt of attempts) {
      const refused = await apiError(attempt);
      expect([refused.code, refused.body]).toEqual([404, NOT_FOUND]);
    }
    // Not found before the body is even read.
    const broken = await recordingFetch(recorded)(`${emulator.url}/api/v1/app/${other.id}/endpoint`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect([broken.status, await broken.json()]).toEqual([404, NOT_FOUND]);
    const untouched = await account.endpoint.get(other.id, endpoint.id);
    expect(untouched.disabled).toBe(false);
    expect((await account.message.list(other.id)).data).toEqual([]);
  });

  it("never replays another app's answer for a repeated Idempotency-Key", async () => {
    const { key } = await appWithKey();
    const other = await account.application.create({ name: 'Northgate' });
    const path = `/api/v1/app/${other.id}/endpoint`;
    const body = { url: 'http://127.0.0.1:9/' };
    expect((await call(KEY, 'POST', path, body, { 'idempotency-key': 'same-1' })).status).toBe(201);
    expect(await call(key, 'POST', path, body, { 'idempotency-key': 'same-1' })).toEqual({
      status: 404,
      body: NOT_FOUND,
    });
  });

  it('refuses keys that look like integration keys but are not (401)', async () => {
    const { app, key } = await appWithKey();
    for (const wrong of [`${key}x`, key.slice(0, -1), key.toUpperCase(), 'integsk_', `Bearer ${key}`]) {
      expect((await call(wrong, 'GET', `/api/v1/app/${app.id}`)).status).toBe(401);
    }
    const lowercase = await fetch(`${emulator.url}/api/v1/app/${app.id}`, {
      headers: { authorization: `bearer ${key}` },
    });
    expect(lowercase.status).toBe(401);
  });
});
