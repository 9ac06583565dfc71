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
 * secret was known to be current, whether the platform's cache honours `nx` (when the subscribe learnt it), the
 * Zap's scope (its runs are claimed under it; a subscribe before there was one: the endpoint's id), since when it
 * has run events, the generation of the Zap's endpoint it pointed (src/zap/policy.ts).
 */
export const SubscribeData = t.intersection(
  [
    t.type({ id: t.string, secret: t.string }),
    t.partial({
      checkedAt: t.number,
      cacheHonoursNx: t.boolean,
      zap: t.string,
      on: t.number,
      /** The generation of the Zap's endpoint this subscription pointed it at (zap/policy.ts). */
      gen: t.number,
    }),
  ],
  'SubscribeData',
);
export type SubscribeData = t.TypeOf<typeof SubscribeData>;

/** Under what a subscription's runs are claimed: its Zap's scope, or its endpoint's id for one made before scopes. */
export const claimScopeOf = (subscription: SubscribeData): string => subscription.zap ?? subscription.id;
