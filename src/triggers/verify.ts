import { isRight } from 'fp-ts/Either';
import type { ZObject } from 'zapier-platform-core';
import { clock } from '../clock';
import { getEndpointSecret } from '../provider/api';
import type { Failure } from '../provider/failures';
import { timeOfProviderId } from '../provider/ksuid';
import { mayPass, type Caller } from '../provider/request';
import { cacheGet, cacheSet } from './cache';
import { CLAIM_TTL_SECONDS } from './claim';
import { couldNotCheck, refuse, type SubscribeData } from './delivery';
import type * as ProviderRecord from './record';
import { decide, spend, svixAhead, RULES, type Delivery, type Known, type Step } from './rules';
import { lacks, merge, observeRead, SecretHistory } from './secrets';

/** The shell around rules.ts: it performs the steps the rules return, keeping what this process knows. */

/** The Zap's endpoint as its subscribe stored it, and the connection (connectionScope) it runs for. */
export type Subscription = SubscribeData & { connection: string };
/** `signed`: the delivered body is the event. `confirmed`: Svix's record has it, and `event` is its copy. */
export type Verdict = { kind: 'signed' } | { kind: 'confirmed'; event: unknown };

export const secretHistoryKey = (endpointId: string): string => `secrets:${endpointId}`;
/** Told each step the rules return, with what this process knew then: the simulation's trace (src/sim). */
export type Observer = (delivery: Delivery, step: Step, known: Known, now: number) => void;
export const shell: { observe?: Observer } = {};

/** Steps of one delivery at most: its time runs out well before (each call or wait takes a while). */
const MAX_STEPS = 60;
/** A write of what this process knows, or its read-back, throttled: tried again after these pauses. */
const SHARE_PAUSES = [0, 30, 70, 150, 300, 600];
const SIGNED: Verdict = { kind: 'signed' };

type State = Known & { reader?: Promise<void>; looking?: Promise<void>; windows: ProviderRecord.Windows };
type Endpoint = { z: ZObject; caller: () => Caller; subscription: Subscription; state: State; key: string };
const ignore = (): undefined => undefined;

/** The record check, loaded only when a delivery needs it: most never do, and every process starts faster. */
const providerRecord = (): typeof ProviderRecord => require('./record');

/** What this process knows, by connection and endpoint (as z.cache is scoped); past the limit, it starts over. */
const memory = new Map<string, State>();
export const MEMORY_LIMIT = 1_000;
export const forgetKnownSecrets = (): void => memory.clear();

const stateOf = ({ connection, id, secret, checkedAt = 0 }: Subscription): State => {
  const key = `${connection}\u0000${id}`;
  const known = memory.get(key);
  if (known) return known;
  if (memory.size >= MEMORY_LIMIT) memory.clear();
  const madeAt = timeOfProviderId(id) ?? checkedAt;
  const state: State = {
    history: { secrets: [{ secret, from: Math.min(madeAt, checkedAt), seen: checkedAt }] },
    ...{ lookedAt: -Infinity, lookFailedAt: -Infinity, readAt: -Infinity, failedAt: -Infinity, svixAhead: -Infinity },
    ...{ failures: 0, unshared: false, reading: undefined },
    allowance: { reads: { calls: RULES.reads.burst, at: 0 }, listings: { calls: RULES.listings.burst, at: 0 } },
    windows: new Map(),
    records: (delivery) => providerRecord().status(state.windows, delivery, svixAhead(state)),
  };
  memory.set(key, state);
  return state;
};

/** A call to Svix: its answer, or undefined when Svix failed for a moment (counted for the pause before the next). */
const svixCall = async <T>(state: State, call: (note: (failure: Failure) => Failure) => Promise<T>) => {
  let failure: Failure | undefined;
  try {
    const answer = await call((why) => (failure ??= why));
    state.failures = 0;
    return answer;
  } catch (error) {
    if (!failure || !(failure.kind === 'throttled' || mayPass(failure))) throw error;
    state.failures += 1;
    state.failedAt = clock.now();
    return undefined;
  }
};

/**
 * Writes what this process knows (only if absent, when a look found nothing)
 * and reads it back: another's write may have replaced it, or been there
 * first; what it holds is merged, and written again while it lacks anything.
 */
const share = async (endpoint: Endpoint, onlyIfAbsent: boolean): Promise<void> => {
  const { z, key, state } = endpoint;
  let absent = onlyIfAbsent;
  for (const wait of SHARE_PAUSES) {
    if (wait > 0) await clock.sleep(wait);
    const stored = await cacheSet(z, key, state.history, CLAIM_TTL_SECONDS, absent).catch(() => null);
    if (stored === true || stored === false || absent) {
      if (await holdsAll(endpoint)) return void (state.unshared = false);
      absent = false;
    }
  }
  state.unshared = true;
};

/** Whether z.cache holds all this process knows; what it holds of others' is merged in. */
const holdsAll = async ({ z, key, state }: Endpoint): Promise<boolean> => {
  for (const wait of SHARE_PAUSES) {
    if (wait > 0) await clock.sleep(wait);
    const shared = SecretHistory.decode(await cacheGet(z, key).catch(ignore));
    if (!isRight(shared)) continue;
    state.history = merge(state.history, shared.right);
    return !lacks(shared.right, state.history);
  }
  return false;
};

/** Row 2: merges what other processes learnt, and shares what they lack. */
const look = async (endpoint: Endpoint): Promise<void> => {
  const { state } = endpoint;
  const at = clock.now();
  const found = await cacheGet(endpoint.z, endpoint.key).then((value) => ({ value }), ignore);
  const shared = SecretHistory.decode(found?.value);
  if (isRight(shared)) state.history = merge(state.history, shared.right);
  if (found && (!isRight(shared) || lacks(shared.right, state.history))) await share(endpoint, !isRight(shared));
  else if (found) state.unshared = false;
  if (!found || state.unshared) state.lookFailedAt = at;
  else state.lookedAt = at;
};

type Call = Extract<Step, { kind: 'read' | 'record' }>;

/** Rows 4 and 5: one read of the secret at a time, from its call of the allowance; what it teaches is shared at once. */
const read = (endpoint: Endpoint, { charged, at }: Call): Promise<void> => {
  const { state } = endpoint;
  state.reader ??= (async () => {
    state.reading = at;
    if (charged) state.allowance.reads = spend('reads', state.allowance.reads, at);
    await clock.sleep(Math.max(0, at - clock.now()));
    const startedAt = clock.now();
    const secret = await svixCall(state, (reword) =>
      getEndpointSecret(endpoint.caller(), endpoint.subscription.id, { timeoutMs: RULES.callMs, reword }),
    );
    if (secret === undefined) return;
    const before = state.history;
    state.readAt = startedAt;
    state.history = observeRead(before, secret, startedAt);
    // What it taught is shared before the read ends: a look that fails is made again.
    state.unshared ||= lacks(before, state.history);
    for (let wait = 0; state.unshared && wait <= 1_500; wait = 2 * wait + 100)
      await clock.sleep(wait).then(() => look(endpoint));
  })().finally(() => Object.assign(state, { reader: undefined, reading: undefined }));
  return state.reader;
};

/** Rows 6 and 7: Svix's record, listed by window (record.ts); undefined while it has not answered. */
const record = async (endpoint: Endpoint, delivery: Delivery, { charged, at }: Call): Promise<Verdict | undefined> => {
  const { z, caller, subscription, state } = endpoint;
  const pay = () =>
    charged && (state.allowance.listings = spend('listings', state.allowance.listings, Math.max(at, clock.now())));
  const on = { endpoint: subscription, windows: state.windows, svixAhead: svixAhead(state), at, pay };
  const answer = await providerRecord().check(z, delivery, { ...on, caller, guard: (call) => svixCall(state, call) });
  return answer && { kind: 'confirmed', event: answer.event };
};

const next = (state: State, delivery: Delivery): Step => {
  const now = clock.now();
  const step = decide(state, delivery, now);
  shell.observe?.(delivery, step, state, now);
  // A run was signed with the current secret: its signing time bounds Svix's clock.
  if (step.kind === 'run') state.svixAhead = Math.max(state.svixAhead, delivery.signedAt - delivery.arrivedAt);
  return step;
};

/** The delivery checked by the rules against what is known of the endpoint's secrets; the usual one at once. */
export const verify = (z: ZObject, caller: () => Caller, subscription: Subscription, delivery: Delivery) => {
  const state = stateOf(subscription);
  const first = next(state, delivery);
  if (first.kind === 'run') return SIGNED;
  const endpoint: Endpoint = { z, caller, subscription, state, key: secretHistoryKey(subscription.id) };
  return steps(endpoint, delivery, first);
};

const steps = async (endpoint: Endpoint, delivery: Delivery, first: Step): Promise<Verdict> => {
  const { z, state } = endpoint;
  for (let step = first, count = 0; count < MAX_STEPS; step = next(state, delivery), count += 1) {
    if (step.kind === 'run') return SIGNED;
    if (step.kind === 'halt') return refuse(z, step.why);
    if (step.kind === 'error') return couldNotCheck(z, delivery.id);
    if (step.kind === 'read') await read(endpoint, step);
    else if (step.kind === 'record') {
      const verdict = await record(endpoint, delivery, step);
      if (verdict) return verdict;
    } else {
      delivery.looked = true;
      await (state.looking ??= look(endpoint).finally(() => (state.looking = undefined)));
    }
  }
  return refuse(z, 'unchecked-signature');
};
