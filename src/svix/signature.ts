import { createHmac, timingSafeEqual } from 'node:crypto';
import { SVIX_CLOCK_ALLOWANCE_MS } from '../limits';

/**
 * Verification of Svix's signed deliveries (the Standard Webhooks
 * scheme Svix uses): HMAC-SHA256 over `{id}.{timestamp}.{body}` with the
 * bytes of the base64 secret after its `whsec_` prefix; the signature header
 * holds space-separated `v1,<base64>` entries (several while a secret is being
 * rotated), any one of which may match. Which signing times are accepted is the
 * caller's window: what stops a replay is the message id, remembered as long
 * as the window is open.
 */

/** How far apart two clocks may be: Svix's, which signs, and the one that checks. */
export const CLOCK_ALLOWANCE_SECONDS = SVIX_CLOCK_ALLOWANCE_MS / 1_000;

/** The signing times a check accepts, in seconds before and after now. */
export interface SigningWindow {
  maxAgeSeconds: number;
  maxAheadSeconds: number;
}

export interface SignedDelivery {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
  body: string;
}

export type Refusal = 'missing-headers' | 'bad-timestamp' | 'too-old' | 'too-new' | 'no-valid-signature';

/** The key bytes of a `whsec_…` secret, or undefined when it is not base64. */
export const secretKey = (secret: string): Buffer | undefined => {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length > 0 ? key : undefined;
};

/** The base64 `v1` signature of a delivery, as Svix sends it. */
export const sign = (key: Buffer, id: string, timestamp: string, body: string): string =>
  createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');

const TIMESTAMP_PATTERN = /^\d{1,12}$/;

export type Envelope =
  { ok: true; id: string; timestamp: string; seconds: number; signature: string } | { ok: false; refusal: Refusal };

/** Checks that the three headers are there and the signing time is inside the window; the signature is checked per secret. */
export const checkEnvelope = (
  delivery: Pick<SignedDelivery, 'id' | 'timestamp' | 'signature'>,
  nowSeconds: number,
  window: SigningWindow,
): Envelope => {
  const { id, timestamp, signature } = delivery;
  if (!id || !timestamp || !signature) return { ok: false, refusal: 'missing-headers' };
  if (!TIMESTAMP_PATTERN.test(timestamp)) return { ok: false, refusal: 'bad-timestamp' };
  const seconds = Number(timestamp);
  if (seconds < nowSeconds - window.maxAgeSeconds) return { ok: false, refusal: 'too-old' };
  if (seconds > nowSeconds + window.maxAheadSeconds) return { ok: false, refusal: 'too-new' };
  return { ok: true, id, timestamp, seconds, signature };
};

/**
 * True when one of the header's space-separated `v1,` signatures is the HMAC of the delivery under this secret. The
 * digest is compared as the base64 text Svix sends (as its reference library does), through Node's timingSafeEqual,
 * and every entry is compared, so neither a match nor where it is shows in the time taken.
 */
export const signedWith = (
  secret: string,
  id: string,
  timestamp: string,
  signatureHeader: string,
  body: string,
): boolean => {
  const key = secretKey(secret);
  if (!key) return false;
  const expected = Buffer.from(sign(key, id, timestamp, body), 'utf8');
  let matched = false;
  for (const entry of signatureHeader.split(' ')) {
    const candidate = Buffer.from(entry.startsWith('v1,') ? entry.slice(3) : '', 'utf8');
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  return matched;
};

/** signedWith for one delivery, each secret checked once however often it is asked. */
export const signer = (id: string, timestamp: string, signatureHeader: string, body: string) => {
  const checked = new Map<string, boolean>();
  return (secret: string): boolean => {
    const known = checked.get(secret) ?? signedWith(secret, id, timestamp, signatureHeader, body);
    checked.set(secret, known);
    return known;
  };
};

/** Header names as Zapier passes them (`Http-` prefixed), on standard and white-labelled accounts. */
const HEADER_NAMES = {
  id: ['http-svix-id', 'http-webhook-id', 'svix-id', 'webhook-id'],
  timestamp: ['http-svix-timestamp', 'http-webhook-timestamp', 'svix-timestamp', 'webhook-timestamp'],
  signature: ['http-svix-signature', 'http-webhook-signature', 'svix-signature', 'webhook-signature'],
} as const;

type SigningHeader = keyof typeof HEADER_NAMES;
/** Each name, lower case: the header it gives, and its rank there (the first name present wins). */
const NAMED = new Map<string, { header: SigningHeader; rank: number }>();
for (const header of ['id', 'timestamp', 'signature'] as const) {
  HEADER_NAMES[header].forEach((name, rank) => NAMED.set(name, { header, rank }));
}

/** Reads the signing headers case-insensitively from a header map. */
export const signingHeaders = (headers: Readonly<Record<string, unknown>>): Pick<SignedDelivery, SigningHeader> => {
  const found: Pick<SignedDelivery, SigningHeader> = { id: undefined, timestamp: undefined, signature: undefined };
  const ranks = { id: Infinity, timestamp: Infinity, signature: Infinity };
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    const named = NAMED.get(name.toLowerCase());
    // A later header of the same name replaces an earlier one.
    if (typeof value !== 'string' || named === undefined || named.rank > ranks[named.header]) continue;
    ranks[named.header] = named.rank;
    found[named.header] = value.trim();
  }
  return found;
};
