import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { CATCH_UP_REACH_MS, PACE_PER_SECOND } from '../limits';
import type { Caller } from '../svix/client';
import { timeOfProviderId } from '../svix/ksuid';
import { RETRY_JITTER, RETRY_SCHEDULE_MS } from '../svix/rules';
import { CLOCK_ALLOWANCE_SECONDS } from '../svix/signature';
import type { ZapMeta } from './endpoint';

/**
 * A Zap's life as pure rules (life.ts carries them out with Svix and z.cache): whose runs a Zap claims, when a
 * subscribe catches up and from when, and how the Zaps of a Consumer App share its pace. No I/O: the simulation uses
 * them as the app does.
 */

/** Edits, and catching up: how soon after a Zap is turned off a subscribe counts as its edit; how long Svix may
 * still be sending a message (its retries, their jitter included: the old endpoint's pending retries end with it);
 * and the furthest back any catch-up reaches (as long as runs are remembered). */
export const CATCH_UP = {
  editWithinMs: 2 * 60_000,
  inFlightMs: Math.ceil(RETRY_SCHEDULE_MS.reduce((sum, wait) => sum + wait, 0) * (1 + RETRY_JITTER)),
  maxMs: CATCH_UP_REACH_MS,
};

export const hashOf = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);

/** A Zap's scope: the Zap Zapier names at subscribe, or else its target URL (Trigger Inbox names no Zap). */
export const zapScopeOf = (zap: ZapMeta | undefined, targetUrl: string): string => {
  const id = zap?.id === undefined ? '' : String(zap.id).trim();
  return id !== '' && id !== '0' ? `zap-${hashOf(id)}` : `url-${hashOf(targetUrl)}`;
};

/** Per Consumer App, by where the connection finds it. */
export const registryKey = (connection: Pick<Caller['connection'], 'appId' | 'baseUrl'>): string =>
  `zaps:${hashOf(`${connection.appId}\u0000${connection.baseUrl}`)}`;

/** When a Zap was last turned off, under which scope its runs were claimed, from when it may have missed events,
 * and since when it had run them. */
export const Off = t.type({ at: t.number, claims: t.string, since: t.number, on: t.number });
export type Off = t.TypeOf<typeof Off>;
/** Per Consumer App (by where the connection finds it) and Zap: a Zap moved to another Consumer App finds none there. */
export const offKey = (connection: Pick<Caller['connection'], 'appId' | 'baseUrl'>, scope: string): string =>
  `off:${hashOf(`${connection.appId}\u0000${connection.baseUrl}`)}:${scope}`;

/** The rate each of `count` endpoints gets: 25 a second between them, at least 1 each (Svix's least). */
export const shareOf = (count: number): number => Math.max(1, Math.floor(PACE_PER_SECOND / Math.max(1, count)));

/**
 * From when a subscribe asks Svix to send again what its Zap missed (none: it does not), and since when the Zap
 * runs events (its `on`, kept with its endpoint): never from before the Zap was on (but for the 5 minutes Svix's
 * clock may step back), or it would run events it never had. An edit catches up unasked: its new version subscribed
 * first while the old one's endpoint (`earlier`, its `on`) is there, or the old one was turned off in the last 2
 * minutes. Otherwise only when asked.
 */
export const catchUpOf = (at: {
  now: number;
  scope: string;
  /** Whether the person asked to run events missed while the Zap was off. */
  asked: boolean;
  earlier: number | undefined;
  off: Off | undefined;
}): { since?: number; on: number } => {
  // Svix compares `since` with its own clock, which may be 5 minutes from this one.
  const from = (on: number) => on - CLOCK_ALLOWANCE_SECONDS * 1_000;
  if (at.earlier !== undefined)
    return { since: Math.max(at.now - CATCH_UP.inFlightMs, from(at.earlier)), on: at.earlier };
  // Runs claimed under another scope (a subscription made before scopes) would run again.
  const { off } = at;
  const known = off !== undefined && off.claims === at.scope && at.now - off.at <= CATCH_UP.maxMs;
  if (!known || (!at.asked && at.now - off.at > CATCH_UP.editWithinMs)) return { on: at.now };
  const since = Math.max(off.since, from(off.on), at.now - CATCH_UP.maxMs);
  return { since, on: Math.max(since, off.on) };
};

/**
 * Since when a Zap has run events, given since when it ran them here (this clock) and the endpoint Svix made for it:
 * the earlier of the two, Svix's id telling when it made the endpoint on its own clock, which `since` is read on.
 */
export const onAtSvix = (on: number, endpointId: string): number => Math.min(on, timeOfProviderId(endpointId) ?? on);
