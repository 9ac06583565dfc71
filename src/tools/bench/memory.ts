import { randomBytes } from 'node:crypto';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errors } from 'zapier-platform-core';
import { LIMITS, Runtime } from '../../delivery/runtime';
import { clockOf } from '../../zapier/clock';
import type { Io } from '../../zapier/io';
import { newId, newSecret } from '../sandbox/emulator/store';
import { operationsFor } from '../../triggers/auctionStatusChanged';

/**
 * `node dist/tools/bench/memory.js`: what one process keeps while it serves many Zaps under a flood of junk. Each
 * endpoint gets junk deliveries claiming messages in windows Svix's record fills to the page limit, so every
 * listing the allowance lets through is as large as Svix makes them; the process must stay within its budget
 * (Runtime's limits) however many endpoints it serves. Svix is a stand-in in this process: nothing leaves it.
 */

export interface Flood {
  endpoints: number;
  /** Junk deliveries per endpoint, each in a window of its own. */
  junk: number;
  /** Pages Svix answers for each listing, of 250 messages each. */
  pages: number;
  payloadBytes: number;
  limits?: typeof LIMITS;
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
  const runtime = new Runtime(clock, plan.limits ?? LIMITS);
  const { deliver } = operationsFor(runtime);
  const secret = newSecret();
  const cache = new Map<string, unknown>();
  const filler = 'x'.repeat(plan.payloadBytes);
  const page = (after: string, index: number) => ({
    data: Array.from({ length: 250 }, () => ({
      id: newId('msg', Date.parse(after) + SECOND),
      eventType: 'AUCTION_STATUS_CHANGE',
      payload: { auctioneerUuid: 'a', auctionUuid: 'b', status: 'OPEN', filler },
      timestamp: new Date(Date.parse(after) + SECOND).toISOString(),
    })),
    done: index + 1 >= plan.pages,
    iterator: `page-${index + 1}`,
  });
  const io: Io = {
    send: async ({ url, params }) => {
      if (url.endsWith('/secret')) return { status: 200, content: JSON.stringify({ key: secret }) };
      const index = Number(String(params?.iterator ?? 'page-0').slice(5));
      return { status: 200, content: JSON.stringify(page(String(params?.after), index)) };
    },
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
    const subscribeData = { id: newId('ep', T0 - 3_600 * SECOND), secret, checkedAt: T0 };
    for (let junk = 0; junk < plan.junk; junk += 1) {
      now += 10 * SECOND;
      const id = newId('msg', now - 60 * SECOND - junk * 2 * SECOND);
      const headers = {
        'Http-Svix-Id': id,
        'Http-Svix-Timestamp': String(Math.floor(now / SECOND)),
        'Http-Svix-Signature': `v1,${randomBytes(32).toString('base64')}`,
      };
      const bundle = { authData: { apiKey: 'testsk_memory', appId }, subscribeData, inputData: {} };
      await Promise.resolve(deliver(io, { ...bundle, rawRequest: { content: '{}', headers } })).catch((error) => {
        if (!(error instanceof errors.HaltedError)) throw error;
        halted += 1;
      });
    }
  }
  return { ...runtime.held(), halted, runtime };
};

/** What one flood kept, and the process's memory after it (the runtime still held). */
export type MemoryReport =
  Awaited<ReturnType<typeof flood>> extends infer H
    ? Omit<H, 'runtime'> & { heapBeforeMb: number; heapUsedMb: number; rssMb: number; peakRssMb: number }
    : never;

const OPTIONS = {
  ...{ endpoints: { type: 'string' }, junk: { type: 'string' }, pages: { type: 'string' } },
  ...{ 'payload-bytes': { type: 'string' }, 'limit-endpoints': { type: 'string' }, 'limit-bytes': { type: 'string' } },
  json: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

/** `npm run bench:memory [-- --endpoints N --junk N --pages N --payload-bytes N --limit-endpoints N --limit-bytes N --json]` */
const main = async (argv: string[]) => {
  const { values } = parseArgs({ args: argv, options: OPTIONS });
  const number = (text: string | undefined, otherwise: number) => (text === undefined ? otherwise : Number(text));
  const plan = {
    endpoints: number(values.endpoints, 1_000),
    junk: number(values.junk, 2),
    pages: number(values.pages, 10),
    payloadBytes: number(values['payload-bytes'], 400),
    limits: {
      endpoints: number(values['limit-endpoints'], LIMITS.endpoints),
      recordBytes: number(values['limit-bytes'], LIMITS.recordBytes),
    },
  };
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  const { runtime, ...held } = await flood(plan);
  global.gc?.();
  const { rss, heapUsed } = process.memoryUsage(); // the runtime still held: what it keeps is counted
  const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  const report: MemoryReport = {
    ...{ ...held, endpoints: runtime.held().endpoints, heapBeforeMb: mb(before), heapUsedMb: mb(heapUsed) },
    ...{ rssMb: mb(rss), peakRssMb: mb(process.resourceUsage().maxRSS * 1024) },
  };
  if (values.json) return void process.stdout.write(`${JSON.stringify(report)}\n`);
  process.stdout.write(
    `memory: endpoints=${plan.endpoints} junk_per_endpoint=${plan.junk} pages_per_listing=${plan.pages} ` +
      `halted=${held.halted} endpoints_held=${report.endpoints} record_mb=${mb(held.recordBytes)} ` +
      `budget_mb=${mb(plan.limits.recordBytes)} heap_before_mb=${report.heapBeforeMb} ` +
      `heap_used_mb=${report.heapUsedMb} rss_mb=${report.rssMb} peak_rss_mb=${report.peakRssMb}` +
      `${global.gc ? '' : ' (run with node --expose-gc for heap figures after a full collection)'}\n`,
  );
};

if (require.main === module) void main(process.argv.slice(2));
