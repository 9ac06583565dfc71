import { randomBytes } from 'node:crypto';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errors } from 'zapier-platform-core';
import { Runtime } from '../../delivery/runtime';
import { ENDPOINTS_KEPT } from '../../limits';
import { clockOf } from '../../zapier/clock';
import type { Io } from '../../zapier/io';
import { newId, newSecret } from '../sandbox/emulator/store';
import { operationsFor } from '../../triggers/auctionStatusChanged';

/**
 * `node dist/tools/bench/memory.js`: what one process keeps while it serves many Zaps under a flood of junk. Each
 * endpoint gets junk deliveries (signed by no secret, naming messages Svix does not have), each a read of Svix; the
 * process keeps what it knows of at most ENDPOINTS_KEPT endpoints however many it serves, and nothing of Svix's
 * messages. Svix is a stand-in in this process: nothing leaves it.
 */

export interface Flood {
  endpoints: number;
  /** Junk deliveries per endpoint. */
  junk: number;
  /** The endpoints the process keeps (ENDPOINTS_KEPT by default). */
  kept?: number;
}

const T0 = Date.UTC(2026, 10, 25, 12);
const SECOND = 1_000;

/** Serves the flood in one runtime on a virtual clock (each wait passes at once); what the runtime holds after. */
export const flood = async (plan: Flood) => {
  let now = T0;
  const clock = clockOf<NodeJS.Immediate>({
    now: () => now,
    setTimeout: (run, ms) => ((now += ms), setImmediate(run)),
    clearTimeout: (timer) => clearImmediate(timer),
  });
  const runtime = new Runtime(clock, plan.kept);
  const { deliver } = operationsFor(runtime);
  const secret = newSecret();
  const cache = new Map<string, unknown>();
  const notFound = JSON.stringify({ code: 'not_found', detail: 'Entity not found' });
  const io: Io = {
    send: async ({ url }) =>
      url.endsWith('/secret')
        ? { status: 200, content: JSON.stringify({ key: secret }) }
        : { status: 404, content: notFound },
    cache: {
      get: async (key) => cache.get(key),
      set: async (key, value, _ttl, nx) => (nx && cache.has(key) ? false : (cache.set(key, value), true)),
    },
    errors,
    log: () => undefined,
  };
  let halted = 0;
  const appId = newId('app', T0);
  for (let endpoint = 0; endpoint < plan.endpoints; endpoint += 1) {
    const id = newId('ep', T0 - 3_600 * SECOND);
    const subscribeData = { id, secret, checkedAt: T0, zap: `zap-${endpoint}`, on: T0 - 3_600 * SECOND, gen: 1 };
    for (let junk = 0; junk < plan.junk; junk += 1) {
      now += 10 * SECOND;
      const headers = {
        'Http-Svix-Id': newId('msg', now - 60 * SECOND),
        'Http-Svix-Timestamp': String(Math.floor(now / SECOND)),
        'Http-Svix-Signature': `v1,${randomBytes(32).toString('base64')}`,
      };
      const bundle = { authData: { apiKey: 'testsk_memory', appId }, subscribeData, inputData: {} };
      await deliver(io, { ...bundle, rawRequest: { content: '{}', headers } }).catch((error: unknown) => {
        if (!(error instanceof errors.HaltedError)) throw error;
        halted += 1;
      });
    }
  }
  return { endpoints: runtime.endpoints.size, halted, runtime };
};

/** What one flood kept, and the process's memory after it (the runtime still held). */
export type MemoryReport = { endpoints: number; halted: number } & {
  heapBeforeMb: number;
  heapUsedMb: number;
  rssMb: number;
  peakRssMb: number;
};

const OPTIONS = {
  ...{ endpoints: { type: 'string' }, junk: { type: 'string' }, kept: { type: 'string' } },
  json: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

/** `npm run bench:memory [-- --endpoints N --junk N --kept N --json]` */
const main = async (argv: string[]) => {
  const { values } = parseArgs({ args: argv, options: OPTIONS });
  const number = (text: string | undefined, otherwise: number) => (text === undefined ? otherwise : Number(text));
  const plan = {
    endpoints: number(values.endpoints, 2 * ENDPOINTS_KEPT),
    junk: number(values.junk, 2),
    kept: number(values.kept, ENDPOINTS_KEPT),
  };
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  const { runtime, endpoints, halted } = await flood(plan);
  global.gc?.();
  const { rss, heapUsed } = process.memoryUsage(); // the runtime still held: what it keeps is counted
  const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  const report: MemoryReport = {
    ...{ endpoints, halted, heapBeforeMb: mb(before), heapUsedMb: mb(heapUsed) },
    ...{ rssMb: mb(rss), peakRssMb: mb(process.resourceUsage().maxRSS * 1024) },
  };
  if (values.json) return void process.stdout.write(`${JSON.stringify(report)}\n`);
  process.stdout.write(
    `memory: endpoints=${plan.endpoints} junk_per_endpoint=${plan.junk} halted=${halted} ` +
      `endpoints_held=${runtime.endpoints.size} of ${plan.kept} heap_before_mb=${report.heapBeforeMb} ` +
      `heap_used_mb=${report.heapUsedMb} rss_mb=${report.rssMb} peak_rss_mb=${report.peakRssMb}` +
      `${global.gc ? '' : ' (run with node --expose-gc for heap figures after a full collection)'}\n`,
  );
};

if (require.main === module) void main(process.argv.slice(2));
