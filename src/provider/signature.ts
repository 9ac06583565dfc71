import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verification of the provider's signed deliveries (the Standard Webhooks
 * scheme the provider uses): HMAC-SHA256 over `{id}.{timestamp}.{body}` with the
 * bytes of the base64 secret after its `whsec_` prefix; the signature header
 * holds space-separated `v1,<base64>` entries (several while a secret is being
 * rotated), any one of which may match; timestamps older or newer than five
 * minutes are refused, which stops replays of captured deliveries.
 */
export const TOLERANCE_SECONDS = 5 * 60;

export interface SignedDelivery {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
  body: string;
}

export type Refusal =
  | 'missing-headers'
  | 'bad-timestamp'
  | 'too-old'
  | 'too-new'
  | 'no-valid-signature'
  | 'bad-secret';

export type Verification = { ok: true; seconds: number } | { ok: false; refusal: Refusal };

/** The key bytes of a `whsec_…` secret, or undefined when it is not base64. */
export const secretKey = (secret: string): Buffer | undefined => {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length > 0 ? key : undefined;
};

export const sign = (key: Buffer, id: string, timestamp: string, body: string): string =>
  createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');

/** Checks the timestamp and headers; the signature itself is checked per secret. */
export const checkEnvelope = (
  delivery: SignedDelivery,
  nowSeconds: number,
): { ok: true; id: string; timestamp: string; seconds: number; signature: string } | { ok: false; refusal: Refusal } => {
  const { id, timestamp, signature } = delivery;
  if (!id || !timestamp || !signature) return { ok: false, refusal: 'missing-headers' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, refusal: 'bad-timestamp' };
  const seconds = Number(timestamp);
  if (seconds < nowSeconds - TOLERANCE_SECONDS) return { ok: false, refusal: 'too-old' };
  if (seconds > nowSeconds + TOLERANCE_SECONDS) return { ok: false, refusal: 'too-new' };
  return { ok: true, id, timestamp, seconds, signature };
};

/** True when one of the header's `v1,` signatures is the HMAC of the delivery under this secret. */
export const signedWith = (secret: string, id: string, timestamp: string, signatureHeader: string, body: string): boolean => {
  const key = secretKey(secret);
  if (!key) return false;
  const expected = Buffer.from(sign(key, id, timestamp, body), 'utf8');
  let matched = false;
  for (const entry of signatureHeader.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const candidate = Buffer.from(entry.slice(comma + 1), 'utf8');
    // Constant time for equal lengths; a different length cannot match anyway.
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  return matched;
};

/** Full verification against one secret. */
export const verify = (delivery: SignedDelivery, secret: string, nowSeconds: number): Verification => {
  const envelope = checkEnvelope(delivery, nowSeconds);
  if (!envelope.ok) return envelope;
  if (!secretKey(secret)) return { ok: false, refusal: 'bad-secret' };
  return signedWith(secret, envelope.id, envelope.timestamp, envelope.signature, delivery.body)
    ? { ok: true, seconds: envelope.seconds }
    : { ok: false, refusal: 'no-valid-signature' };
};

/** Header names as Zapier passes them (`Http-` prefixed), on standard and white-labelled accounts. */
const HEADER_NAMES = {
  id: ['http-svix-id', 'http-webhook-id', 'svix-id', 'webhook-id'],
  timestamp: ['http-svix-timestamp', 'http-webhook-timestamp', 'svix-timestamp', 'webhook-timestamp'],
  signature: ['http-svix-signature', 'http-webhook-signature', 'svix-signature', 'webhook-signature'],
} as const;

/** Reads the signing headers case-insensitively from a header map. */
export const signingHeaders = (
  headers: Readonly<Record<string, unknown>>,
): Pick<SignedDelivery, 'id' | 'timestamp' | 'signature'> => {
  const lower = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') lower.set(name.toLowerCase(), value);
  }
  const pick = (names: readonly string[]): string | undefined => {
    for (const name of names) {
      const value = lower.get(name);
      if (value !== undefined) return value.trim();
    }
    return undefined;
  };
  return { id: pick(HEADER_NAMES.id), timestamp: pick(HEADER_NAMES.timestamp), signature: pick(HEADER_NAMES.signature) };
};
