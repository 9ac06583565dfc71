import * as t from 'io-ts';

/**
 * What is known of an endpoint's signing secrets: each with when a read first
 * and last showed it current, and when it was first seen replaced (ms on this
 * side's clocks). Pure: verify.ts keeps it in memory and in z.cache.
 */

const Seen = t.type({ secret: t.string, from: t.number, seen: t.number }, 'SecretSeen');
const Later = t.partial({ until: t.number }, 'SecretLater');
export const SecretEntry = t.intersection([Seen, Later], 'SecretEntry');
export type SecretEntry = t.TypeOf<typeof SecretEntry>;
export const SecretHistory = t.type({ secrets: t.array(SecretEntry) }, 'SecretHistory');
export type SecretHistory = t.TypeOf<typeof SecretHistory>;

/** Svix signs with at most 10 old secrets at once; 20 remember every secret of a busy day of rotations. Older ones are forgotten. */
const MAX_SECRETS = 20;

/** The secret a read showed current last: histories are kept with it first among those not replaced. */
export const currentOf = (history: SecretHistory): SecretEntry | undefined =>
  history.secrets.find((entry) => entry.until === undefined);

/** Two accounts of one secret as one: replaced stays replaced, unless a later read made it current again. */
const mergeEntry = (a: SecretEntry, b: SecretEntry): SecretEntry => {
  const [earlier, later] = a.from <= b.from ? [a, b] : [b, a];
  if (earlier.until !== undefined && earlier.until <= later.from) return later;
  const merged: SecretEntry = { secret: a.secret, from: earlier.from, seen: Math.max(a.seen, b.seen) };
  const until = Math.min(a.until ?? Infinity, b.until ?? Infinity);
  return until === Infinity ? merged : { ...merged, until };
};

/** Seen current last first; ties broken by the secret (each is there once), so merges agree either way round. */
const laterFirst = (a: SecretEntry, b: SecretEntry): number =>
  b.seen - a.seen || b.from - a.from || (a.secret < b.secret ? -1 : 1);

/** One entry per secret, newest first, one current (the one seen last); any other is replaced. */
const normalise = (entries: readonly SecretEntry[]): SecretHistory => {
  const bySecret = new Map<string, SecretEntry>();
  for (const entry of entries) {
    const known = bySecret.get(entry.secret);
    bySecret.set(entry.secret, known ? mergeEntry(known, entry) : entry);
  }
  const all = [...bySecret.values()].sort(laterFirst);
  const current = all.find((entry) => entry.until === undefined);
  const secrets = all.map((entry) =>
    entry === current || entry.until !== undefined || !current
      ? entry
      : { ...entry, until: Math.max(entry.seen, current.from) },
  );
  return { secrets: secrets.slice(0, MAX_SECRETS) };
};

/**
 * What a read that started at `readAt` showed: `secret` current, every other
 * replaced. A read older than what is known may predate a rotation: no change.
 */
export const observeRead = (history: SecretHistory, secret: string, readAt: number): SecretHistory => {
  if (history.secrets.some((entry) => entry.from > readAt || (entry.until ?? readAt) > readAt)) return history;
  const others = history.secrets.map((entry) =>
    entry.secret === secret || entry.until !== undefined ? entry : { ...entry, until: readAt },
  );
  return normalise([...others, { secret, from: readAt, seen: readAt }]);
};

/** Two processes' knowledge as one: every secret either knew, and every replacement either saw. */
export const merge = (a: SecretHistory, b: SecretHistory): SecretHistory => normalise([...a.secrets, ...b.secrets]);

/** Whether `shared` lacks something `mine` knows: a secret, or its replacement. */
export const lacks = (shared: SecretHistory, mine: SecretHistory): boolean =>
  mine.secrets.some((entry) => {
    const there = shared.secrets.find((candidate) => candidate.secret === entry.secret);
    return !there || (entry.until ?? Infinity) < (there.until ?? Infinity);
  });
