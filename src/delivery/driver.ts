import { isRight } from 'fp-ts/Either';
import { couldNotCheck, couldNotConfirm, haltMessage } from '../messages';
import { ExpiredPayload, type MessageOut } from '../provider/codecs';
import { getEndpointSecret, listMessagesBetween } from '../provider/api';
import { EVENT_TYPE_NAME } from '../provider/eventType';
import type { Failure } from '../provider/failures';
import { halt, mayPass, raise, type Caller, type Io } from '../provider/request';
import { CLAIM_TTL_SECONDS } from './claim';
import { History } from './history';
import { apply, CALL_MS, decide, leave, scheduledBy } from './machine';
import type { Command, Delivery, Listed, Result } from './machine';
import type { Runtime, Slot } from './runtime';

/**
 * Carries the machine's commands out (machine.ts) for one delivery, from its perform to the verdict: its body
 * runs, Svix's copy runs, or it stops with a halt or an error. It makes the z.cache and Svix calls, reads the
 * process's clock, and is the only code that waits; a wait that lost is cancelled (Runtime.wait).
 */

/** The Zap's endpoint as its subscribe stored it, keyed by the connection (as z.cache is scoped). */
export type Subscription = { id: string; secret: string; madeAt: number; checkedAt: number; key: string };
export type Verdict = { kind: 'signed' } | { kind: 'confirmed'; event: unknown };
type Run = { runtime: Runtime; io: Io; caller: () => Caller; sub: Subscription; slot: Slot; delivery: Delivery };

/** Steps of one delivery at most, a guard against a spin: its time runs out long before, however busy the Zap. */
const MAX_STEPS = 10_000;
export const historyKey = (endpointId: string): string => `history:${endpointId}`;

/** The delivery's verdict: the usual one (signed with the current secret, known fresh) at once, without a promise. */
export const verify = (runtime: Runtime, io: Io, caller: () => Caller, sub: Subscription, delivery: Delivery) => {
  const seen = { secret: sub.secret, start: sub.checkedAt, end: sub.checkedAt, by: 'subscribe' };
  const slot = runtime.endpoint(sub.key, sub.madeAt, seen);
  const first = decide(slot.state, delivery, runtime.clock.now());
  if (first.kind !== 'run') return steps({ runtime, io, caller, sub, slot, delivery }, first);
  apply(slot.state, { kind: 'ran', delivery }, delivery.arrivedAt);
  return { kind: 'signed' } satisfies Verdict;
};

const steps = async (run: Run, first: Command): Promise<Verdict> => {
  const { runtime, io, slot, delivery } = run;
  try {
    for (let command = first, count = 0; count < MAX_STEPS; count += 1) {
      const verdict = await step(run, command);
      if (verdict) return verdict;
      command = decided(run);
    }
    return halt(io, haltMessage('unchecked-signature', delivery.id));
  } finally {
    // Calls it scheduled and did not make are dropped: a delivery that needs one schedules its own.
    leave(slot.state, delivery);
    runtime.changed(slot);
  }
};

/** The machine's next command; a call the delivery gave up wakes the deliveries waiting on it, to take it on. */
const decided = ({ runtime, slot, delivery }: Run): Command => {
  const scheduled = scheduledBy(slot.state, delivery);
  const command = decide(slot.state, delivery, runtime.clock.now());
  if (scheduled.some((call) => call.owner !== delivery)) runtime.changed(slot);
  return command;
};

/** Carries out one command: a verdict, or undefined when the machine is to be asked again. */
const step = async (run: Run, command: Command): Promise<Verdict | void> => {
  const { runtime, io, slot, delivery } = run;
  switch (command.kind) {
    case 'run':
      apply(slot.state, { kind: 'ran', delivery }, delivery.arrivedAt);
      return { kind: 'signed' };
    case 'confirmed':
      return { kind: 'confirmed', event: command.event };
    case 'halt':
      return halt(io, haltMessage(command.why, delivery.id));
    case 'error':
      return raise(io, couldNotCheck(delivery.id));
    case 'refused':
      return raise(io, couldNotConfirm(delivery.id)(command.failure));
    case 'wait':
      return runtime.wait(slot, Math.min(command.until, delivery.deadline));
  }
  const result = await carryOut(run, command);
  apply(slot.state, result, runtime.clock.now());
  if (result.kind === 'listed' && 'page' in result) runtime.remember(slot, result.window, result.page);
  runtime.changed(slot);
  // A read Svix refused (the key, say): its own failure is what the person reads.
  if (result.kind === 'read' && 'failure' in result) return raise(io, result.failure);
};

/** Makes one call of a command, and says what it answered. */
const carryOut = async (
  run: Run,
  command: Extract<Command, { kind: 'look' | 'read' | 'share' | 'list' }>,
): Promise<Result> => {
  const { runtime, io, sub } = run;
  const start = runtime.clock.now();
  const key = historyKey(sub.id);
  switch (command.kind) {
    case 'look':
      return io.cache.get(key).then(
        (value) => {
          const decoded = History.decode(value);
          return { kind: 'looked', start, ok: true, ...(isRight(decoded) ? { value: decoded.right } : {}) };
        },
        () => ({ kind: 'looked', start, ok: false }),
      );
    case 'share':
      return io.cache.set(key, command.history, CLAIM_TTL_SECONDS, command.onlyIfAbsent).then(
        (answer) => ({ kind: 'shared', start, stored: typeof answer === 'boolean' ? answer : null }),
        () => ({ kind: 'shared', start, stored: 'failed' }),
      );
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

/** A call to Svix: its answer, a failure of a moment (tried again after the back-off), or a refusal. */
const svix = async (
  what: { kind: 'read' } | { kind: 'listed'; window: number },
  call: (note: (failure: Failure) => Failure) => Promise<Result>,
): Promise<Result> => {
  let failure: Failure | undefined;
  try {
    return await call((why) => (failure ??= why));
  } catch (error) {
    if (!failure) throw error;
    if (failure.kind !== 'throttled' && !mayPass(failure)) return { ...what, failed: 'refused', failure };
    const retryAfter = failure.kind === 'throttled' ? (failure.delaySeconds ?? 0) * 1_000 : 0;
    return { ...what, failed: 'transient', retryAfter };
  }
};

/** A listed message as the record keeps it: its payload, unless it is another event type or no longer kept. */
const listed = (message: MessageOut): Listed => {
  if (message.eventType !== EVENT_TYPE_NAME) return 'other-type';
  const expired = isRight(ExpiredPayload.decode(message.payload)) && Object.keys(Object(message.payload)).length === 1;
  return expired ? 'expired' : { payload: message.payload };
};
