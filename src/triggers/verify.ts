import { isRight } from 'fp-ts/Either';
import type { ZObject } from 'zapier-platform-core';
import { clock } from '../clock';
import { getEndpointSecret } from '../provider/api';
import type { Failure } from '../provider/failures';
import { timeOfProviderId } from '../provider/ksuid';
import { mayPass, type Caller } from '../provider/request';
import { cacheGet, cacheSet } from './cache';
import { CLAIM_TTL_SECONDS, claimSettings, pause } from './claim';
import { couldNotCheck, refuse, type SubscribeData } from './delivery';
import type * as ProviderRecord from './record';
import { decide, spend, RULES, type Delivery, type Known, type Step } from './rules';
import { lacks, merge, observeRead, SecretHistory, signedByCurrent } from './secrets';

/** The shell around rules.ts: it performs the steps the rules return, keeping what this process knows. */

/** The Zap's endpoint as its subscribe stored it, and the connection (connectionScope) it runs for. */
export type Subscription = SubscribeData & { connection: string };
/** `signed`: the delivered body is the event. `confirmed`: Svix's record has it, and `event` is its copy. */
export type Verdict = { kind: 'signed' } | { kind: 'confirmed'; event: unknown };

export const secretHistoryKey = (endpointId: string): string => `secrets:${endpointId}`;
/** Told each step the rules return, with what this process knew then: the simulation's trace (src/sim). */
export type Observer = (delivery: Delivery, step: Step, known: Known, now: number) => void;
export const shell: { observe?: Observer } = {};

/** A look, a read and one waited for, a few waits for the record, the record: well within this. */
const MAX_STEPS = 12;
const NEVER = Number.NEGATIVE_INFINITY;
type State = Known & { records: Set<Promise<unknown>>; reading?: Promise<boolean>; looking?: Promise<void> };
/** One delivery's view of its endpoint. */
type Endpoint = { z: ZObject; caller: () => Caller; subscription: Subscription; state: State; key: string };
const ignore = (): undefined => undefined;

/** The record check, loaded only when a delivery needs it: most never do, and every process starts faster. */
const providerRecord = (): typeof ProviderRecord => require('./record');

/** What this process knows, by connection and endpoint (as z.cache is scoped); past the limit, it starts over. */
const memory = new Map<string, State>();
export const MEMORY_LIMIT = 1_000;
/** For tests: a cold process. */
export const forgetKnownSecrets = (): void => memory.clear();

const stateOf = ({ connection, id, secret, checkedAt = 0 }: Subscription): State => {
  const key = `${connection}\u0000${id}`;
  const known = memory.get(key);
  if (known) return known;
  if (memory.size >= MEMORY_LIMIT) memory.clear();
  const madeAt = timeOfProviderId(id) ?? checkedAt;
  const state: State = {
    history: { secrets: [{ secret, from: Math.min(madeAt, checkedAt), seen: checkedAt }] },
    madeAt,
    ...{ lookedAt: NEVER, lookFailedAt: NEVER, readAt: NEVER, troubleAt: NEVER, confirmedAt: NEVER },
    unshared: false,
    allowance: { calls: RULES.burst, at: 0 },
    records: new Set(),
  };
  memory.set(key, state);
  return state;
};

/** Writes what this process knows (only if absent when a look found nothing), tried again as a claim is. */
const share = async ({ z, key, state }: Endpoint, onlyIfAbsent: boolean): Promise<void> => {
  for (const wait of [0, ...claimSettings.retryPausesMs]) {
    if (wait > 0) await pause(wait);
    const stored = await cacheSet(z, key, state.history, CLAIM_TTL_SECONDS, onlyIfAbsent).catch(() => null);
    state.unshared = stored !== true;
    // `false`: not stored, and trying again will not change that (only if absent: the key exists).
    if (stored !== null) return;
  }
};

/** Row 11: merges what other processes learnt, and shares what they lack. Nothing there is a failed look. */
const look = async (endpoint: Endpoint): Promise<void> => {
  const { state } = endpoint;
  const at = clock.now();
  const found = await cacheGet(endpoint.z, endpoint.key).then((value) => ({ value }), ignore);
  const shared = SecretHistory.decode(found?.value);
  if (isRight(shared)) state.history = merge(state.history, shared.right);
  if (isRight(shared) && !lacks(shared.right, state.history)) state.unshared = false;
  // Nothing there: written, only if still absent, at the next look rather than on this delivery's way.
  else if (found?.value === undefined && !state.unshared) state.unshared = true;
  else if (found) await share(endpoint, found.value === undefined);
  if (state.unshared || !found) state.lookFailedAt = at;
  else state.lookedAt = at;
};

/**
 * Rows 3 and 8: one read of the secret at a time, from `at`. A charged read
 * takes a call of the allowance when Svix answers with nothing new. Says
 * whether Svix answered; after it failed to, the next call is tried once.
 */
const read = (endpoint: Endpoint, charged: boolean, at: number): Promise<boolean> => {
  const { state } = endpoint;
  state.reading ??= (async () => {
    if (at > clock.now()) await clock.sleep(at - clock.now());
    // Deliveries that arrive together (a burst of Zapier's workers) share the read: it starts a moment later.
    if (charged) await pause(RULES.gatherMs);
    const startedAt = clock.now();
    let failure: Failure | undefined;
    const reword = (why: Failure) => (failure = why);
    try {
      const options = { timeoutMs: RULES.callMs, attempts: state.troubleAt === NEVER ? 2 : 1, reword };
      const secret = await getEndpointSecret(endpoint.caller(), endpoint.subscription.id, options);
      const before = state.history;
      state.troubleAt = NEVER;
      state.readAt = startedAt;
      state.history = observeRead(before, secret, startedAt);
      if (lacks(before, state.history)) await share(endpoint, false);
      else if (charged) state.allowance = spend(state.allowance, clock.now());
      return true;
    } catch (error) {
      if (!failure || !(failure.kind === 'throttled' || mayPass(failure))) throw error;
      state.troubleAt = clock.now();
      return false;
    }
  })().finally(() => (state.reading = undefined));
  return state.reading;
};

/** Rows 4 to 6 and 10: Svix's record decides (record.ts), and the Zap gets its copy of the event. */
const record = ({ z, caller, subscription, state }: Endpoint, messageId: string, charged: boolean) => {
  if (charged) state.allowance = spend(state.allowance, clock.now());
  const check = { endpoint: subscription, messageId, attempts: state.troubleAt === NEVER ? 2 : 1 };
  const call = providerRecord()
    .confirmByRecord(z, caller(), check)
    .then((event): Verdict => {
      state.confirmedAt = clock.now();
      return { kind: 'confirmed', event };
    })
    .finally(() => state.records.delete(call));
  state.records.add(call);
  return call;
};

/** The delivery checked by the rules against what is known of the endpoint's secrets; the usual one at once. */
export const verify = (z: ZObject, caller: () => Caller, subscription: Subscription, delivery: Delivery) => {
  const state = stateOf(subscription);
  const now = clock.now();
  const step = decide(state, delivery, now);
  shell.observe?.(delivery, step, state, now);
  return step.kind === 'run' ? signed(state, delivery) : steps(z, caller, subscription, state, delivery, step);
};

const next = (state: State, delivery: Delivery): Step => {
  const now = clock.now();
  const step = decide(state, delivery, now);
  shell.observe?.(delivery, step, state, now);
  return step;
};

const signed = (state: State, delivery: Delivery): Verdict => {
  state.history = signedByCurrent(state.history, delivery.signedAt);
  return { kind: 'signed' };
};

const steps = async (
  z: ZObject,
  caller: () => Caller,
  subscription: Subscription,
  ...[state, delivery, first]: [State, Delivery, Step]
) => {
  const endpoint: Endpoint = { z, caller, subscription, state, key: secretHistoryKey(subscription.id) };
  for (let step = first, count = 0; count < MAX_STEPS; step = next(state, delivery), count += 1) {
    if (step.kind === 'run') return signed(state, delivery);
    if (step.kind === 'record') return record(endpoint, delivery.id, step.charged);
    if (step.kind === 'halt') return refuse(z, step.why);
    if (step.kind === 'error') return couldNotCheck(z, delivery.id);
    if (step.kind === 'wait') await Promise.race(state.records).catch(ignore);
    else if (step.kind === 'read') delivery.readFailed ||= !(await read(endpoint, step.charged, step.at));
    else {
      delivery.looked = true;
      await (state.looking ??= look(endpoint).finally(() => (state.looking = undefined)));
    }
  }
  return refuse(z, 'unchecked-signature');
};
