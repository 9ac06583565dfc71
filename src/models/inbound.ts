import * as t from 'io-ts';

/**
 * What Zapier hands a delivery's perform, decoded at the edge: the raw request, and what the Zap's subscribe
 * stored for it.
 */

export const RawRequest = t.intersection(
  [t.type({ content: t.string }), t.partial({ headers: t.UnknownRecord })],
  'RawRequest',
);

/**
 * What performSubscribe returned, as Zapier stores it for this Zap: the endpoint's id and signing secret, when the
 * subscribe began (the secret was current then), the Zap's scope (its runs are claimed under it), since when it has
 * run events, and the generation of the Zap's endpoint it pointed (src/zap/policy.ts).
 */
export const SubscribeData = t.type(
  { id: t.string, secret: t.string, checkedAt: t.number, zap: t.string, on: t.number, gen: t.number },
  'SubscribeData',
);
export type SubscribeData = t.TypeOf<typeof SubscribeData>;
