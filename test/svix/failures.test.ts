import nock from 'nock';
import { createAppTester } from 'zapier-platform-core';
import app from '../../src';
import { testConnection } from '../../src/authentication';
import { describeStatus, describeUnreachable, retryAfterSeconds } from '../../src/svix/failures';
import { API_KEY, APP_ID, PROVIDER, authData, failure } from '../helpers/fixtures';

const appTester = createAppTester(app);
const test = testConnection;
const path = `/api/v1/app/${APP_ID}`;

describe('Svix errors become plain-English platform errors', () => {
  it.each([
    [
      400,
      { code: 'bad_request', detail: 'x' },
      'SvixBadRequest',
      /^Check the connection's Consumer App ID and Server URL.*Svix refused it while reading your Consumer App\.$/,
    ],
    [403, { code: 'forbidden', detail: 'x' }, 'SvixForbidden', /did not let this key do it/],
    [409, { code: 'conflict', detail: 'x' }, 'SvixConflict', /conflict/],
    [
      422,
      { detail: [{ loc: ['body', 'name'], msg: 'field required', type: 'value_error.missing' }] },
      'SvixInvalidData',
      /^Show this to whoever set up your Consumer App in Svix: Svix did not accept what was sent while reading your Consumer App\.$/,
    ],
    [
      500,
      '<html><body>Internal Server Error</body></html>',
      'SvixUnavailable',
      /^Try again in a few minutes: Svix had a temporary problem while reading your Consumer App\./,
    ],
    [502, '<html>Bad gateway</html>', 'SvixUnavailable', /^Try again in a few minutes: Svix had a temporary/],
    [503, '', 'SvixUnavailable', /^Try again in a few minutes: Svix had a temporary/],
  ])('%i', async (status, body, code, message) => {
    nock(PROVIDER).get(path).reply(status, body);
    const refused = await failure(appTester(test, { authData }));
    expect(refused.code).toBe(code);
    expect(refused.message).toMatch(message);
    expect(refused.message).not.toContain(API_KEY);
    expect(refused.message).not.toMatch(/<html>/);
    // The status is for the log, not for the person.
    expect(refused.message).not.toContain(String(status));
  });

  it("puts the fields Svix names in a 422 in the log: they are the request's, which nobody in Zapier typed", () => {
    const body = { detail: [{ loc: ['body', 'url'], msg: 'invalid url', type: 'value_error' }] };
    for (const reader of ['zap-editor', 'zap-run', 'setup'] as const) {
      const failed = describeStatus(422, body, { action: "creating this Zap's endpoint", reader });
      expect(failed.log).toBe("Svix answered 422 while creating this Zap's endpoint (fields: url).");
      expect(failed.message).not.toMatch(/\burl\b|fields/);
    }
  });

  it('puts the status, Svix code and Retry-After in the log, never in the message', () => {
    const failed = describeStatus(
      429,
      { code: 'rate_limited', detail: 'x' },
      { action: 'doing it', reader: 'zap-editor' },
      '17',
    );
    expect(failed.log).toBe('Svix answered 429 (rate_limited) with Retry-After 17 while doing it.');
    expect(failed.message).not.toMatch(/429|rate_limited|Retry-After/);
  });

  it('429 becomes a ThrottledError carrying the Retry-After delay', async () => {
    nock(PROVIDER).get(path).reply(429, { code: 'rate_limited', detail: 'slow down' }, { 'Retry-After': '17' });
    const throttled = await failure(appTester(test, { authData }));
    expect(throttled.name).toBe('ThrottledError');
    expect(throttled.delay).toBe(17);
    expect(throttled.message).toMatch(/^Try again in about 17 seconds:/);
  });

  it('429 without Retry-After is still a ThrottledError, without a delay', async () => {
    nock(PROVIDER).get(path).reply(429, { code: 'rate_limited', detail: 'slow down' });
    const throttled = await failure(appTester(test, { authData }));
    expect(throttled.name).toBe('ThrottledError');
    expect(throttled.delay).toBeUndefined();
    expect(throttled.message).toMatch(/^Try again in a minute:/);
  });

  it('reads Retry-After as an HTTP date too', () => {
    const now = Date.UTC(2026, 10, 22, 12, 0, 0);
    expect(retryAfterSeconds('Sun, 22 Nov 2026 12:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
  });

  it('a success answer that is not JSON points at the Server URL', async () => {
    nock(PROVIDER).get(path).reply(200, '<!doctype html><title>Sign in</title>', { 'Content-Type': 'text/html' });
    const refused = await failure(appTester(test, { authData }));
    expect(refused.code).toBe('SvixNotJson');
  });

  it('an answer of the wrong shape names the field, not its value', async () => {
    nock(PROVIDER).get(path).reply(200, { id: APP_ID, name: 12345 });
    const refused = await failure(appTester(test, { authData }));
    expect(refused.code).toBe('SvixUnexpectedAnswer');
    expect(refused.message).not.toMatch(/ApplicationOut\.name/);
    expect(refused.message).not.toContain('12345');
  });

  it('a refused connection names the host and the field to check', async () => {
    // Port 9 on loopback (discard) is closed on this machine: the connection is refused, nothing leaves it.
    const refused = await failure(appTester(test, { authData: { ...authData, serverUrl: 'http://127.0.0.1:9' } }));
    expect(refused.code).toBe('SvixUnreachable');
    expect(refused.message).toMatch(
      /^Try again in a few minutes; if it keeps happening, check the connection's Server URL.*could not be reached.*connection was refused/,
    );
  });

  it('a time-out, an unknown host and other network failures say so', () => {
    // node-fetch (under z.request) marks its time-outs with type 'request-timeout'.
    expect(describeUnreachable('x', PROVIDER, { type: 'request-timeout' }, 'zap-editor').message).toMatch(
      /did not answer in time/,
    );
    expect(describeUnreachable('x', PROVIDER, { code: 'ETIMEDOUT' }, 'zap-editor').message).toMatch(
      /did not answer in time/,
    );
    expect(describeUnreachable('x', PROVIDER, { code: 'ENOTFOUND' }, 'zap-editor').message).toMatch(
      /address could not be found/,
    );
    expect(describeUnreachable('x', PROVIDER, new Error('socket hang up'), 'zap-editor').message).toMatch(
      /connection failed/,
    );
  });
});

describe("Svix's error bodies as its server writes them (error.rs) give the right words", () => {
  const context = { action: "creating this Zap's endpoint", reader: 'zap-editor' } as const;

  it('403 with the code "insufficient access" (a space): the key is refused, and the log keeps the code', () => {
    const refused = describeStatus(
      403,
      { code: 'insufficient access', detail: 'Insufficient access for the given operation.' },
      context,
    );
    expect(refused).toMatchObject({ kind: 'error', code: 'SvixForbidden' });
    expect(refused.message).toMatch(/^Reconnect your account in Zapier with a key of the Svix account/);
    expect(refused.log).toBe("Svix answered 403 (insufficient access) while creating this Zap's endpoint.");
  });

  it("500 with the body {}: a passing problem on Svix's side", () => {
    const refused = describeStatus(500, {}, context);
    expect(refused).toMatchObject({ kind: 'error', code: 'SvixUnavailable' });
    expect(refused.message).toMatch(/^Try again in a few minutes: Svix had a temporary problem/);
    expect(refused.log).toBe("Svix answered 500 while creating this Zap's endpoint.");
  });

  it('422 with a detail list: the fields it names go to the log (nobody in Zapier typed them), never their values', () => {
    const body = {
      detail: [
        {
          loc: ['body', 'eventTypes'],
          msg: "The following event types don't exist: SECRET_VALUE",
          type: 'value_error',
        },
      ],
    };
    const refused = describeStatus(422, body, context);
    expect(refused.message).toMatch(/^Show this to whoever set up your Consumer App in Svix: Svix did not accept/);
    expect(refused.log).toContain('(fields: eventTypes)');
    expect(`${refused.message} ${refused.log}`).not.toContain('SECRET_VALUE');
  });
});
