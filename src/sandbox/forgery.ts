import { secretKey, sign } from '../provider/signature';
import { newSecret } from './emulator/store';
import type { Zap } from './hookRunner';

/**
 * Deliveries that did not come from the provider now, for the story and the
 * soak: each must be refused by the Zap's perform.
 */

export type Forgery = 'wrong-secret' | 'tampered-body' | 'signed-8-days-ago' | 'no-signature';
export const FORGERIES: readonly Forgery[] = ['wrong-secret', 'tampered-body', 'signed-8-days-ago', 'no-signature'];

/** A delivery that did not come from the provider now, in one of several shapes. */
export const forge = async (zap: Zap, kind: Forgery, id: string): Promise<void> => {
  const body = JSON.stringify({
    auctioneerUuid: 'forged-auctioneer',
    auctionUuid: 'forged-auction',
    status: 'LOTS_SOLD',
  });
  const now = Math.floor(Date.now() / 1000);
  const realKey = secretKey(zap.subscribeData.secret);
  const otherKey = secretKey(newSecret());
  if (!realKey || !otherKey) throw new Error('the sandbox secret is not base64');
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
    case 'no-signature':
      break;
  }
  await fetch(zap.targetUrl, { method: 'POST', headers, body: sent });
};
