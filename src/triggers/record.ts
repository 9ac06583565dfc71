import { isRight } from 'fp-ts/Either';
import type { ZObject } from 'zapier-platform-core';
import { ExpiredPayload } from '../provider/codecs';
import { EVENT_TYPE_NAME } from '../provider/eventType';
import type { Failure } from '../provider/failures';
import { getMessage } from '../provider/api';
import { timeOfProviderId } from '../provider/ksuid';
import type { Caller } from '../provider/request';
import { halt, resendHint } from './delivery';

/**
 * The provider's record of a message, for a delivery that the endpoint's
 * current secret did not sign: one signed with a secret the endpoint had (it
 * waited in Zapier's queue while the secret was rotated), or with one never
 * seen here. Such a delivery runs only when the provider confirms it, and the
 * Zap then receives the provider's copy of the event: the delivered body is
 * not used.
 */

const why = (messageId: string): string =>
  `The auction event ${messageId} was not signed with this Zap's current endpoint secret (the secret may have been changed since it was sent), so the Zap asked Svix to confirm it`;

/** What a person reads when the record settles a delivery against it. */
export const RECORD_REFUSALS = {
  notConfirmed:
    "Refused a delivery that was not signed with this Zap's current endpoint secret and that Svix's record of your Consumer App does not confirm as one of its auction events, so it did not come from your Consumer App as sent, and the Zap did not run. Nothing needs to change unless you sent it yourself.",
  beforeEndpoint: (messageId: string): string =>
    `Ignored the auction event ${messageId}: it was not signed with this Zap's current endpoint secret, and it happened before this Zap was turned on, so the Zap did not run for it.`,
  expired: (messageId: string): string =>
    `${why(messageId)}, but Svix no longer keeps the event's content (it is kept for a limited time, or it was deleted), so the Zap did not run for it. The auction service can send the event again if it is still needed.`,
};

/** A failure to read the record, reworded: which event did not run, and how to send it again. */
export const couldNotConfirm =
  (messageId: string) =>
  (failure: Failure): Failure => {
    const message = `${why(messageId)}, and could not: ${failure.message} ${resendHint(messageId)}`;
    return failure.kind === 'auth'
      ? { kind: 'auth', message }
      : { kind: 'error', code: 'EventNotConfirmed', status: 503, message };
  };

/** Exactly `{"expired": true}`: what the provider keeps of a payload after its retention or deletion. */
const isExpired = (payload: unknown): boolean =>
  isRight(ExpiredPayload.decode(payload)) &&
  typeof payload === 'object' &&
  payload !== null &&
  Object.keys(payload).length === 1;

export interface RecordCheck {
  /** The Zap's endpoint: its id, and when the subscribe made it (for ids that do not carry their time). */
  endpoint: { id: string; checkedAt?: number };
  messageId: string;
  /** Tries of the call when Svix fails for a moment (2 by default). */
  attempts?: number;
}

/**
 * The event as the provider's record has it, when the record confirms the
 * delivery: the same id, AUCTION_STATUS_CHANGE, created no earlier than this
 * Zap's endpoint, and its payload still kept. Anything else halts the run; a
 * provider that cannot be reached is an error that names the event.
 */
export const confirmByRecord = async (z: ZObject, caller: Caller, check: RecordCheck): Promise<unknown> => {
  const { endpoint, messageId } = check;
  const createdAt = timeOfProviderId(messageId);
  const endpointAt = timeOfProviderId(endpoint.id) ?? endpoint.checkedAt;
  if (createdAt === undefined || endpointAt === undefined) return halt(z, RECORD_REFUSALS.notConfirmed);
  if (createdAt < endpointAt) return halt(z, RECORD_REFUSALS.beforeEndpoint(messageId));
  const message = await getMessage(caller, messageId, couldNotConfirm(messageId), check.attempts);
  if (!message || message.id !== messageId || message.eventType !== EVENT_TYPE_NAME) {
    return halt(z, RECORD_REFUSALS.notConfirmed);
  }
  if (isExpired(message.payload)) return halt(z, RECORD_REFUSALS.expired(messageId));
  return message.payload;
};
