import nock from 'nock';
import { Webhook } from 'standardwebhooks';
import { newId } from '../../src/tools/sandbox/emulator/store';
import { MARKER, MARKER_NUMBER, type Signing } from '../fixtures/hostileDeliveries';
import { APP_ID, ENDPOINT_ID, PROVIDER, SECRET, authData, errorDetails, newSecret, subscription } from './fixtures';
import { usePlatform } from './platform';

/**
 * Shared by the bad-input corpus and the property tests: signing, delivering
 * (through core's handler, z.cache on the platform stand-in) and judging a
 * delivery. A forged signature reads the secret again (the allowances
 * refill at once here, so the corpus never waits for it).
 */
/** A fresh Svix message id (`msg_` and 27 letters or digits). */
export const messageId = (): string => newId('msg');

const signWith = (secret: string, id: string, at: Date, body: string): string =>
  new Webhook(secret.replace(/^whsec_/, '')).sign(id, at, body);

const valueOnly = (signature: string): string => signature.slice('v1,'.length);

/**
 * The headers of a delivery signed as the case says, under Zapier's `Http-` prefix.
 * "Now" is Date.now(), the clock perform reads, so a test that freezes it signs
 * at exactly the time perform checks against.
 */
export const headersFor = (signing: Signing, prefix: string, id: string, body: string): Record<string, string> => {
  const now = new Date(Date.now());
  const seconds = (at: Date) => String(Math.floor(at.getTime() / 1000));
  const shifted = (deltaSeconds: number) => new Date(now.getTime() + deltaSeconds * 1000);
  const good = signWith(SECRET, id, now, body);
  let timestamp = seconds(now);
  let signature: string | undefined = good;
  let idHeader: string | undefined = id;
  switch (signing) {
    case 'valid':
      break;
    case 'valid-lower-case-headers':
      return Object.fromEntries(
        Object.entries(headersFor('valid', prefix, id, body)).map(([name, value]) => [name.toLowerCase(), value]),
      );
    case 'valid-unprefixed-headers':
      return Object.fromEntries(
        Object.entries(headersFor('valid', prefix, id, body)).map(([name, value]) => [
          name.replace(/^Http-/, ''),
          value,
        ]),
      );
    case 'missing-id':
      idHeader = undefined;
      break;
    case 'missing-timestamp':
      timestamp = '';
      break;
    case 'missing-signature':
      signature = undefined;
      break;
    case 'missing-all':
      return { 'Content-Type': 'application/json' };
    case 'empty-signature':
      signature = '';
      break;
    case 'empty-v1':
      signature = 'v1,';
      break;
    case 'bad-base64':
      signature = 'v1,!!!not*base64!!!';
      break;
    case 'wrong-secret':
      signature = signWith(newSecret(), id, now, body);
      break;
    case 'all-wrong-secrets':
      signature = [newSecret(), newSecret(), newSecret()].map((secret) => signWith(secret, id, now, body)).join(' ');
      break;
    case 'valid-among-garbage':
      signature = `v1,garbage v2,${valueOnly(good)} ${good} v1,AAAA`;
      break;
    case 'stale-301s':
    case 'stale-1h':
    case 'stale-8d':
    case 'future-10min':
    case 'future-1d': {
      const delta = {
        'stale-301s': -301,
        'stale-1h': -3600,
        'stale-8d': -8 * 86_400,
        'future-10min': 600,
        'future-1d': 86_400,
      }[signing];
      timestamp = seconds(shifted(delta));
      signature = signWith(SECRET, id, shifted(delta), body);
      break;
    }
    case 'truncated':
      signature = good.slice(0, -4);
      break;
    case 'other-body':
      signature = signWith(SECRET, id, now, `${body} `);
      break;
    case 'other-id':
      signature = signWith(SECRET, messageId(), now, body);
      break;
    case 'other-timestamp':
      signature = signWith(SECRET, id, shifted(-10), body);
      break;
    case 'v2-scheme':
      signature = `v2,${valueOnly(good)}`;
      break;
    case 'no-comma':
      signature = `v1 ${valueOnly(good)}`;
      break;
    case 'upper-case-scheme':
      signature = `V1,${valueOnly(good)}`;
      break;
    case 'timestamp-text':
      timestamp = 'yesterday';
      break;
    case 'timestamp-fraction':
      timestamp = `${timestamp}.5`;
      break;
    case 'timestamp-milliseconds':
      timestamp = String(now.getTime());
      break;
    case 'timestamp-negative':
      timestamp = `-${timestamp}`;
      break;
  }
  return {
    'Content-Type': 'application/json',
    ...(idHeader === undefined ? {} : { [`${prefix}-Id`]: idHeader }),
    ...(timestamp === '' ? {} : { [`${prefix}-Timestamp`]: timestamp }),
    ...(signature === undefined ? {} : { [`${prefix}-Signature`]: signature }),
  };
};

/** Good headers for a delivery signed `deltaSeconds` from Date.now() (negative: before it). */
export const headersSignedAt = (
  deltaSeconds: number,
  prefix: string,
  id: string,
  body: string,
): Record<string, string> => {
  const at = new Date(Date.now() + deltaSeconds * 1000);
  return {
    'Content-Type': 'application/json',
    [`${prefix}-Id`]: id,
    [`${prefix}-Timestamp`]: String(Math.floor(at.getTime() / 1000)),
    [`${prefix}-Signature`]: signWith(SECRET, id, at, body),
  };
};

/** Deliveries through core's handler, to a process on a virtual clock: waiting for the allowance takes no time. */
export const useDeliveries = () => {
  const zapier = usePlatform();
  return (body: string, headers: Record<string, string>) =>
    zapier().perform({ authData, subscribeData: subscription, rawRequest: { content: body, headers }, inputData: {} });
};

/** What a person may see: a halt, or a platform error with a code, in plain words, with no values from the payload. */
export const expectPlainError = (error: unknown): { name: string; code?: string; message: string } => {
  const details = errorDetails(error);
  if (details.name !== 'HaltedError') expect(details.code).toBeDefined();
  expect(details.message).not.toMatch(/TypeError|RangeError|SyntaxError|ReferenceError|\n\s+at |\[object Object\]/);
  expect(details.message).not.toContain(MARKER);
  expect(details.message).not.toContain(String(MARKER_NUMBER));
  expect(details.message.length).toBeLessThan(1_000);
  return details;
};

export const pollutionFree = () => {
  expect(Object.prototype).not.toHaveProperty('polluted');
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
};

/**
 * Svix as hostile deliveries meet it: the endpoint's secret is the stored one, and it has no message under any id
 * (nothing was sent), so a mismatched signature is refuted.
 */
export const secretReread = () =>
  nock(PROVIDER)
    .persist()
    .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
    .reply(200, { key: SECRET })
    .get(/^\/api\/v1\/app\/[^/]+\/msg\/[^/?]+/)
    .query(true)
    .reply(404, { code: 'not_found', detail: 'Entity not found' });
