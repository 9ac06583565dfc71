import { createHook } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import { ClientRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import type * as Core from 'zapier-platform-core';

/**
 * One operation of the built app in a process of its own, as Zapier's runtime
 * (AWS Lambda) runs it: core's handler, and nothing else on the event loop.
 * Lambda ends an invocation when the loop drains, answered or not; so does
 * Node, so a process that exits here without printing its answer is an
 * operation the platform would have cut off (a delivery lost, silently).
 *
 *   node dist/tools/sandbox/bareRunner.js <entry> <event.json>
 *
 * <entry>: the app's index.js (core's createAppHandler is made for it), or a
 * built zip's zapierwrapper.js (its own handler). Prints one line, BARE_MARK
 * and the answer as JSON, with what still held the process open when it
 * answered and how many requests it made other than to the platform (its
 * z.cache and logs): the calls to Svix; then, as the process exits, how long
 * after the answer that was.
 */

export const BARE_MARK = '@@bare-process ';

const Handled = t.type({ results: t.unknown }, 'HandlerOutput');
const Wrapper = t.type({ handler: t.Function }, 'ZapierWrapper');
/** Core's event, as the platform sends it; its other fields pass through as they are (io-ts keeps them). */
const HandlerEvent = t.type({ command: t.keyof({ execute: null, definition: null }) }, 'HandlerEvent');
type Handler = (event: t.TypeOf<typeof HandlerEvent>) => Promise<unknown>;

const say = (line: object): void => void process.stdout.write(`\n${BARE_MARK}${JSON.stringify(line)}\n`);

const handlerFor = (entry: string): Handler => {
  const load = createRequire(entry);
  if (basename(entry) === 'zapierwrapper.js') {
    const wrapper: unknown = load(entry);
    if (!isRight(Wrapper.decode(wrapper))) throw new Error(`${entry} exports no handler`);
    return (event) => Promise.resolve(Reflect.apply(Reflect.get(Object(wrapper), 'handler'), undefined, [event]));
  }
  const core: typeof Core = load('zapier-platform-core');
  const handler = core.createAppHandler(entry);
  return (event) => Promise.resolve(handler(event));
};

/**
 * Timers not yet fired or cleared, each with the file that set it, seen through async_hooks (which only
 * watches: it holds nothing open). Core's own logger leaves one of 200 ms when it has sent logs.
 */
const timers = new Map<number, { timer: object; ms: number; setBy: string }>();
const setBy = (stack: string): string =>
  stack
    .split('\n')
    .slice(1)
    .map((frame) => /\((\/[^:)]+)/.exec(frame)?.[1] ?? /at (\/[^:]+)/.exec(frame)?.[1])
    .find((file) => file !== undefined && file !== __filename) ?? 'node';
/** Starts watching, in the bare process only: a process that imports BARE_MARK (the soak's) pays nothing for it. */
const watchTimers = (): void =>
  void createHook({
    init(id, type, _trigger, resource) {
      if (type !== 'Timeout') return;
      const ms = Number(Reflect.get(Object(resource), '_idleTimeout'));
      timers.set(id, { timer: Object(resource), ms, setBy: setBy(new Error().stack ?? '') });
    },
    destroy(id) {
      timers.delete(id);
    },
  }).enable();

/**
 * What would still hold the process open: each ref'd timer (unref'd ones do not) that has neither fired nor been
 * cleared (Node marks both `_destroyed` at once; the destroy hook comes later), and where it was set.
 */
const pending = (): Array<{ ms: number; setBy: string }> =>
  [...timers.values()]
    .filter(
      ({ timer }) =>
        Reflect.get(timer, '_destroyed') !== true && Reflect.apply(Reflect.get(timer, 'hasRef'), timer, []) === true,
    )
    .map(({ ms, setBy: file }) => ({ ms, setBy: file }));

/** Counts the requests Node's HTTP client starts to any host but the platform's (observed: nothing is held). */
const countRequests = (platform: string | undefined): (() => number) => {
  let count = 0;
  subscribe('http.client.request.start', (message) => {
    const request = Reflect.get(Object(message), 'request');
    if (!(request instanceof ClientRequest)) return;
    if (request.getHeader('host') !== platform) count += 1;
  });
  return () => count;
};

const main = (): void => {
  const [entry, eventFile] = process.argv.slice(2);
  if (!entry || !eventFile) throw new Error('Usage: node bareRunner.js <entry> <event.json>');
  watchTimers();
  const event = HandlerEvent.decode(JSON.parse(readFileSync(eventFile, 'utf8')));
  if (!isRight(event)) throw new Error('the event has no command');
  const rpcBase: unknown = Reflect.get(event.right, 'rpc_base');
  const requests = countRequests(typeof rpcBase === 'string' ? new URL(rpcBase).host : undefined);
  let answeredAt: number | undefined;
  process.on('exit', () => {
    if (answeredAt !== undefined) say({ exitedAfterMs: Math.round(performance.now() - answeredAt) });
  });
  handlerFor(resolve(entry))(event.right).then(
    (output) => {
      answeredAt = performance.now();
      const handled = Handled.decode(output);
      const results = isRight(handled) ? handled.right.results : output;
      say({ ok: true, results, pending: pending(), requests: requests() });
    },
    (error: unknown) => {
      answeredAt = performance.now();
      const name = error instanceof Error ? error.name : 'Error';
      const message = error instanceof Error ? error.message : String(error);
      say({ ok: false, name, message, pending: pending(), requests: requests() });
    },
  );
};

if (require.main === module) main();
