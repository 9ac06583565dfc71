import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import nock from 'nock';
import { createAppTester } from 'zapier-platform-core';
import app from '../../src';
import { isPathSafeUid } from '../../src/provider/ids';
import { auctionStatusChangedOperations as trigger } from '../../src/triggers/auctionStatusChanged';
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
} from '../helpers/fixtures';

/** Secrets stay secret, and nothing from outside reaches a request path unchecked. */

const appTester = createAppTester(app);
const body = JSON.stringify(payload);

describe('ids in request paths', () => {
  it.each(['..', '.', '../secret', 'ep_x/../../app', 'ep%2F..', ' ', ''])(
    'refuses the stored endpoint id %j before any request',
    async (id) => {
      // The network is closed and nothing is mocked: a request would fail differently.
      const subscribeData = { ...subscription, id };
      // Any provider request would take this answer: it must stay unused.
      const provider = nock(PROVIDER).get(/.*/).reply(200, { key: SECRET });
      const refused = await failure(
        appTester(
          trigger.perform,
          { authData, subscribeData, rawRequest: signedRequest(body, { secrets: [newSecret()] }) },
          true,
        ),
      );
      expect(refused.code).toBe('InvalidEndpointId');
      expect(provider.isDone()).toBe(false);
    },
  );

  it('accepts provider ids and the uids this integration makes', () => {
    expect(isPathSafeUid('zapier-0123456789abcdef0123456789abcdef01234567')).toBe(true);
    expect(isPathSafeUid('a.b')).toBe(true);
    expect(isPathSafeUid('..')).toBe(false);
  });
});

describe('secrets', () => {
  it('never puts the endpoint secret or the key in an error, even when the re-read secret is refused', async () => {
    nock(PROVIDER).get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`).reply(200, { key: SECRET });
    const subscribeData = subscription;
    const refused = await failure(
      appTester(
        trigger.perform,
        { authData, subscribeData, rawRequest: signedRequest(body, { secrets: [newSecret()] }) },
        true,
      ),
    );
    expect(refused.code).toBe('DeliveryRefused');
    for (const secret of [SECRET, SECRET.slice('whsec_'.length), API_KEY])
      expect(refused.message).not.toContain(secret);
  });

  it('the Zapier app writes no logs of its own (only the sandbox and set-up command print)', () => {
    const root = resolve(__dirname, '../../src');
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) return name === 'sandbox' || name === 'setup' ? [] : files(path);
        return path.endsWith('.ts') ? [path] : [];
      });
    const logging = files(root).filter((file) => /\b(console\.|z\.console)/.test(readFileSync(file, 'utf8')));
    expect(files(root).length).toBeGreaterThan(10);
    expect(logging).toEqual([]);
  });
});
