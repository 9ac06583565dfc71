import { secretKey, sign } from '../../svix/signature';

/**
 * The one signer of the tools (the emulator, the simulation, the contract suite): `v1,<sig>` for each secret,
 * space-separated, as Svix signs during a rotation. Tests sign with Svix's reference library (standardwebhooks)
 * instead, so that this and the app's check are held against it.
 */
export const signatureHeader = (secrets: readonly string[], id: string, timestamp: string, body: string): string =>
  secrets
    .map((secret) => secretKey(secret))
    .filter((key): key is Buffer => key !== undefined)
    .map((key) => `v1,${sign(key, id, timestamp, body)}`)
    .join(' ');
