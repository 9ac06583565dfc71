import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { encodeKsuidMs } from '../../src/svix/ksuid';
import { errorDetails, type ErrorDetails } from '../../src/tools/sandbox/errorDetails';

/** Made-up credentials in Svix's formats. None of them is real. */
export const API_KEY = 'testsk_sandboxKey0123456789abcdefghij';
export const EU_API_KEY = `${API_KEY}.eu`;
export const APP_ID = 'app_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9';
export const ENDPOINT_ID = 'ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Hk1';
/** A message id as Svix makes them: it carries the time the message was created. */
export const messageIdAt = (epochMs: number): string => `msg_${encodeKsuidMs(epochMs, randomBytes(15))}`;
/** The message the tests deliver: created a day before they run, on a whole second (its id says so). */
export const MSG_TIME = Math.floor(Date.now() / 1000) * 1000 - 24 * 60 * 60 * 1000;
export const MSG_ID = messageIdAt(MSG_TIME);
/** MSG_TIME as the Zap's Occurred At shows it. */
export const MSG_OCCURRED_AT = new Date(MSG_TIME).toISOString().replace('.000Z', '+00:00');
export const PROVIDER = 'https://api.svix.com';
export const TARGET_URL = 'https://hooks.zapier.com/hooks/standard/1234567/abcdef0123456789/';

export const authData = { apiKey: API_KEY, appId: APP_ID };

export { newSecret } from '../../src/tools/sandbox/emulator/store';
export const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** What performSubscribe stored for the Zap the tests deliver to, on the platform, when this file was loaded: its
 * scope is its endpoint's id (any text is a scope), so that its claims are keyed by that id. */
export const subscription = { id: ENDPOINT_ID, secret: SECRET, checkedAt: Date.now(), zap: ENDPOINT_ID, on: 0, gen: 1 };

export const payload = {
  auctioneerUuid: '0e7c2f44-3b8e-4f6d-a1d2-9c5b8e7a4f20',
  auctionUuid: '5b0f1c1e-8d2a-4c59-9a37-2f1f7e0b6c11',
  status: 'OPEN_FOR_BIDDING',
};

export interface DeliveryOptions {
  msgId?: string;
  at?: Date;
  secrets?: string[];
  headerPrefix?: 'Http-Svix' | 'Http-Webhook';
}

/**
 * A delivery as Zapier hands it to perform: the raw body and Svix's
 * headers with Zapier's `Http-` prefix, signed with Svix's reference
 * library (standardwebhooks), not with the code under test.
 */
export const signedRequest = (body: string, options: DeliveryOptions = {}) => {
  const msgId = options.msgId ?? MSG_ID;
  const at = options.at ?? new Date(Date.now());
  const secrets = options.secrets ?? [SECRET];
  const prefix = options.headerPrefix ?? 'Http-Svix';
  const signature = secrets.map((secret) => new Webhook(secret.replace(/^whsec_/, '')).sign(msgId, at, body)).join(' ');
  return {
    content: body,
    headers: {
      'Content-Type': 'application/json',
      [`${prefix}-Id`]: msgId,
      [`${prefix}-Timestamp`]: String(Math.floor(at.getTime() / 1000)),
      [`${prefix}-Signature`]: signature,
    },
  };
};

export { errorDetails, type ErrorDetails } from '../../src/tools/sandbox/errorDetails';

/** Runs a promise that must fail and returns the platform error's details. */
export const failure = async (promise: Promise<unknown>): Promise<ErrorDetails> => {
  try {
    await promise;
  } catch (error) {
    return errorDetails(error);
  }
  throw new Error('expected the call to fail, but it succeeded');
};
