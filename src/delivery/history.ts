import * as t from 'io-ts';

/**
 * What the processes of a Zap know of its endpoint's secrets, shared in z.cache: each secret as last seen current
 * by a read of Svix. Merging two histories is commutative and idempotent, so every process converges on one.
 */

/** A read that began at `start` (on process `by`'s clock) and answered at `end` showed `secret` current. */
export const Sighting = t.type({ secret: t.string, start: t.number, end: t.number, by: t.string }, 'Sighting');
export type Sighting = t.TypeOf<typeof Sighting>;
/** The secret last seen current, and the others the endpoint had, each as last seen, newest first. */
export const History = t.type({ current: Sighting, old: t.array(Sighting) }, 'History');
export type History = t.TypeOf<typeof History>;

/** Secrets kept besides the current one: Svix signs with at most the current and those in their grace period. */
const MAX_OLD = 20;
/** Two processes' clocks may differ this much: sightings of two secrets closer than this cannot be ordered. */
export const SKEW_MS = 2_000;

/** Ordered by when their reads began; a tie goes by the secret, then the rest, so every process orders them alike. */
const later = (a: Sighting, b: Sighting): boolean =>
  a.start !== b.start ? a.start > b.start : `${a.secret} ${a.by} ${a.end}` > `${b.secret} ${b.by} ${b.end}`;

/** Every secret either history knew, each as last seen; the latest seen is current. */
export const merge = (a: History, b: History): History => {
  const last = new Map<string, Sighting>();
  for (const seen of [a.current, b.current, ...a.old, ...b.old]) {
    const known = last.get(seen.secret);
    if (!known || later(seen, known)) last.set(seen.secret, seen);
  }
  const [current = a.current, ...old] = [...last.values()].sort((x, y) => (later(x, y) ? -1 : 1));
  return { current, old: old.slice(0, MAX_OLD) };
};

/** Whether `shared` lacks something `mine` knows. */
export const lacks = (shared: History, mine: History): boolean =>
  JSON.stringify(merge(shared, mine)) !== JSON.stringify(merge(shared, shared));

/**
 * The secrets whose sightings cannot be ordered against the current one (one process's reads never overlap; another
 * process's clock may differ by SKEW_MS), and the time after which a read settles which is current; else undefined.
 * Every older sighting counts, not only the latest: a process whose clock is behind files the newest secret below
 * an older one that a process ahead of it saw.
 */
export const unsureOf = (
  { current, old }: History,
  skewMs = SKEW_MS,
): { until: number; secrets: string[] } | undefined => {
  const margin = (seen: Sighting) => (seen.by === current.by ? 0 : skewMs);
  const unordered = old.filter((seen) => seen.end + margin(seen) > current.start);
  if (unordered.length === 0) return undefined;
  const until = Math.max(...unordered.map((seen) => Math.max(seen.end, current.end) + margin(seen)));
  return { until, secrets: unordered.map((seen) => seen.secret) };
};
