import { isRight } from 'fp-ts/Either';
import { ExpiredPayload, type MessageOut } from '../svix/codecs';
import { getEndpointSecret, listMessagesBetween } from '../svix/api';
import { EVENT_TYPE_NAME } from '../svix/eventType';
import { timeOfProviderId } from '../svix/ksuid';
import { callWithin, probeNx, withinDeadline } from '../zapier/cache';
import { type Caller } from '../svix/client';
import type { Failure, Io } from '../zapier/io';
import { apply, type Result } from './answers';
import { applyClaim, CLAIM_TTL_SECONDS, FAILED, newClaim, nextClaim, type ClaimCall } from './claim';
import { History } from './history';
import { CALL_MS, decide, leave, stay } from './machine';
import type { Command, Delivery, Halt, Listed } from './machine';
import type { Runtime, Slot } from './runtime';

/**
 * Carries out the machines' commands (machine.ts for the endpoint, claim.ts for a message's claim) for one delivery,
 * from its perform to the verdict: its body runs, Svix's copy runs, or it stops with a halt or an error. It makes the
 * z.cache and Svix calls, reads the process's clock, and is the only code that waits; a wait that lost is cancelled
 * (Runtime.wait), and no z.cache call outlives the delivery's deadline (zapier/cache.ts).
 */

/** The Zap's endpoint, keyed as z.cache is scoped, and since when the Zap runs events (`on`: none older was sent). */
export type Subscription = { id: string; secret: string; checkedAt: number; key: string; on?: number };
/** How a delivery ended: its body runs (signed), Svix's copy runs (confirmed), or it stops: a halt (it cannot have come
 * from the Consumer App as sent), unchecked (Svix could not help check it in its time: it may be genuine), or Svix
 * refused a call it needed. The trigger words each (src/messages.ts). */
export type Verdict =
  | { kind: 'signed' }
  | { kind: 'confirmed'; event: unknown }
  | { kind: 'halt'; why: Halt }
  | { kind: 'unchecked' }
  | { kind: 'refused'; call: 'read' | 'list'; failure: Failure };
/** A delivery as its perform reads it, before the machine keeps anything of it. */
export type Envelope = Omit<Delivery, 'looked' | 'steps' | 'verdict'>;
type Run = { runtime: Runtime; io: Io; caller: () => Caller; sub: Subscription; slot: Slot; delivery: Delivery };

export const historyKey = (endpointId: string): string => `history:${endpointId}`;

/** The delivery's verdict: the usual one (signed with the current secret, known fresh) at once, without a promise. */
export const verify = (runtime: Runtime, io: Io, caller: () => Caller, sub: Subscription, envelope: Envelope) => {
  const slot = runtime.endpoint(sub.key, () => ({
    // An edit's or a catch-up's endpoint is sent messages from before it was made, as far back as the Zap was on.
    madeAt: Math.min(timeOfProviderId(sub.id) ?? sub.checkedAt, sub.on ?? Infinity),
    current: { secret: sub.secret, start: sub.checkedAt, end: sub.checkedAt, by: 'subscribe' },
  }));
  const delivery = { ...envelope, looked: false, steps: 0, verdict: undefined };
  const run = { runtime, io, caller, sub, slot, delivery };
  const first = decided(run);
  return first.kind === 'run' ? ({ kind: 'signed' } satisfies Verdict) : steps(run, first);
};

const steps = async (run: Run, first: Command): Promise<Verdict> => {
  const { runtime, slot, delivery } = run;
  stay(slot.state);
  try {
    for (let command = first; ; command = decided(run)) {
      const verdict = await step(run, command);
      if (verdict) return verdict;
    }
  } finally {
    // Calls it scheduled and did not make are left to others, or dropped by the last to leave.
    leave(slot.state, delivery);
    runtime.changed(slot);
  }
};

/** The machine's next command; a call the delivery gave up wakes the deliveries waiting on it, to take it on. */
const decided = ({ runtime, slot, delivery }: Run): Command => {
  const command = decide(slot.state, delivery, runtime.clock.now());
  if (slot.state.released) {
    slot.state.released = false;
    runtime.changed(slot);
  }
  return command;
};

/** Carries out one command: a verdict, or undefined when the machine is to be asked again. */
const step = async (run: Run, command: Command): Promise<Verdict | void> => {
  const { runtime, slot, delivery } = run;
  switch (command.kind) {
    case 'run':
      return { kind: 'signed' };
    case 'confirmed':
      return { kind: 'confirmed', event: command.event };
    case 'halt':
      return { kind: 'halt', why: command.why };
    case 'error':
      return { kind: 'unchecked' };
    case 'refused':
      return { kind: 'refused', call: command.call, failure: command.failure };
    case 'wait':
      return runtime.wait(slot, Math.min(command.until, delivery.deadline));
  }
  const result = await carryOut(run, command);
  apply(slot.state, result, runtime.clock.now(), delivery);
  if (result.kind === 'listed' && 'page' in result) runtime.remember(slot, result.window, result.page);
  runtime.changed(slot);
};

/** Makes one call of a command, and says what it answered. */
const carryOut = async (
  run: Run,
  command: Extract<Command, { kind: 'look' | 'read' | 'share' | 'list' }>,
): Promise<Result> => {
  const { runtime, io, sub, slot, delivery } = run;
  const start = runtime.clock.now();
  const key = historyKey(sub.id);
  const until = Math.min(delivery.deadline, start + slot.state.rules.cacheCallMs);
  const { cache } = withinDeadline(runtime.clock, io, until);
  switch (command.kind) {
    case 'look':
      return cache.get(key).then(
        (value) => {
          const decoded = History.decode(value);
          return { kind: 'looked', start, ok: true, ...(isRight(decoded) ? { value: decoded.right } : {}) };
        },
        () => ({ kind: 'looked', start, ok: false }),
      );
    case 'share': {
      const { history, onlyIfAbsent } = command;
      return cache.set(key, history, CLAIM_TTL_SECONDS, onlyIfAbsent).then(
        (answer) => ({ kind: 'shared', start, history, stored: typeof answer === 'boolean' ? answer : null }),
        () => ({ kind: 'shared', start, history, stored: 'failed' }),
      );
    }
    case 'read':
      return svix({ kind: 'read' }, async (note) => {
        const secret = await getEndpointSecret(run.caller(), sub.id, { timeoutMs: CALL_MS, reword: note });
        return { kind: 'read', sighting: { secret, start, end: runtime.clock.now(), by: runtime.id } };
      });
    case 'list':
      return svix({ kind: 'listed', window: command.window }, async (note) => {
        const { after, before, iterator } = command;
        const window = { after, before, ...(iterator ? { iterator } : {}) };
        const answer = await listMessagesBetween(run.caller(), window, { timeoutMs: CALL_MS, reword: note });
        const messages = answer.data.map((message): [string, Listed] => [message.id, listed(message)]);
        const next = answer.done || !answer.iterator ? {} : { next: answer.iterator };
        return { kind: 'listed', window: command.window, start, page: { messages, ...next } };
      });
  }
};

/** A call to Svix: its answer, or how it failed (the machine tells a failure of a moment from a refusal). */
const svix = async (
  what: { kind: 'read' } | { kind: 'listed'; window: number },
  call: (note: (failure: Failure) => Failure) => Promise<Result>,
): Promise<Result> => {
  let failure: Failure | undefined;
  try {
    return await call((why) => (failure ??= why));
  } catch (error) {
    if (!failure) throw error;
    return { ...what, failure };
  }
};

/** A listed message as the record keeps it: its payload, unless it is another event type or no longer kept. */
const listed = (message: MessageOut): Listed => {
  if (message.eventType !== EVENT_TYPE_NAME) return 'other-type';
  const expired = isRight(ExpiredPayload.decode(message.payload)) && Object.keys(Object(message.payload)).length === 1;
  return expired ? 'expired' : { payload: message.payload };
};

/** Claims a message for this delivery (claim.ts decides; its cache calls end at `deadline`), and hands `then` whether
 * to run it. Callbacks, not promise chains: core tracks every promise a perform makes, and a claim is on every
 * delivery's way. */
export const claimOnce = <T>(
  runtime: Runtime,
  io: Pick<Io, 'cache'>,
  key: string,
  honoursNx: boolean | undefined,
  deadline: number,
  then: (claimed: boolean) => T,
): Promise<T> => {
  const { clock, claims } = runtime;
  const claim = newClaim(`${claims.token}.${(claims.count += 1)}`, honoursNx ?? claims.honoursNx);
  const call = (kind: ClaimCall) => (): Promise<unknown> => {
    if (kind === 'probe') return probeNx(io).then((probed) => (claims.honoursNx = probed));
    return kind === 'set' ? io.cache.set(key, claim.token, CLAIM_TTL_SECONDS, true) : io.cache.get(key);
  };
  return new Promise<T>((resolve) => {
    const step = (): void => {
      const command = nextClaim(claim, clock.now(), deadline);
      if (command.kind === 'done') return resolve(then(command.run));
      if (command.kind === 'wait') return void clock.after(command.until - clock.now(), step);
      callWithin(clock, deadline, call(command.kind), (answer) => {
        applyClaim(claim, command.kind, 'value' in answer ? answer.value : FAILED, clock.now());
        step();
      });
    };
    step();
  });
};
