import * as t from 'io-ts';

/**
 * What is known of an endpoint's signing secrets over time: the secret read
 * most recently, and the ones it replaced, each with when it was first and
 * last seen current. Pure: endpointSecret.ts keeps a history in memory and
 * in z.cache, and decides with it which deliveries run on their signature,
 * which the provider's record must confirm, and which are junk.
 *
 * All times are milliseconds since the epoch, on this side's clock.
 */

export const SecretEntry = t.intersection(
  [
    t.type({
      secret: t.string,
      /** When this secret was first seen current (a read of it, or the subscribe that made it). */
      from: t.number,
      /** When it was last seen current. */
      seen: t.number,
    }),
    /** When it was first seen replaced: from then on a signature made with it alone is not trusted. */
    t.partial({ until: t.number }),
  ],
  'SecretEntry',
);
export type SecretEntry = t.TypeOf<typeof SecretEntry>;

export const SecretHistory = t.intersection(
  [
    t.type({ secrets: t.array(SecretEntry) }),
    t.partial({
      /** Provider calls left for deliveries that match no known secret: `tokens` at `at`. */
      allowance: t.type({ tokens: t.number, at: t.number }),
      /** Whether the cache honours `nx` (see probeNx), for Zaps whose subscribe did not learn it. */
      cacheHonoursNx: t.boolean,
    }),
  ],
  'SecretHistory',
);
export type SecretHistory = t.TypeOf<typeof SecretHistory>;

/** The provider keeps at most 10 old secrets; a few more cover what each process saw. */
const MAX_SECRETS = 12;

/**
 * How far the provider's clock (which gives a delivery's signing time, in
 * whole seconds) may be from this side's. Only the decisions about deliveries
 * that match no known secret rely on it.
 */
export const CLOCK_SKEW_MS = 2_000;

/** Seen last first; ties broken by the secret itself, so two processes merging either way round agree. */
const laterFirst = (a: SecretEntry, b: SecretEntry): number =>
  b.seen - a.seen || b.from - a.from || (a.secret < b.secret ? -1 : a.secret > b.secret ? 1 : 0);

/**
 * The secret seen current most recently. Every history made here is kept
 * newest first with one current secret (see normalise), so it is the first
 * entry not replaced: this runs on every delivery, without a copy or a sort.
 */
export const currentOf = (history: SecretHistory): SecretEntry | undefined =>
  history.secrets.find((entry) => entry.until === undefined);

/**
 * Two accounts of one secret as one. A secret is current for a spell, from
 * `from` until `until`. Once any process has seen it replaced, it stays
 * replaced for that spell, even when another process's read says it was
 * current later: that read may have crossed the rotation (started after it,
 * answered from before it), and a revoked secret must not come back. Only a
 * later spell, begun by a read that showed it current again, reopens it.
 */
const mergeEntry = (known: SecretEntry, entry: SecretEntry): SecretEntry => {
  const [earlier, later] = known.from <= entry.from ? [known, entry] : [entry, known];
  const newSpell = earlier.until !== undefined && earlier.until <= later.from;
  const from = newSpell ? later.from : earlier.from;
  const endings = [known.until, entry.until].filter((until): until is number => until !== undefined && until >= from);
  const until = endings.length > 0 ? Math.min(...endings) : undefined;
  return {
    secret: entry.secret,
    from,
    seen: Math.max(known.seen, entry.seen),
    ...(until === undefined ? {} : { until }),
  };
};

/**
 * The history brought into one shape: one entry per secret, one current
 * secret (the one seen current last; any other is marked replaced from when
 * that one was first seen), newest first, at most MAX_SECRETS.
 */
const normalise = (entries: readonly SecretEntry[], rest: Omit<SecretHistory, 'secrets'>): SecretHistory => {
  const bySecret = new Map<string, SecretEntry>();
  for (const entry of entries) {
    const known = bySecret.get(entry.secret);
    bySecret.set(entry.secret, known ? mergeEntry(known, entry) : { ...entry });
  }
  const all = [...bySecret.values()].sort(laterFirst);
  const current = all.find((entry) => entry.until === undefined);
  const secrets = all
    .map((entry) =>
      entry === current || entry.until !== undefined || !current
        ? entry
        : { ...entry, until: Math.max(entry.seen, current.from) },
    )
    .slice(0, MAX_SECRETS);
  return { ...rest, secrets };
};

/** The history of an endpoint whose only known secret is the one its subscribe made. */
export const startingWith = (secret: string, from: number, seen: number): SecretHistory => ({
  secrets: [{ secret, from, seen }],
});

/**
 * What a read of the endpoint's secret, started at `readAt`, showed: `secret`
 * is current, any other is replaced. A secret known to be replaced, shown
 * current again, starts a new spell: callers read once more first, so that a
 * read that crossed a rotation cannot bring back a revoked secret.
 */
export const observeRead = (history: SecretHistory, secret: string, readAt: number): SecretHistory => {
  const { secrets, ...rest } = history;
  const known = secrets.find((entry) => entry.secret === secret);
  // A secret seen current again after it was replaced starts a new spell as current.
  const from = known && known.until === undefined ? known.from : readAt;
  const others = secrets
    .filter((entry) => entry.secret !== secret)
    .map((entry) => (entry.until === undefined ? { ...entry, until: readAt } : entry));
  return normalise([{ secret, from, seen: readAt }, ...others], rest);
};

/**
 * Two processes' knowledge as one: every secret either knew, and the more
 * spent allowance (each process spends within its own view, so N processes
 * may spend up to N bursts at once).
 */
export const mergeHistories = (
  a: SecretHistory,
  b: SecretHistory | undefined,
  now: number,
  settings: AllowanceSettings,
): SecretHistory => {
  if (!b) return a;
  const allowance = [a.allowance, b.allowance]
    .filter((spent): spent is Allowance => spent !== undefined)
    .sort((x, y) => tokensOf(x, now, settings) - tokensOf(y, now, settings))[0];
  const cacheHonoursNx = a.cacheHonoursNx ?? b.cacheHonoursNx;
  return normalise([...a.secrets, ...b.secrets], {
    ...(allowance ? { allowance } : {}),
    ...(cacheHonoursNx === undefined ? {} : { cacheHonoursNx }),
  });
};

/** Forgets secrets replaced before `before`: a delivery signed with one is older than runs are remembered. */
export const forgetBefore = (history: SecretHistory, before: number): SecretHistory => ({
  ...history,
  secrets: history.secrets.filter((entry) => entry.until === undefined || entry.until >= before),
});

export type Classification =
  /** Signed with the current secret: the delivery is the event. */
  | { kind: 'current'; entry: SecretEntry }
  /** Signed with a secret this endpoint had: genuine only if the provider's record says so. */
  | { kind: 'replaced'; entry: SecretEntry }
  /** Signed with no secret known here. */
  | { kind: 'unknown' };

/** Which known secret, if any, made the delivery's signature. */
export const classify = (history: SecretHistory, signedWith: (secret: string) => boolean): Classification => {
  const current = currentOf(history);
  if (current && signedWith(current.secret)) return { kind: 'current', entry: current };
  for (const entry of history.secrets) {
    if (entry !== current && entry.until !== undefined && signedWith(entry.secret)) return { kind: 'replaced', entry };
  }
  return { kind: 'unknown' };
};

/** The latest moment the provider can have signed a delivery whose signing time says `signedAtSeconds`. */
export const signedBy = (signedAtSeconds: number): number => signedAtSeconds * 1000 + 1000 + CLOCK_SKEW_MS;

/**
 * Whether what is known now settles a delivery that matches no known secret:
 * the current secret was read after the delivery was signed, or after this
 * invocation began (a delivery is always signed before it arrives). A secret
 * newer than every known one cannot have signed it then.
 */
export const settles = (history: SecretHistory, signedAtSeconds: number, startedAt: number): boolean => {
  const current = currentOf(history);
  return current !== undefined && current.seen >= Math.min(startedAt, signedBy(signedAtSeconds));
};

/**
 * Whether a delivery signed at `signedAtSeconds` may have been signed with a
 * secret never seen here: between two reads that saw different secrets, one
 * rotation or several happened, and a secret that came and went in between
 * was never seen (a margin for the clocks widens the span). Only such a
 * delivery that matches no known secret is worth asking the provider's
 * record about.
 */
export const inUnseenSpan = (history: SecretHistory, signedAtSeconds: number): boolean => {
  const earliest = signedAtSeconds * 1000 - CLOCK_SKEW_MS;
  const latest = signedBy(signedAtSeconds);
  const byFrom = [...history.secrets].sort((a, b) => a.from - b.from);
  for (let index = 1; index < byFrom.length; index += 1) {
    const before = byFrom[index - 1];
    const after = byFrom[index];
    if (before && after && latest > before.seen && earliest < after.from) return true;
  }
  return false;
};

// ---- The allowance of provider calls for deliveries that match no known secret ----

export interface AllowanceSettings {
  /** A burst of this many calls… */
  burst: number;
  /** …then one more every this many ms. */
  refillMs: number;
}

type Allowance = NonNullable<SecretHistory['allowance']>;

const tokensOf = (allowance: Allowance, now: number, settings: AllowanceSettings): number =>
  Math.min(settings.burst, allowance.tokens + Math.max(0, now - allowance.at) / settings.refillMs);

/** Calls left now. */
export const tokensLeft = (history: SecretHistory, now: number, settings: AllowanceSettings): number =>
  history.allowance ? tokensOf(history.allowance, now, settings) : settings.burst;

/** How long until a call is allowed (0 when one is now). */
export const waitForToken = (history: SecretHistory, now: number, settings: AllowanceSettings): number => {
  const tokens = tokensLeft(history, now, settings);
  return tokens >= 1 ? 0 : Math.ceil((1 - tokens) * settings.refillMs);
};

/** One call spent. */
export const spendToken = (history: SecretHistory, now: number, settings: AllowanceSettings): SecretHistory => ({
  ...history,
  allowance: { tokens: tokensLeft(history, now, settings) - 1, at: now },
});

/** A call that proved useful (it found a new secret, or a genuine event) is given back. */
export const refundToken = (history: SecretHistory, now: number, settings: AllowanceSettings): SecretHistory => ({
  ...history,
  allowance: { tokens: Math.min(settings.burst, tokensLeft(history, now, settings) + 1), at: now },
});
