import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import type { ZObject } from 'zapier-platform-core';
// The event's own modules, not the models index: a delivery loads only what it uses.
import { AuctionStatusChange } from '../models/AuctionStatusChange';
import { describeDecodeErrors } from '../models/decode';
import type { Refusal } from '../provider/signature';

/**
 * Reading one delivery: the raw request Zapier hands to perform, and the
 * event payload inside it, both decoded at the edge.
 */

export const RawRequest = t.intersection(
  [t.type({ content: t.string }), t.partial({ headers: t.record(t.string, t.unknown) })],
  'RawRequest',
);

/** What performSubscribe returned, as Zapier stores it for this Zap. */
export const SubscribeData = t.type({ id: t.string, secret: t.string }, 'SubscribeData');
export type SubscribeData = t.TypeOf<typeof SubscribeData>;

const REFUSALS: Record<Refusal, string> = {
  'missing-headers':
    "Refused a delivery without the provider's signature headers (svix-id, svix-timestamp, svix-signature): it did not come from your Consumer App, so the Zap did not run. Nothing needs to change unless you sent it yourself.",
  'bad-timestamp':
    'Refused a delivery whose signature time (svix-timestamp) is not a valid time: it did not come from your Consumer App, so the Zap did not run.',
  'too-old':
    'Refused a delivery signed more than 5 minutes ago: it may be a replay of an old delivery, so the Zap did not run. If every delivery is refused this way, check that the clock of the system sending them is right.',
  'too-new':
    'Refused a delivery signed more than 5 minutes in the future, so the Zap did not run. If every delivery is refused this way, check that the clock of the system sending them is right.',
  'no-valid-signature':
    "Refused a delivery whose signature (svix-signature) does not match this Zap's endpoint secret: it did not come from your Consumer App, so the Zap did not run. If every delivery is refused, turn the Zap off and on again.",
  'bad-secret':
    "This Zap's stored signing secret is damaged, so deliveries cannot be checked. Turn the Zap off and on again.",
};

export const refusalMessage = (refusal: Refusal): string => REFUSALS[refusal];

export const refuse = (z: ZObject, refusal: Refusal): never => {
  throw new z.errors.Error(refusalMessage(refusal), 'DeliveryRefused', 401);
};

export type PayloadResult = { ok: true; payload: AuctionStatusChange } | { ok: false; message: string };

/** Decodes an event payload; a failure names the fields, never their values. */
export const decodePayload = (body: unknown): PayloadResult => {
  const decoded = AuctionStatusChange.decode(body);
  if (isRight(decoded)) return { ok: true, payload: decoded.right };
  const problems = describeDecodeErrors(decoded.left);
  return {
    ok: false,
    message:
      `The auction event did not have the published form (${problems.slice(0, 5).join('; ')}), so the Zap did not run. ` +
      "This comes from the auction service's side: send these field names to its support team.",
  };
};

/** Parses a raw JSON body; a body that is not JSON is a plain error. */
export const parseBody = (content: string): { ok: true; body: unknown } | { ok: false; message: string } => {
  try {
    return { ok: true, body: JSON.parse(content) };
  } catch {
    return {
      ok: false,
      message:
        "The auction event's body is not JSON, so the Zap did not run. This comes from the auction service's side: tell its support team the event body could not be read.",
    };
  }
};
