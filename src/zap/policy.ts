import { createHash } from 'node:crypto';
import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import { EDIT_GAP_MS, PACE_PER_SECOND, SVIX_CLOCK_ALLOWANCE_MS } from '../limits';
import type { EndpointOut } from '../svix/codecs';
import { RETRY_JITTER, RETRY_SCHEDULE_MS } from '../svix/rules';
import type { ZapMeta } from './endpoint';

/**
 * A Zap's life as pure rules (life.ts carries them out with Svix): which endpoint is a Zap's, whose turn it is, what
 * a Zap turned on again skips, and how the Zaps of a Consumer App share its pace. No I/O: the simulation uses them as
 * the app does.
 *
 * The design in four rules (docs/guarantees.md, "A Zap's life"):
 * 1. A Zap has one endpoint in the Consumer App, found by a uid its scope gives. Each subscribe points it at the
 *    subscription's target URL and counts a new generation; it never makes a second one for the same Zap.
 * 2. An unsubscribe of the endpoint's current generation parks it: its URL goes where nothing answers, so that Svix
 *    keeps every message it has for the Zap in its own retry schedule (about 28 hours, each retried) until a
 *    subscribe points it at Zapier again. An unsubscribe of an older generation (an edit's old version, after the
 *    new one subscribed) changes nothing.
 * 3. A Zap subscribed again runs what Svix then still holds for it, each once (claims are per Zap), unless it was
 *    parked for over an hour and the person did not ask for it: then what was made while it was off is skipped.
 * 4. An endpoint parked for longer than Svix retries anything is deleted by the next subscribe or unsubscribe on the
 *    Consumer App; the Zaps' live endpoints share 25 messages a second, checked by a listing after each change.
 */

/** How long Svix may still be sending a message after it was made: every retry of its schedule, jitter included. */
export const IN_FLIGHT_MS = Math.ceil(RETRY_SCHEDULE_MS.reduce((sum, wait) => sum + wait, 0) * (1 + RETRY_JITTER));
/** A parked endpoint older than this holds nothing Svix will still send: the next operation deletes it. */
export const PARKED_FOR_MS = IN_FLIGHT_MS;

export const hashOf = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);

/** A Zap's scope: the Zap Zapier names at subscribe, or else its target URL (Trigger Inbox names no Zap). */
export const zapScopeOf = (zap: ZapMeta | undefined, targetUrl: string): string => {
  const id = zap?.id === undefined ? '' : String(zap.id).trim();
  return id !== '' && id !== '0' ? `zap-${hashOf(id)}` : `url-${hashOf(targetUrl)}`;
};

/** The uid of a Zap's one endpoint: the same for every subscribe of the Zap, in whichever Consumer App. */
export const ZAP_UID_PREFIX = 'zapier-zap-';
export const zapUidOf = (scope: string): string => `${ZAP_UID_PREFIX}${hashOf(scope)}`;

/** Where a parked endpoint points: a name that never resolves (RFC 2606), so every attempt fails and is retried. */
export const parkedUrlOf = (scope: string): string => `https://parked.invalid/zapier/${hashOf(scope)}`;

/** What a Zap's endpoint keeps in its metadata (Svix keeps strings): its Zap, its generation, since when the Zap
 * runs events, and when it was parked, if it is. */
const Numeric = new t.Type<number, string, unknown>(
  'Numeric',
  (value): value is number => typeof value === 'number',
  (value, context) => {
    const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    return Number.isFinite(parsed) ? t.success(parsed) : t.failure(value, context);
  },
  String,
);
/** Windows of time, as metadata keeps them: `from:until` pairs, comma-separated. */
export type Skip = { from: number; until: number };
const Windows = new t.Type<Skip[], string, unknown>(
  'Windows',
  (value): value is Skip[] => Array.isArray(value),
  (value, context) => {
    if (typeof value !== 'string') return t.failure(value, context);
    const pairs = value === '' ? [] : value.split(',').map((pair) => pair.split(':').map(Number));
    const windows = pairs.flatMap(([from, until]) =>
      from !== undefined && until !== undefined && Number.isFinite(from) && Number.isFinite(until)
        ? [{ from, until }]
        : [],
    );
    return windows.length === pairs.length ? t.success(windows) : t.failure(value, context);
  },
  (windows) => windows.map(({ from, until }) => `${from}:${until}`).join(','),
);
export const ZapEndpointMetadata = t.intersection(
  [t.type({ zap: t.string, gen: Numeric, on: Numeric }), t.partial({ parked: Numeric, skip: Windows })],
  'ZapEndpointMetadata',
);
export type ZapEndpointMetadata = t.TypeOf<typeof ZapEndpointMetadata>;
export const metadataOf = (endpoint: Pick<EndpointOut, 'metadata'>): ZapEndpointMetadata | undefined => {
  const decoded = ZapEndpointMetadata.decode(endpoint.metadata ?? undefined);
  return isRight(decoded) ? decoded.right : undefined;
};
export const encodeMetadata = ({ zap, gen, on, parked, skip }: ZapEndpointMetadata): Record<string, string> => ({
  ...{ zap, gen: String(gen), on: String(on) },
  ...(parked === undefined ? {} : { parked: String(parked) }),
  ...(skip === undefined || skip.length === 0 ? {} : { skip: Windows.encode(skip) }),
});

/** Whether an endpoint is one of this design's Zap endpoints (a uid from zapUidOf, and metadata it can read). */
export const isOneZapEndpoint = (endpoint: EndpointOut): boolean =>
  (endpoint.uid ?? '').startsWith(ZAP_UID_PREFIX) && metadataOf(endpoint) !== undefined;

/**
 * What a subscribe that finds its Zap's endpoint parked skips: the messages made while it was off, when it was off
 * for over an hour and the person did not ask to run them (an edit that turns a Zap off and on calls within that).
 * From when it was parked (this clock: 5 minutes later, as Svix's message times may be that far ahead) until Svix
 * pointed it at Zapier again (Svix's clock, as its PATCH answered; without that, 5 minutes before now).
 */
export const skipOf = (at: {
  parked: number | undefined;
  now: number;
  asked: boolean;
  svixAt?: number | undefined;
}) => {
  if (at.parked === undefined || at.asked || at.now - at.parked <= EDIT_GAP_MS) return undefined;
  return { from: at.parked + SVIX_CLOCK_ALLOWANCE_MS, until: at.svixAt ?? at.now - SVIX_CLOCK_ALLOWANCE_MS };
};
/**
 * The windows a subscription skips: those of earlier times off whose messages Svix may still be retrying (a
 * message made while off may arrive, retried, after the Zap has been off and on again since), and this one's.
 * Kept as long as Svix may retry anything with Retry-After doubling its waits, at most 10.
 */
export const SKIPS_KEPT_MS = 2 * IN_FLIGHT_MS;
export const skipsOf = (kept: readonly Skip[] = [], now: number, skip?: Skip): Skip[] =>
  [...kept.filter((window) => window.until > now - SKIPS_KEPT_MS), ...(skip ? [skip] : [])].slice(-10);

/** The rate each of `count` endpoints gets: 25 a second between them, at least 1 each (Svix's least). */
export const shareOf = (count: number): number => Math.max(1, Math.floor(PACE_PER_SECOND / Math.max(1, count)));

/**
 * What a listing of the Consumer App's endpoints asks of the Zaps' pace and leftovers: each live Zap endpoint (not
 * parked, not disabled, paced: one Svix refused pacing has none) at its share of 25 a second, and every Zap endpoint
 * parked longer than `sweepAfterMs` (at least as long as Svix retries anything) deleted.
 */
export const tidyOf = (endpoints: readonly EndpointOut[], now: number, sweepAfterMs = PARKED_FOR_MS) => {
  const zaps = endpoints.flatMap((endpoint) => {
    const metadata = isOneZapEndpoint(endpoint) ? metadataOf(endpoint) : undefined;
    return metadata ? [{ endpoint, metadata }] : [];
  });
  const live = zaps.filter(({ endpoint, metadata }) => metadata.parked === undefined && endpoint.disabled !== true);
  const rate = shareOf(live.length);
  return {
    rate,
    pace: live.flatMap(({ endpoint }) =>
      typeof endpoint.throttleRate === 'number' && endpoint.throttleRate !== rate ? [endpoint.id] : [],
    ),
    remove: zaps.flatMap(({ endpoint, metadata }) =>
      metadata.parked !== undefined && now - metadata.parked > sweepAfterMs ? [endpoint.id] : [],
    ),
  };
};
