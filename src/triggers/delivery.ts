import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import type { ZObject } from 'zapier-platform-core';
// The event's own modules, not the models index: a delivery loads only what it uses.
import { AuctionStatusChange } from '../models/AuctionStatusChange';
import { flattenExtras, mentionsModel, type ExtraFields } from '../fields/extraFields';
import type * as PublishedModels from '../fields/models';
import { describeDecodeErrors } from '../models/decode';
import { JsonTooDeep, MAX_JSON_DEPTH, parseJson } from '../provider/json';
import { raise, withoutBundle } from '../provider/request';
import type { Refusal } from '../provider/signature';

/**
 * Reading one delivery: the raw request Zapier hands to perform, and the
 * event payload inside it, both decoded at the edge.
 */

export const RawRequest = t.intersection(
  [t.type({ content: t.string }), t.partial({ headers: t.UnknownRecord })],
  'RawRequest',
);

/**
 * What performSubscribe returned, as Zapier stores it for this Zap: the
 * endpoint's id and signing secret, when the secret was known to be current,
 * and whether the platform's cache honours `nx` (when the subscribe learnt it).
 */
export const SubscribeData = t.intersection(
  [t.type({ id: t.string, secret: t.string }), t.partial({ checkedAt: t.number, cacheHonoursNx: t.boolean })],
  'SubscribeData',
);
export type SubscribeData = t.TypeOf<typeof SubscribeData>;

/** Why a request to the Zap's address did not run it, when it cannot have come from the Consumer App as sent. */
export type DeliveryRefusal =
  Refusal | 'no-delivery' | 'no-body' | 'not-a-svix-id' | 'unchecked-signature' | 'event-too-old';

const NOT_FROM_YOUR_APP = 'so it did not come from your Consumer App as sent, and the Zap did not run.';

const REFUSALS: Record<DeliveryRefusal, string> = {
  'no-delivery':
    "Ignored a run of this Zap's trigger that carried no delivery from Svix: there was nothing to check, so the Zap did not run. Nothing needs to change; the next auction event runs it as usual.",
  'no-body': `Ignored a request to this Zap's address that had no body, ${NOT_FROM_YOUR_APP}`,
  'missing-headers': `Ignored a request to this Zap's address without Svix's signature headers (svix-id, svix-timestamp, svix-signature), ${NOT_FROM_YOUR_APP} Nothing needs to change unless you sent it yourself.`,
  'bad-timestamp': `Refused a delivery whose signing time (svix-timestamp) is not a valid time, ${NOT_FROM_YOUR_APP}`,
  'too-old':
    'Refused a delivery signed more than 7 days ago: this Zap remembers which events it ran for 7 days only, so it cannot tell whether it already ran for this one, and did not run.',
  'event-too-old':
    'Refused a delivery of an event that happened more than 7 days ago (sent again since): this Zap remembers which events it ran for 7 days only, so it cannot tell whether it already ran for this one, and did not run.',
  'not-a-svix-id': `Refused a delivery whose id (svix-id) is not one Svix makes (Svix's message ids are msg_ and 27 letters or digits), ${NOT_FROM_YOUR_APP}`,
  'too-new': `Refused a delivery whose signing time (svix-timestamp) is more than 5 minutes ahead, ${NOT_FROM_YOUR_APP}`,
  'no-valid-signature': `Refused a delivery whose signature (svix-signature) does not match this Zap's endpoint secret, ${NOT_FROM_YOUR_APP} If this happens to every event, turn the Zap off and on again.`,
  'unchecked-signature': `Refused a delivery whose signature (svix-signature) does not match this Zap's endpoint secret as last read: many such deliveries arrived at once, and Svix could not be asked again in time whether the secret had just been changed or the event is genuine. The Zap did not run. If this happens to every event, turn the Zap off and on again.`,
};

export const refusalMessage = (refusal: DeliveryRefusal): string => REFUSALS[refusal];

/** How to send an event again, for a person in Zapier (Svix resends to one endpoint from its dashboard). */
export const resendHint = (messageId: string): string =>
  `To run the Zap for it, send it again: in Svix's dashboard, open your Consumer App, find the message ${messageId} and resend it to this Zap's endpoint ("Zapier: Auction Status Changed").`;

/** A delivery that could not be checked while Svix had trouble: an error (not a halt) naming it. */
export const couldNotCheck = (z: ZObject, messageId: string): never =>
  raise(z, {
    kind: 'error',
    code: 'SignatureNotChecked',
    status: 503,
    message: `The auction event ${messageId} was not signed with this Zap's endpoint secret as last read, and Svix had trouble answering whether the secret had changed or whether the event is genuine, so the Zap did not run for it. ${resendHint(messageId)}`,
  });

/**
 * Stops a delivery that cannot have come from the Consumer App as sent. It is
 * a halt, not an error: anyone who learns the Zap's address can send it junk,
 * and junk must neither fill the Zap's history with errors nor get the Zap
 * turned off.
 */
export const halt = (z: ZObject, message: string): never => {
  throw withoutBundle(new z.errors.HaltedError(message));
};

/** A halt for one of the refusals above. */
export const refuse = (z: ZObject, refusal: DeliveryRefusal): never => halt(z, refusalMessage(refusal));

export type PayloadResult =
  { ok: true; payload: AuctionStatusChange; extras: ExtraFields } | { ok: false; message: string };

const PROMISED = ['auctioneerUuid', 'auctionUuid', 'status'];
const NO_EXTRAS: ExtraFields = { values: {}, labels: {} };

/**
 * Decodes an event payload: the three promised fields strictly (a failure
 * names the fields, never their values), and every other field it carries
 * as extra Zap fields, which never stop the Zap.
 */
export const decodePayload = (body: unknown): PayloadResult => {
  const decoded = AuctionStatusChange.decode(body);
  if (!isRight(decoded)) {
    const problems = describeDecodeErrors(decoded.left);
    return {
      ok: false,
      message:
        `The auction event did not have the published form (${problems.slice(0, 5).join('; ')}), so the Zap did not run. ` +
        "This comes from the auction service: send these field names to the auction service's support team.",
    };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Object.keys(body).length <= PROMISED.length) {
    return { ok: true, payload: decoded.right, extras: NO_EXTRAS };
  }
  return {
    ok: true,
    payload: decoded.right,
    extras: flattenExtras(body, PROMISED, mentionsModel(body) ? publishedModels().mapPublishedModel : undefined),
  };
};

/** The published models, loaded only for an event that carries one: most deliveries never need them. */
const publishedModels = (): typeof PublishedModels => require('../fields/models');

/** Parses a raw JSON body, keeping every digit (see parseJson); a body that cannot be read is a plain error. */
export const parseBody = (content: string): { ok: true; body: unknown } | { ok: false; message: string } => {
  try {
    return { ok: true, body: parseJson(content) };
  } catch (error) {
    const what = error instanceof JsonTooDeep ? `is nested more than ${MAX_JSON_DEPTH} levels deep` : 'is not JSON';
    return {
      ok: false,
      message: `The auction event's body ${what}, so the Zap did not run. This comes from the auction service: tell the auction service's support team the event body could not be read.`,
    };
  }
};
