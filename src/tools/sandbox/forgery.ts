import { secretKey, sign } from '../../svix/signature';
import { newSecret } from './emulator/store';
import type { Zap } from './hookRunner';

/**
 * Deliveries that did not come from Svix now, for the story and the
 * soak. None may run a Zap with what it carries: each is refused, or (a real
 * message's id signed with a revoked secret) runs with Svix's own copy
 * of that message at most once, never with the forged body.
 */

export type Forgery =
  | 'wrong-secret'
  | 'tampered-body'
  | 'signed-8-days-ago'
  | 'no-signature'
  /** Signed with a secret the endpoint had, revoked since, under a made-up message id. */
  | 'revoked-secret'
  /** Signed with a revoked secret, under a real message's id, with another body. */
  | 'replayed-id-other-body';
export const FORGERIES: readonly Forgery[] = [
  'wrong-secret',
  'tampered-body',
  'signed-8-days-ago',
  'no-signature',
  'revoked-secret',
  'replayed-id-other-body',
];

/** What a forgery needs beyond the Zap: a secret the endpoint had before (when there was a rotation). */
export interface ForgeryMaterial {
  /** A secret the endpoint had, revoked since; a secret it never had stands in before the first rotation. */
  revokedSecret?: string;
}

/** The body every forgery carries: an auction and auctioneer that do not exist. */
const FORGED_PAYLOAD = {
  auctioneerUuid: 'forged-auctioneer',
  auctionUuid: 'forged-auction',
  status: 'LOTS_SOLD',
} as const;

/** Whether a delivery's body is a forgery's (every forgery carries the same made-up auction). */
export const isForgedBody = (content: string): boolean => content.includes(`"${FORGED_PAYLOAD.auctionUuid}"`);

/** A delivery that did not come from Svix now, in one of several shapes, under the message id given. */
export const forge = async (zap: Zap, kind: Forgery, id: string, material: ForgeryMaterial = {}): Promise<void> => {
  const body = JSON.stringify(FORGED_PAYLOAD);
  const now = Math.floor(Date.now() / 1000);
  const realKey = secretKey(zap.subscribeData.secret);
  const otherKey = secretKey(newSecret());
  const revokedKey = secretKey(material.revokedSecret ?? newSecret());
  if (!realKey || !otherKey || !revokedKey) throw new Error('the sandbox secret is not base64');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'svix-id': id,
    'svix-timestamp': String(now),
  };
  let sent = body;
  switch (kind) {
    case 'wrong-secret':
      headers['svix-signature'] = `v1,${sign(otherKey, id, String(now), body)}`;
      break;
    case 'tampered-body':
      // Signed by the real secret, then changed on the way.
      headers['svix-signature'] = `v1,${sign(realKey, id, String(now), body)}`;
      sent = body.replace('LOTS_SOLD', 'OPEN_FOR_BIDDING');
      break;
    case 'signed-8-days-ago': {
      // Signed with the real secret, but longer ago than the Zap remembers which messages it ran.
      const then = String(now - 8 * 24 * 60 * 60);
      headers['svix-timestamp'] = then;
      headers['svix-signature'] = `v1,${sign(realKey, id, then, body)}`;
      break;
    }
    case 'revoked-secret':
    case 'replayed-id-other-body':
      // Whoever kept a revoked secret: the id decides which of the two this is.
      headers['svix-signature'] = `v1,${sign(revokedKey, id, String(now), body)}`;
      break;
    case 'no-signature':
      break;
  }
  await fetch(zap.targetUrl, { method: 'POST', headers, body: sent });
};
