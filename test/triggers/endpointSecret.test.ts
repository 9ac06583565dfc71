import { randomBytes } from 'node:crypto';
import { isRight } from 'fp-ts/Either';
import { EndpointSecretOut } from '../../src/provider/codecs';
import { ProviderEmulator, type Fault, type FaultContext } from '../../src/sandbox/emulator';
import { newId } from '../../src/sandbox/emulator/store';
import { ProviderClient } from '../../src/setup/client';
import { runSetup } from '../../src/setup/setup';
import { SubscribeData } from '../../src/triggers/delivery';
import { CLAIM_TTL_SECONDS } from '../../src/triggers/claim';
import { knownSecretKey, rereadLockKey, secretSettings } from '../../src/triggers/endpointSecret';
import { failure, newSecret, payload, signedRequest } from '../helpers/fixtures';
import { IDENTITY, usePlatform } from '../helpers/platform';

/**
 * The endpoint's signing secret as deliveries are checked against it: the
 * current one only, re-read when a signature does not match or the secret was
 * read more than ten minutes ago, with reads limited per endpoint. On the
 * provider emulator and the platform stand-in.
 */

const zapier = usePlatform({ delayMs: 1 });
// Some tests wait for the allowance of reads on purpose (seconds each).
jest.setTimeout(30_000);
const KEY = `testsk_${randomBytes(8).toString('hex')}`;
const body = JSON.stringify(payload);
const defaults = { ...secretSettings };

let emulator: ProviderEmulator;
let client: ProviderClient;
let authData: { apiKey: string; appId: string; serverUrl: string };
let zap: SubscribeData;
/** Reads of the endpoint's secret the emulator answered, and the faults to answer the next ones with. */
let secretReads = 0;
let readFaults: Fault[] = [];

const isSecretRead = ({ method, path }: FaultContext) => method === 'GET' && path.endsWith('/secret');

beforeEach(async () => {
  secretReads = 0;
  readFaults = [];
  emulator = new ProviderEmulator({
    apiKey: KEY,
    fault: (context) => {
      if (!isSecretRead(context)) return undefined;
      secretReads += 1;
      return readFaults.shift();
    },
    // A read takes a moment, so reads that could overlap would.
    delayMs: (context) => (isSecretRead(context) ? 50 : undefined),
  });
  const serverUrl = await emulator.start();
  client = new ProviderClient({ baseUrl: serverUrl, apiKey: KEY });
  const { appId } = await runSetup({ client });
  authData = { apiKey: KEY, appId, serverUrl };
  const subscribed = SubscribeData.decode(
    await zapier().subscribe({ authData, targetUrl: 'http://127.0.0.1:9/hooks/standard/1/', inputData: {} }),
  );
  if (!isRight(subscribed)) throw new Error('subscribe returned no endpoint');
  zap = subscribed.right;
  secretReads = 0;
});

afterEach(async () => {
  Object.assign(secretSettings, defaults);
  await emulator.stop();
});

const rotate = async (gracePeriodSeconds: number): Promise<string> => {
  const path = `/api/v1/app/${authData.appId}/endpoint/${zap.id}/secret`;
  await client.call({ method: 'POST', path: `${path}/rotate`, body: { gracePeriodSeconds }, action: 'rotating' });
  const read = await client.call({ method: 'GET', path, action: 'reading the secret' });
  secretReads -= 1;
  return client.decode(EndpointSecretOut, read.body, 'reading the secret').key;
};

const deliver = (secrets: string[], subscribeData: object = zap) =>
  zapier().perform({
    authData,
    subscribeData,
    rawRequest: signedRequest(body, { msgId: newId('msg'), secrets }),
    inputData: {},
  });

const ran = (result: unknown) => Array.isArray(result) && result.length === 1;

describe("the endpoint's current secret", () => {
  it('a delivery after an immediate rotation runs, and one signed only with the old secret is then refused', async () => {
    const rotated = await rotate(0);
    await expect(deliver([rotated])).resolves.toHaveLength(1);
    expect(secretReads).toBe(1);
    const refused = await failure(deliver([zap.secret]));
    expect(refused.name).toBe('HaltedError');
    // In another process too: the cache says which secret is current.
    zapier().coldStart();
    expect((await failure(deliver([zap.secret]))).name).toBe('HaltedError');
    await expect(deliver([rotated])).resolves.toHaveLength(1);
    expect(zapier().platform.peek(IDENTITY, knownSecretKey(zap.id))).toEqual(
      expect.objectContaining({ secret: rotated }),
    );
  });

  it('keeps what it read in z.cache, scoped to the connection, behind a short lock taken with nx', async () => {
    const rotated = await rotate(0);
    zapier().platform.resetCalls();
    await expect(deliver([rotated])).resolves.toHaveLength(1);
    const calls = zapier()
      .calls()
      .filter((call) => call.key === knownSecretKey(zap.id) || call.key === rereadLockKey(zap.id));
    expect(calls).toEqual([
      expect.objectContaining({ method: 'zcache_get', key: knownSecretKey(zap.id), scope: ['auth'] }),
      expect.objectContaining({ method: 'zcache_set', key: rereadLockKey(zap.id), ttl: 15, scope: ['auth'], nx: true }),
      expect.objectContaining({ method: 'zcache_get', key: knownSecretKey(zap.id), scope: ['auth'] }),
      expect.objectContaining({
        method: 'zcache_set',
        key: knownSecretKey(zap.id),
        ttl: CLAIM_TTL_SECONDS,
        scope: ['auth'],
        nx: false,
      }),
      // Released only by its holder: read back, then deleted.
      expect.objectContaining({ method: 'zcache_get', key: rereadLockKey(zap.id), scope: ['auth'] }),
      expect.objectContaining({ method: 'zcache_delete', key: rereadLockKey(zap.id), scope: ['auth'] }),
    ]);
  });

  it('during a grace period, deliveries signed with both secrets run without a read', async () => {
    const rotated = await rotate(3600);
    await expect(deliver([rotated, zap.secret])).resolves.toHaveLength(1);
    await expect(deliver([zap.secret, rotated])).resolves.toHaveLength(1);
    expect(secretReads).toBe(0);
  });

  it('a genuine delivery signed with a new secret runs right after a forgery', async () => {
    expect((await failure(deliver([newSecret()]))).name).toBe('HaltedError');
    const rotated = await rotate(0);
    await expect(deliver([rotated])).resolves.toHaveLength(1);
    expect(secretReads).toBe(2);
  });

  it('a secret read more than ten minutes ago is read again first: a revoked one is refused at once', async () => {
    const elevenMinutesAgo = Date.now() - 11 * 60_000;
    const stale = { ...zap, checkedAt: elevenMinutesAgo };
    await rotate(0);
    expect((await failure(deliver([zap.secret], stale))).name).toBe('HaltedError');
    expect(secretReads).toBe(1);
  });

  it('a stale secret that still matches runs, and is then fresh again', async () => {
    const stale = { ...zap, checkedAt: Date.now() - 11 * 60_000 };
    await expect(deliver([zap.secret], stale)).resolves.toHaveLength(1);
    await expect(deliver([zap.secret], stale)).resolves.toHaveLength(1);
    expect(secretReads).toBe(1);
  });

  it('12 simultaneous genuine deliveries after a rotation all run, after one read', async () => {
    const rotated = await rotate(0);
    const results = await Promise.all(Array.from({ length: 12 }, () => deliver([rotated])));
    expect(results.filter(ran)).toHaveLength(12);
    expect(secretReads).toBe(1);
  });

  it('a provider error or time-out during the read is tried again, and the delivery runs', async () => {
    secretSettings.readTimeoutMs = 300;
    const rotated = await rotate(0);
    readFaults = [{ kind: 'reply', status: 503, body: '' }];
    await expect(deliver([rotated])).resolves.toHaveLength(1);
    const again = await rotate(0);
    readFaults = [{ kind: 'hang' }];
    await expect(deliver([again])).resolves.toHaveLength(1);
  });

  it('a read that fails twice is an error a person sees in the Zap history, not a silent refusal', async () => {
    const rotated = await rotate(0);
    readFaults = [
      { kind: 'reply', status: 503, body: '' },
      { kind: 'reply', status: 503, body: '' },
    ];
    const failed = await failure(deliver([rotated]));
    expect(failed.code).toBe('ProviderUnavailable');
    expect(failed.message).toMatch(/The Zap did not run for this event/);
  });
});

describe('a secret read more than ten minutes ago', () => {
  it('is not trusted while a read is under way: deliveries signed with a revoked secret wait, then halt', async () => {
    const stale = { ...zap, checkedAt: Date.now() - 11 * 60_000 };
    await rotate(0);
    const results = await Promise.all(Array.from({ length: 6 }, () => failure(deliver([zap.secret], stale))));
    expect(results.map((refused) => refused.name)).toEqual(Array.from({ length: 6 }, () => 'HaltedError'));
    expect(secretReads).toBe(1);
  });
});

describe('reads of the secret are limited per endpoint', () => {
  it('counts reads that failed, across processes: a new process finds the allowance spent', async () => {
    secretSettings.waitMs = 500;
    const rotated = await rotate(0);
    readFaults = Array.from({ length: 6 }, () => ({ kind: 'reply', status: 503, body: '' }) satisfies Fault);
    for (let index = 0; index < 3; index += 1) {
      zapier().coldStart();
      expect((await failure(deliver([rotated]))).code).toBe('ProviderUnavailable');
    }
    expect(secretReads).toBe(6);
    zapier().coldStart();
    expect((await failure(deliver([rotated]))).name).toBe('HaltedError');
    expect(secretReads).toBe(6);
  });

  it('12 simultaneous forgeries: all refused, a burst of 3 reads at most, one at a time', async () => {
    secretSettings.waitMs = 1_000;
    const results = await Promise.all(Array.from({ length: 12 }, () => failure(deliver([newSecret()]))));
    // Halts, every one: errors would count towards Zapier turning the Zap off.
    expect(results.map((refused) => refused.name)).toEqual(Array.from({ length: 12 }, () => 'HaltedError'));
    expect(secretReads).toBeGreaterThanOrEqual(1);
    expect(secretReads).toBeLessThanOrEqual(3);
    const inFlight = emulator.stats().maxInFlight[`GET /api/v1/app/${authData.appId}/endpoint/${zap.id}/secret`];
    expect(inFlight).toBe(1);
  });

  it('forgeries one after another: a burst of 3 reads, then none until the allowance refills', async () => {
    // Each later forgery waits 1.5 s for the allowance: a refill faster than one per 10 s would show.
    secretSettings.waitMs = 1_500;
    for (let index = 0; index < 6; index += 1) {
      expect((await failure(deliver([newSecret()]))).name).toBe('HaltedError');
    }
    expect(secretReads).toBe(3);
  });

  it('a genuine delivery after a rotation in a flood waits for the allowance, then runs', async () => {
    secretSettings.refillMs = 400;
    secretSettings.waitMs = 3_000;
    for (let index = 0; index < 3; index += 1) await failure(deliver([newSecret()]));
    const rotated = await rotate(0);
    await expect(deliver([rotated])).resolves.toHaveLength(1);
    expect(secretReads).toBe(4);
  });
});
