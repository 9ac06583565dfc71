import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import { join, resolve } from 'node:path';
import nock from 'nock';
import { isPathSafeUid } from '../../src/svix/ids';
import {
  APP_ID,
  ENDPOINT_ID,
  PROVIDER,
  SECRET,
  authData,
  failure,
  newSecret,
  payload,
  signedRequest,
  subscription,
  API_KEY,
  MSG_ID,
} from '../helpers/fixtures';

import { usePlatform } from '../helpers/platform';

/** Secrets stay secret, and nothing from outside reaches a request path unchecked. */

const zapier = usePlatform();
const body = JSON.stringify(payload);
const forged = (subscribeData: object) =>
  zapier().perform({ authData, subscribeData, rawRequest: signedRequest(body, { secrets: [newSecret()] }) });
/** A genuine delivery whose secret was read over 10 minutes ago: the secret is read again, by the endpoint's id. */
const stale = (subscribeData: object) =>
  zapier().perform({ authData, subscribeData: { ...subscribeData, checkedAt: 0 }, rawRequest: signedRequest(body) });
const messagePath = `/api/v1/app/${APP_ID}/msg/${MSG_ID}`;
const NOT_FOUND = { code: 'not_found', detail: 'Entity not found' };

describe('ids in request paths', () => {
  it.each(['..', '.', '../secret', 'ep_x/../../app', 'ep%2F..', ' ', ''])(
    'refuses the stored endpoint id %j before any request',
    async (id) => {
      // The network is closed and nothing is mocked: a request would fail differently.
      const subscribeData = { ...subscription, id };
      // Any Svix request would take this answer: it must stay unused.
      const Svix = nock(PROVIDER).get(/.*/).reply(200, { key: SECRET });
      const refused = await failure(stale(subscribeData));
      expect(refused.code).toBe('InvalidEndpointId');
      expect(Svix.isDone()).toBe(false);
    },
  );

  it('accepts Svix ids and the uids this integration makes', () => {
    expect(isPathSafeUid('zapier-0123456789abcdef0123456789abcdef01234567')).toBe(true);
    expect(isPathSafeUid('a.b')).toBe(true);
    expect(isPathSafeUid('..')).toBe(false);
  });
});

describe('secrets', () => {
  const secrets = [SECRET, SECRET.slice('whsec_'.length), API_KEY];

  it('never puts the endpoint secret or the key in an error: a forgery refuted, a re-read secret refused', async () => {
    nock(PROVIDER)
      .get(messagePath)
      .query(true)
      .reply(404, NOT_FOUND)
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .reply(401, { code: 'authentication_failed', detail: 'Invalid token' });
    const refused = await failure(forged(subscription));
    expect(refused.name).toBe('HaltedError');
    zapier().coldStart();
    const unread = await failure(stale(subscription));
    expect(unread.name).toBe('ExpiredAuthError');
    for (const secret of secrets) expect(`${refused.message} ${unread.message}`).not.toContain(secret);
  });

  it('never sends the endpoint secret or the key to the platform’s logs', async () => {
    nock(PROVIDER)
      .get(messagePath)
      .query(true)
      .reply(404, NOT_FOUND)
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .reply(200, { key: SECRET })
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .reply(401, { code: 'authentication_failed', detail: 'Invalid token' });
    // A subscribe (the secret made here is sent), a delivery that runs, a forged one refuted, one whose secret is read
    // again (it answers), and one whose read fails with an error.
    let sent = '';
    nock(PROVIDER)
      .post(`/api/v1/app/${APP_ID}/endpoint`, (created: { secret: string }) => {
        sent = created.secret;
        return true;
      })
      .reply(201, { id: ENDPOINT_ID, url: 'https://hooks.zapier.com/1' });
    await zapier().subscribe({ authData, targetUrl: 'https://hooks.zapier.com/1', inputData: {} });
    expect(sent).toMatch(/^whsec_/);
    await zapier().perform({ authData, subscribeData: subscription, rawRequest: signedRequest(body) });
    await failure(forged(subscription));
    zapier().coldStart();
    await stale(subscription);
    zapier().coldStart();
    await failure(stale(subscription));
    const logged = JSON.stringify(zapier().platform.logLines);
    expect(zapier().platform.logLines.length).toBeGreaterThan(0);
    for (const secret of [...secrets, sent]) expect(logged).not.toContain(secret);
  });

  it('.env, where zapier-platform invoke reads a connection key from, is ignored by git; .env.example is not', async () => {
    const root = resolve(__dirname, '../..');
    const checkIgnore = (...paths: string[]) =>
      promisify(execFile)('git', ['check-ignore', '--no-index', ...paths], { cwd: root });
    const ignored = await checkIgnore('.env', '.env.local', 'test/.env');
    expect(ignored.stdout.trim().split('\n')).toEqual(['.env', '.env.local', 'test/.env']);
    // check-ignore exits 1 when nothing given is ignored.
    await expect(checkIgnore('.env.example')).rejects.toThrow();
  });

  it('the Zapier app logs only through its one log port, and only what a failure leaves out of its message', () => {
    const root = resolve(__dirname, '../../src');
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) return name === 'tools' ? [] : files(path);
        return path.endsWith('.ts') ? [path] : [];
      });
    const app = files(root).filter((file) => !/\/(bench|sim|contract|cli|package|docs)\//.test(file));
    const relative = (pattern: RegExp) =>
      app
        .filter((file) => pattern.test(readFileSync(file, 'utf8')))
        .map((file) => file.slice(root.length + 1))
        .sort();
    expect(app.length).toBeGreaterThan(10);
    // z.console is reached through the Io port (ioOf), and the port's log is called in three places: a Zap's endpoint
    // made unpaced or its event type un-archived; the Zaps' pace left unchecked; a failure's details.
    expect(relative(/\b(console\.|z\.console)/)).toEqual(['zapier/io.ts']);
    expect(relative(/\bio\.log\(/)).toEqual(['zap/endpoint.ts', 'zap/life.ts', 'zapier/io.ts']);
  });
});
