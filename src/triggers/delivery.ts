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

/** A request anyone could have sent to the Zap's address: nothing to do, unless it was the person's own. */
const notFromSvix = (what: string): string =>
  `Nothing to do unless you sent it: ${what}, so it did not come from your Consumer App and the Zap did not run.`;

/** Runs are remembered 7 days: an older event could have run already. */
const tooOld = (what: string): string =>
  `Nothing to do: ${what} over 7 days ago, and this Zap remembers the events it ran for 7 days only, so it did not run it again.`;

const REFUSALS: Record<DeliveryRefusal, string> = {
  'no-delivery':
    'Nothing to do: this run carried no delivery from Svix, so there was nothing to check and the Zap did not run. The next auction event runs it as usual.',
  'no-body': notFromSvix("a request to this Zap's address had no body"),
  'missing-headers': notFromSvix("a request to this Zap's address was not signed by Svix"),
  'bad-timestamp': notFromSvix("a delivery's signing time was not a valid time"),
  'too-old': tooOld('this delivery was signed'),
  'event-too-old': tooOld('this event happened'),
  'not-a-svix-id': notFromSvix("a delivery's ID is not one Svix makes"),
  'too-new': notFromSvix('a delivery was signed more than 5 minutes ahead'),
  'no-valid-signature':
    "If this happens to every event, turn the Zap off and on again: this delivery's signature does not match the Zap's endpoint secret, so the Zap did not run.",
  'unchecked-signature':
    "If this happens to every event, turn the Zap off and on again: this delivery's signature did not match, and Svix could not be asked in time whether it is genuine (many came at once), so the Zap did not run.",
};

export const refusalMessage = (refusal: DeliveryRefusal): string => REFUSALS[refusal];

/** How to run the Zap for an event that did not run: Svix resends a message to one endpoint from its dashboard. */
export const resendHint = (messageId: string): string =>
  `Resend message ${messageId} to this Zap from your Consumer App in Svix's dashboard`;

/** What a person reads of a delivery that could not be checked while Svix had trouble. */
export const couldNotCheckMessage = (messageId: string): string =>
  `${resendHint(messageId)}: its signature did not match this Zap's secret as last read, and Svix could not say in time whether the secret changed, so the Zap did not run.`;

/** A delivery that could not be checked while Svix had trouble: an error (not a halt) naming it. */
export const couldNotCheck = (z: ZObject, messageId: string): never =>
  raise(z, { kind: 'error', code: 'SignatureNotChecked', status: 503, message: couldNotCheckMessage(messageId) });

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

/** Problems as they fit in a message of 250 characters, by field (the event's own name left out): the first ones, and how many more. */
const listed = (problems: readonly string[]): string => {
  const shown: string[] = [];
  for (const problem of problems.map((text) => text.replace(/^AuctionStatusChange\./, ''))) {
    if ([...shown, problem].join('; ').length > 130) break;
    shown.push(problem);
  }
  if (shown.length === 0) shown.push((problems[0] ?? '').slice(0, 100));
  const rest = problems.length - shown.length;
  return rest > 0 ? `${shown.join('; ')} and ${rest} more` : shown.join('; ');
};

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
      message: `Send these field names to the auction service's support team: ${listed(problems)}. The event did not have the published form, so the Zap did not run.`,
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
      message: `Tell the auction service's support team that an event could not be read: its body ${what}, so the Zap did not run.`,
    };
  }
};
