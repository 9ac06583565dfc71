import { isRight } from 'fp-ts/Either';
// The event's own modules, not the models index: a delivery loads only what it uses.
import { AuctionStatusChange } from '../models/AuctionStatusChange';
import { describeDecodeErrors } from '../models/decode';
import { JsonTooDeep, MAX_JSON_DEPTH, parseJson } from '../models/json';
import { flattenExtras, mentionsModel, type ExtraFields } from './extraFields';
import type * as PublishedModels from './models';

/**
 * An event's payload, decoded at the edge: the three promised fields strictly (a failure names the fields,
 * never their values), and every other field it carries as extra Zap fields, which never stop the Zap.
 */

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
const publishedModels = (): typeof PublishedModels => require('./models');

/** Parses a raw JSON body, keeping every digit (see parseJson); a body that cannot be read is a plain error. */
export const parseBody = (content: string): { ok: true; body: unknown } | { ok: false; message: string } => {
  try {
    return { ok: true, body: parseJson(content) };
  } catch (error) {
    const what = error instanceof JsonTooDeep ? `is nested more than ${MAX_JSON_DEPTH} levels deep` : 'is not JSON';
    return {
      ok: false,
      message: `Tell the auction service's support team that an event could not be read: its content ${what}, so the Zap did not run.`,
    };
  }
};
