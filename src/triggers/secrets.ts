import * as t from 'io-ts';

/**
 * What is known of an endpoint's signing secrets: each with when a read first
 * and last showed it current, and when it was first seen replaced (ms on this
 * side's clocks). Pure: verify.ts keeps it in memory and in z.cache.
 */

const Seen = t.type({ secret: t.string, from: t.number, seen: t.number }, 'SecretSeen');
/** `firstSigned`: the earliest signing time (Svix's clock) of a delivery seen signed with it. */
const Later = t.partial({ until: t.number, firstSigned: t.number }, 'SecretLater');
export const SecretEntry = t.intersection([Seen, Later], 'SecretEntry');
export type SecretEntry = t.TypeOf<typeof SecretEntry>;
export const SecretHistory = t.type({ secrets: t.array(SecretEntry) }, 'SecretHistory');
export type SecretHistory = t.TypeOf<typeof SecretHistory>;

/** Svix keeps at most 10 old secrets; a few more cover what each process saw. Older ones are forgotten. */
const MAX_SECRETS = 12;

/** The secret a read showed current last: histories are kept with it first among those not replaced. */
export const currentOf = (history: SecretHistory): SecretEntry | undefined =>
  history.secrets.find((entry) => entry.until === undefined);

/**
 * Two accounts of one secret as one. Once replaced, it stays replaced for that
 * spell; only a read made after the replacement was seen starts a new one.
 */
const mergeEntry = (a: SecretEntry, b: SecretEntry): SecretEntry => {
  const [earlier, later] = a.from <= b.from ? [a, b] : [b, a];
  if (earlier.until !== undefined && earlier.until <= later.from) return later;
  const merged: SecretEntry = { secret: a.secret, from: earlier.from, seen: Math.max(a.seen, b.seen) };
  for (const key of ['until', 'firstSigned'] as const) {
    const first = Math.min(a[key] ?? Infinity, b[key] ?? Infinity);
    if (first !== Infinity) merged[key] = first;
  }
  return merged;
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
 * What a read of the secret that started at `readAt` showed: `secret` is
 * current and every other is replaced. A read that started before the
 * latest one already known may have been answered from before a rotation,
 * so it changes nothing.
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

/** Whether `shared` lacks something `mine` knows: a secret, or its replacement (first signing times go along). */
export const lacks = (shared: SecretHistory, mine: SecretHistory): boolean =>
  mine.secrets.some((entry) => {
    const there = shared.secrets.find((candidate) => candidate.secret === entry.secret);
    return !there || (entry.until ?? Infinity) < (there.until ?? Infinity);
  });

/** The history once a delivery signed at `signedAt` (Svix's clock) was seen signed with the current secret. */
export const signedByCurrent = (history: SecretHistory, signedAt: number): SecretHistory => {
  const current = currentOf(history);
  if (!current || (current.firstSigned ?? Infinity) <= signedAt) return history;
  return { secrets: history.secrets.map((entry) => (entry === current ? { ...entry, firstSigned: signedAt } : entry)) };
};

/**
 * The spans in which a secret never seen here may have been current, each
 * from when the secret before was last seen current to the entry of the one
 * after it; the first from when the endpoint was made, if older secrets were
 * forgotten.
 */
export const unseenSpans = (history: SecretHistory, madeAt: number): Array<{ from: number; next: SecretEntry }> => {
  const spans: Array<{ from: number; next: SecretEntry }> = [];
  let seenUntil = madeAt;
  for (const next of [...history.secrets].sort((a, b) => a.from - b.from)) {
    if (next.from > seenUntil) spans.push({ from: seenUntil, next });
    seenUntil = Math.max(seenUntil, next.seen);
  }
  return spans;
};
