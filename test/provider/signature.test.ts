import { Webhook } from 'standardwebhooks';
import fc from 'fast-check';
import {
  checkEnvelope,
  secretKey,
  signedWith,
  signingHeaders,
  verify,
  TOLERANCE_SECONDS,
} from '../../src/provider/signature';
import { MSG_ID, SECRET, newSecret } from '../helpers/fixtures';

const now = 1_790_000_000;
const reference = (secret: string, id: string, seconds: number, body: string): string =>
  new Webhook(secret.replace(/^whsec_/, '')).sign(id, new Date(seconds * 1000), body);

const delivery = (body: string, signature: string, seconds = now) => ({
  id: MSG_ID,
  timestamp: String(seconds),
  signature,
  body,
});

describe('signature verification (standard-webhooks scheme)', () => {
  it("agrees with the provider's reference library for any body", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        fc.integer({ min: -TOLERANCE_SECONDS, max: TOLERANCE_SECONDS }),
        (body, skew) => {
          const signature = reference(SECRET, MSG_ID, now + skew, body);
          expect(verify(delivery(body, signature, now + skew), SECRET, now)).toEqual({ ok: true, seconds: now + skew });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses any change to the body, id or timestamp', () => {
    const body = '{"status":"OPEN"}';
    const signature = reference(SECRET, MSG_ID, now, body);
    expect(verify(delivery('{"status":"OPEN "}', signature), SECRET, now)).toEqual({
      ok: false,
      refusal: 'no-valid-signature',
    });
    expect(verify({ ...delivery(body, signature), id: `${MSG_ID}x` }, SECRET, now)).toEqual({
      ok: false,
      refusal: 'no-valid-signature',
    });
    expect(verify(delivery(body, signature, now - 1), SECRET, now)).toEqual({
      ok: false,
      refusal: 'no-valid-signature',
    });
  });

  it('accepts any one of several space-separated signatures, and ignores other versions', () => {
    const body = '{}';
    const good = reference(SECRET, MSG_ID, now, body);
    const other = reference(newSecret(), MSG_ID, now, body);
    expect(verify(delivery(body, `${other} ${good}`), SECRET, now).ok).toBe(true);
    expect(verify(delivery(body, good.replace('v1,', 'v2,')), SECRET, now).ok).toBe(false);
  });

  it('refuses truncated, empty and badly encoded signatures', () => {
    const body = '{}';
    const good = reference(SECRET, MSG_ID, now, body);
    for (const bad of [good.slice(0, -4), 'v1,', 'v1,!!!!', 'v1', good.replace(/[A-Za-z]/, '#')]) {
      expect(verify(delivery(body, bad), SECRET, now)).toEqual({ ok: false, refusal: 'no-valid-signature' });
    }
  });

  it('holds a five-minute tolerance both ways', () => {
    const body = '{}';
    const at = (seconds: number) =>
      verify(delivery(body, reference(SECRET, MSG_ID, seconds, body), seconds), SECRET, now);
    expect(at(now - TOLERANCE_SECONDS).ok).toBe(true);
    expect(at(now + TOLERANCE_SECONDS).ok).toBe(true);
    expect(at(now - TOLERANCE_SECONDS - 1)).toEqual({ ok: false, refusal: 'too-old' });
    expect(at(now + TOLERANCE_SECONDS + 1)).toEqual({ ok: false, refusal: 'too-new' });
  });

  it('refuses missing headers and non-numeric timestamps', () => {
    expect(checkEnvelope({ id: undefined, timestamp: String(now), signature: 'v1,x', body: '' }, now)).toEqual({
      ok: false,
      refusal: 'missing-headers',
    });
    expect(checkEnvelope({ id: MSG_ID, timestamp: '1.7e9', signature: 'v1,x', body: '' }, now)).toEqual({
      ok: false,
      refusal: 'bad-timestamp',
    });
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
});
