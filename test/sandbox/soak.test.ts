import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { soakLine, type SoakResult } from '../../src/tools/sandbox/soak';

/**
 * A small soak in every test run (the full 10,000 events are `npm run soak`): real HTTP deliveries from the
 * emulator into perform, z.cache on the platform stand-in, with five times the usual share of overlapping
 * redeliveries, forgeries (some signed with a revoked secret, some under a real message's id), transient endpoint
 * failures and cache faults (throttles among them); five rotations of the endpoint's secret, made as soon as they
 * are due while deliveries signed with the old secret wait in the queue, each of whose first read meets a
 * Svix fault, and each followed by a burst of junk; the shared history throttled every other call, Svix's
 * clock a minute behind, and a share of performs in bare processes as AWS Lambda runs them.
 * It runs as `npm run soak` does, in a process of its own: zapier-platform-core
 * stops a process past 250 invocations once it holds 450 MB, and a test
 * worker holds much of that already. Like `npm run soak`, the process holds
 * V8's heap to 256 MB, as a Lambda of modest size does: the soak's live data
 * stays near 50 MB, and with an unbounded heap V8 lets garbage pile up past
 * core's limit before collecting it.
 */

const Result = t.type({
  seed: t.number,
  events: t.number,
  zapRuns: t.number,
  lost: t.number,
  doubled: t.number,
  forgedAccepted: t.number,
  forged: t.number,
  forgedRefused: t.number,
  forgedReplays: t.number,
  forgedWithRevoked: t.number,
  revokedUnsent: t.number,
  redelivered: t.number,
  overlapping: t.number,
  duplicatesDropped: t.number,
  transientFailures: t.number,
  svixRetries: t.number,
  endpointUnanswered: t.number,
  notServed: t.number,
  cacheFaults: t.number,
  unclaimed: t.number,
  rotations: t.number,
  edit: t.string,
  secretReads: t.number,
  secretReadFaults: t.number,
  recordReads: t.number,
  junkBurst: t.number,
  junkSvixCalls: t.number,
  otherCacheFaults: t.number,
  failedRuns: t.number,
  bareRuns: t.number,
  silentExits: t.number,
  lostDetail: t.array(t.string),
  failedDetail: t.array(t.string),
  peakRssMb: t.number,
  seconds: t.number,
});

const soak = async (args: string[]): Promise<{ code: number | null; result: SoakResult }> => {
  // With V8's heap held to 256 MB, as `npm run soak` runs it (see package.json).
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=256', resolve(__dirname, '../../dist/tools/sandbox/soak.js'), ...args],
    {
      env: { ...process.env, NODE_ENV: 'test' },
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const [code] = await once(child, 'exit');
  const last = out.trim().split('\n').pop() ?? '';
  const decoded = Result.decode(JSON.parse(last));
  if (!isRight(decoded)) throw new Error(`the soak printed no result: ${out.slice(-500)}`);
  return { code: typeof code === 'number' ? code : null, result: decoded.right };
};

/** The seed of the plan this soak runs (any seed must pass: `npm run soak -- --seed N` tries others). */
const SEED = 2_801;

describe('soak (small)', () => {
  it('loses nothing, runs nothing twice and lets no forgery through, whatever comes at once', async () => {
    const { code, result } = await soak([
      ...['--seed', String(SEED), '--events', '400', '--share', '0.05', '--rotations', '5', '--other-cache-faults'],
      ...['--svix-clock-behind', '60', '--junk-bursts', '8', '--bare', '0.05', '--json'],
    ]);
    expect(result.lostDetail).toEqual([]);
    expect(result.failedDetail).toEqual([]);
    expect(code).toBe(0);
    expect(result).toMatchObject({ events: 400, zapRuns: 400, lost: 0, doubled: 0, forgedAccepted: 0 });
    expect(result).toMatchObject({ failedRuns: 0, unclaimed: 0, silentExits: 0, seed: SEED, rotations: 5 });
    // The Zap was edited half-way, deliveries in flight (this seed: its old version turned off first, same URL).
    expect(result.edit).toBe('unsubscribe-first/same-url');
    // A share of performs ran as Zapier's runtime runs them, each cold in a process of its own.
    expect(result.bareRuns).toBeGreaterThan(10);
    // The hostile parts really happened: every kind of forgery (those signed with a revoked secret wait until
    // the integration has seen one replaced, so how many go depends on timing), redeliveries overlapping the
    // first, endpoint failures, cache faults, a fault on each rotation's first read, junk after each rotation.
    expect(result.forged).toBe(20);
    // Those signed with a revoked secret went once this process had read the new one: revocation was tried.
    expect(result.forgedWithRevoked).toBeGreaterThan(0);
    expect(result.revokedUnsent).toBe(0);
    // Every forgery but the replays of a real id (run once, as the real event), and every junk delivery, is refused.
    expect(result.forgedRefused).toBe(result.forged - result.forgedReplays + result.junkBurst);
    expect(result.redelivered).toBe(20);
    expect(result.duplicatesDropped).toBeGreaterThanOrEqual(result.redelivered);
    expect(result.overlapping).toBeGreaterThan(0);
    expect(result.transientFailures).toBeGreaterThan(0);
    // Svix retries each, each attempt the hook runner did not answer in time (a busy machine makes some), and those
    // of its schedule that met the edit's hook serving no Zap for a moment (its catch-up's are not retried).
    const retried = result.transientFailures + result.endpointUnanswered;
    expect(result.svixRetries).toBeGreaterThanOrEqual(retried);
    expect(result.svixRetries).toBeLessThanOrEqual(retried + result.notServed);
    expect(result.cacheFaults).toBeGreaterThan(0);
    expect(result.secretReadFaults).toBe(5);
    expect(result.otherCacheFaults).toBeGreaterThan(0);
    expect(result.junkBurst).toBe(40);
    // Forged replays and deliveries signed before a rotation were decided by Svix's copy of their message.
    expect(result.recordReads).toBeGreaterThan(0);
    expect(soakLine(result)).toMatch(
      /^soak: seed=2801 events=400 zap_runs=400 lost=0 doubled=0 forged_accepted=0 .*unclaimed=0 .* other_cache_faults=[1-9]\d* junk_burst=40 .*peak_rss_mb=\d+/,
    );
  }, 120_000);

  it('refuses options it cannot use, with the usage', async () => {
    const child = spawn(process.execPath, [resolve(__dirname, '../../dist/tools/sandbox/soak.js'), '--share', '2']);
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(err).toMatch(/--share S/);
  });
});
