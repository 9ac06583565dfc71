import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { compileFunction } from 'node:vm';
import type * as Core from 'zapier-platform-core';
import type { errors as platformErrors } from 'zapier-platform-core';
import type * as Clock from '../clock';
import type * as Claim from '../triggers/claim';
import type * as Rules from '../triggers/rules';
import type * as Verify from '../triggers/verify';

/**
 * One simulated Zapier process: its own copy of every module of the app, so
 * that what a process keeps in memory (the endpoint's secrets it knows, its
 * allowance, whether the cache honours nx) and its clock are its own, as in
 * separate processes on Zapier. The app's compiled modules (dist/) are
 * loaded afresh for each; libraries (io-ts, zapier-platform-core) are shared,
 * as they keep nothing of a delivery.
 */
/** The parts of z a delivery's perform uses, as the simulation gives them. */
export interface SimZ {
  request: (options: Record<string, unknown>) => Promise<{
    status: number;
    content: string;
    getHeader: (name: string) => string | undefined;
    text: () => Promise<string>;
  }>;
  cache: {
    get: (key: string, scope?: unknown) => Promise<unknown>;
    set: (key: string, value: unknown, ttl: number, scope: unknown, nx: boolean) => Promise<unknown>;
    delete: (key: string, scope?: unknown) => Promise<unknown>;
  };
  errors: typeof platformErrors;
  console: { log: (...parts: unknown[]) => void; error: (...parts: unknown[]) => void };
}

/** What Zapier hands a hook trigger's perform for one delivery. */
export interface SimBundle {
  authData: Record<string, string>;
  subscribeData: Record<string, unknown>;
  targetUrl: string;
  inputData: Record<string, unknown>;
  rawRequest: { content: string; headers: Record<string, string> };
  cleanedRequest: Record<string, unknown>;
}

/**
 * The timers a simulated process's modules see in place of Node's own (they are handed to each module as
 * `setTimeout` and `clearTimeout`): the run in progress decides what they do, and sees whether each one is
 * ref'd, as Zapier's runtime would (see world.ts).
 */
export interface SimTimers {
  setTimeout: (run: () => void, ms?: number) => unknown;
  clearTimeout: (timer: unknown) => void;
}

export interface AppProcess {
  perform: (z: SimZ, bundle: SimBundle) => Array<Record<string, unknown>> | Promise<Array<Record<string, unknown>>>;
  /** Where this process's timers go: set by each run. */
  timers: { current?: SimTimers };
  clock: (typeof Clock)['clock'];
  shell: (typeof Verify)['shell'];
  rules: (typeof Rules)['RULES'];
  /** zapier-platform-core's errors as the app's own copy of core defines them (its perform tells them apart by class). */
  errors: typeof platformErrors;
  /** Forgets all it knew, as a process Zapier starts afresh. */
  goCold: () => void;
}

/** The compiled app next to this file, or dist/ when this runs from its TypeScript source (under jest). */
export const defaultAppRoot = (): string =>
  __filename.endsWith('.ts') ? join(__dirname, '..', '..', 'dist') : join(__dirname, '..');

const PARAMETERS = ['exports', 'require', 'module', '__filename', '__dirname', 'setTimeout', 'clearTimeout'];

/** A loader of the app's modules with a registry of its own, and timers of its own: each file is run once per loader. */
const isolatedLoader = (root: string, timers: AppProcess['timers']) => {
  const current = (): SimTimers => {
    if (!timers.current) throw new Error('A simulated process set a timer outside a run.');
    return timers.current;
  };
  const setTimer = (run: () => void, ms?: number) => current().setTimeout(run, ms);
  const clearTimer = (timer: unknown) => current().clearTimeout(timer);
  const registry = new Map<string, { exports: unknown }>();
  const run = (filename: string): void => {
    if (registry.has(filename)) return;
    const module = { exports: {} };
    registry.set(filename, module);
    const outside = createRequire(filename);
    const require = (request: string): unknown => {
      const resolved = outside.resolve(request);
      if (!resolved.startsWith(root + sep) || !resolved.endsWith('.js')) return outside(resolved);
      run(resolved);
      return registry.get(resolved)?.exports;
    };
    const body = compileFunction(readFileSync(filename, 'utf8'), PARAMETERS, { filename });
    body.call(module.exports, module.exports, require, module, filename, dirname(filename), setTimer, clearTimer);
  };
  // What the module exported, untyped as Node's own require gives it.
  return (path: string) => {
    const filename = join(root, path);
    run(filename);
    return Reflect.get(registry.get(filename) ?? {}, 'exports');
  };
};

/** A new process of the app compiled under `root` (dist/). */
export const loadAppProcess = (root: string = defaultAppRoot()): AppProcess => {
  const timers: AppProcess['timers'] = {};
  const load = isolatedLoader(root, timers);
  // The app's own compiled modules, typed by their sources as require('./record') is in verify.ts.
  // perform is typed by what the simulation hands it: the parts of z and of the bundle a delivery uses.
  const perform: AppProcess['perform'] = load('triggers/auctionStatusChanged.js').auctionStatusChangedOperations
    .perform;
  const verify: typeof Verify = load('triggers/verify.js');
  const claim: typeof Claim = load('triggers/claim.js');
  const { clock }: typeof Clock = load('clock.js');
  const { RULES }: typeof Rules = load('triggers/rules.js');
  const { errors }: typeof Core = createRequire(join(root, 'index.js'))('zapier-platform-core');
  return {
    perform,
    timers,
    clock,
    shell: verify.shell,
    rules: RULES,
    errors,
    goCold: () => {
      verify.forgetKnownSecrets();
      claim.forgetProbedNx();
    },
  };
};
