import { Webhook } from 'standardwebhooks';
import fc from 'fast-check';
import { checkEnvelope, secretKey, signedWith, signingHeaders } from '../../src/svix/signature';
import { SIGNING_WINDOW } from '../../src/delivery/claim';
import { MSG_ID, SECRET, newSecret } from '../helpers/fixtures';

/**
 * The checks perform makes, as it makes them: the envelope (headers and
 * signing time, in the trigger's window), then the signature against a secret.
 */

const now = 1_790_000_000;
const reference = (secret: string, id: string, seconds: number, body: string): string =>
  new Webhook(secret.replace(/^whsec_/, '')).sign(id, new Date(seconds * 1000), body);

const signed = (body: string, signature: string, seconds = now, secret = SECRET, id = MSG_ID) =>
  signedWith(secret, id, String(seconds), signature, body);

const envelope = (timestamp: string, signature = 'v1,x', headers: { id?: string } = { id: MSG_ID }) =>
  checkEnvelope({ id: headers.id, timestamp, signature }, now, SIGNING_WINDOW);

describe('signature verification (standard-webhooks scheme)', () => {
  it("agrees with Svix's reference library for any body and signing time in the window", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        fc.integer({ min: -SIGNING_WINDOW.maxAgeSeconds, max: SIGNING_WINDOW.maxAheadSeconds }),
        (body, skew) => {
          const signature = reference(SECRET, MSG_ID, now + skew, body);
          expect(envelope(String(now + skew), signature)).toEqual({
            ok: true,
            id: MSG_ID,
            timestamp: String(now + skew),
            seconds: now + skew,
            signature,
          });
          expect(signed(body, signature, now + skew)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses any change to the body, id or timestamp', () => {
    const body = '{"status":"OPEN"}';
    const signature = reference(SECRET, MSG_ID, now, body);
    expect(signed(body, signature)).toBe(true);
    expect(signed('{"status":"OPEN "}', signature)).toBe(false);
    expect(signed(body, signature, now, SECRET, `${MSG_ID}x`)).toBe(false);
    expect(signed(body, signature, now - 1)).toBe(false);
  });

  it('refuses a signature made with another secret', () => {
    expect(signed('{}', reference(newSecret(), MSG_ID, now, '{}'))).toBe(false);
  });

  it('accepts any one of several space-separated signatures, and ignores other versions', () => {
    const body = '{}';
    const good = reference(SECRET, MSG_ID, now, body);
    const other = reference(newSecret(), MSG_ID, now, body);
    expect(signed(body, `${other} ${good}`)).toBe(true);
    expect(signed(body, good.replace('v1,', 'v2,'))).toBe(false);
  });

  it('refuses truncated, empty and badly encoded signatures', () => {
    const body = '{}';
    const good = reference(SECRET, MSG_ID, now, body);
    for (const bad of [good.slice(0, -4), 'v1,', 'v1,!!!!', 'v1', good.replace(/[A-Za-z]/, '#')]) {
      expect(signed(body, bad)).toBe(false);
    }
  });

  it("holds the trigger's window: as old as the Zap remembers its runs, and five minutes ahead", () => {
    const at = (seconds: number) => envelope(String(seconds));
    expect(at(now - SIGNING_WINDOW.maxAgeSeconds).ok).toBe(true);
    expect(at(now + SIGNING_WINDOW.maxAheadSeconds).ok).toBe(true);
    expect(at(now - SIGNING_WINDOW.maxAgeSeconds - 1)).toEqual({ ok: false, refusal: 'too-old' });
    expect(at(now + SIGNING_WINDOW.maxAheadSeconds + 1)).toEqual({ ok: false, refusal: 'too-new' });
    expect(SIGNING_WINDOW.maxAgeSeconds).toBeGreaterThanOrEqual(7 * 24 * 60 * 60);
    expect(SIGNING_WINDOW.maxAheadSeconds).toBe(5 * 60);
  });

  it('refuses missing headers and non-numeric timestamps', () => {
    expect(envelope(String(now), 'v1,x', {})).toEqual({ ok: false, refusal: 'missing-headers' });
    expect(envelope('1.7e9')).toEqual({ ok: false, refusal: 'bad-timestamp' });
    expect(envelope('')).toEqual({ ok: false, refusal: 'missing-headers' });
  });

  it('reads the key bytes after whsec_, and refuses a secret that is not base64', () => {
    expect(secretKey(SECRET)?.length).toBeGreaterThan(0);
    expect(secretKey('whsec_not base64!')).toBeUndefined();
    expect(signedWith('whsec_', MSG_ID, String(now), 'v1,abc', '{}')).toBe(false);
  });

  it("reads Zapier's Http- prefixed headers case-insensitively, Svix or white-labelled", () => {
    expect(signingHeaders({ 'Http-Svix-Id': 'a', 'HTTP-SVIX-TIMESTAMP': '1', 'http-svix-signature': 's' })).toEqual({
      id: 'a',
      timestamp: '1',
      signature: 's',
    });
    expect(
      signingHeaders({ 'Http-Webhook-Id': 'a', 'Http-Webhook-Timestamp': '1', 'Http-Webhook-Signature': 's' }),
    ).toEqual({ id: 'a', timestamp: '1', signature: 's' });
  });

  it("prefers Svix's own names whatever the order, skips values that are not text, and trims", () => {
    const headers = {
      'Http-Webhook-Id': 'white',
      'Http-Svix-Id': ' svix ',
      'Http-Svix-Timestamp': ['1'],
      'Webhook-Timestamp': '2',
      'Http-User-Agent': 'Svix-Webhooks/1.0',
      'http-svix-signature': 'first',
      'HTTP-SVIX-SIGNATURE': 'last',
    };
    expect(signingHeaders(headers)).toEqual({ id: 'svix', timestamp: '2', signature: 'last' });
    expect(signingHeaders({ 'Http-Content-Type': 'application/json' })).toEqual({
      id: undefined,
      timestamp: undefined,
      signature: undefined,
    });
  });
});
