import type { Outcome } from './vocabulary';

/** What `--set` takes: a number within bounds (whole, unless `whole` is false), or one of some words. */
type Taken<T> = { read: (text: string) => T | undefined; says: string };
const number = (min: number, max: number, whole = true): Taken<number> => ({
  read: (text) =>
    [Number(text)].find((v) => text.trim() !== '' && (!whole || Number.isInteger(v)) && v >= min && v <= max),
  says: `a ${whole ? 'whole ' : ''}number from ${min} to ${max}`,
});
const oneOf = <T extends string | boolean>(...values: T[]): Taken<T> => ({
  read: (text) => values.find((value) => String(value) === text),
  says: values.join(' or '),
});

/** What a setting varies, and what `--set` takes for each (a sweep's ranges), in the order a replay gives them. */
export const FIELDS = {
  events: number(1, 100_000),
  perSecond: number(0.001, 1_000, false), // on average: events arrive independently
  share: number(0, 0.2, false), // of events redelivered, forged, failed once, queued for long; of calls faulted
  rotations: number(0, 15),
  grace: oneOf('immediate', 'grace', 'both'), // the old secret stops at once, signs for a while, or each in turn
  closePairs: oneOf(true, false), // every other rotation 2–40 s after the one before
  junkBurst: number(0, 100), // junk deliveries right after each rotation
  svixClockSeconds: number(-240, 240), // Svix's clock ahead of the world's (negative: behind)
  processes: number(1, 4),
  backlogSeconds: number(0, 600), // the least every delivery waits in Zapier's queue
  stolen: number(0, 20), // per rotation, forgeries within 30 minutes of it, signed with the latest secret revoked then
  cacheLatencyMs: number(0, 30_000), // z.cache's slowest round trips, heavy-tailed (0: every one 1–12 ms)
  commitLagMs: number(0, 30_000), // Svix's slowest commits, heavy-tailed (0: 1–300 ms); keys up to 30 s stale on rotating
  svixClockJumps: oneOf(true, false), // Svix's clock steps forward or back by up to 300 s, three times a run
  forgeAheadSeconds: number(0, 300), // forgeries signed up to this far ahead
  junkSpreadSeconds: number(0, 604_800), // junk names message ids from any time this far back, old windows included
  endpoints: number(1, 5_000), // the app's endpoints (a Zap's each), every process serving them all
  cold: oneOf(true, false), // every delivery in a fresh process
  hours: number(0, 24), // a long run: the events spread over this many hours, junk every 2 min, Svix down hourly
  edits: number(0, 20), // Zaps edited while on: re-subscribed in either order, at the same target URL or a new one
  throttledSetAnswer: oneOf('null', 'false'), // what z.cache answers a throttled set: as Zapier says, or as core mocks
  serveLagMs: number(0, 3_600_000), // Zapier serves a new subscription up to this long after its subscribe returns
  editGapMs: number(0, 10_800_000), // an edit's two calls up to this far apart (most close together)
  zapierRefuses: number(0, 0.5, false), // of deliveries Zapier refuses (429, with a Retry-After of 1-120 s)
  togetherOn: number(0, 50), // Zaps turned on at once as the run starts (no events of their own): pacing
  noMeta: oneOf(true, false), // Zapier names no Zap to subscribe and unsubscribe (each is its target URL's)
  unsubscribeFails: number(0, 1, false), // of unsubscribes whose every Svix call Svix answers 503
};
type Field = keyof typeof FIELDS;
const isField = (key: string): key is Field => Object.hasOwn(FIELDS, key);
/** How adverse one run is: its fields. */
export type Setting = { [K in Field]: (typeof FIELDS)[K] extends Taken<infer T> ? T : never } & {
  name: string;
  flags?: string[]; // the --set options that made it from the named one
};

/** The settings a sweep covers: each pushes one adversity to its extreme from a base; the last put every extreme
 * together, at the fastest and the slowest event rates. docs/guarantees.md states what each must show. */
const BASE: Setting = {
  ...{ name: 'base', events: 200, perSecond: 2, share: 0.05, rotations: 3, grace: 'both', closePairs: false },
  ...{ junkBurst: 0, svixClockSeconds: 0, processes: 2, backlogSeconds: 0, stolen: 0 },
  ...{ cacheLatencyMs: 0, commitLagMs: 0, svixClockJumps: false, forgeAheadSeconds: 0, junkSpreadSeconds: 0 },
  ...{ endpoints: 1, cold: false, hours: 0, edits: 0, throttledSetAnswer: 'null' },
  ...{ serveLagMs: 2_000, editGapMs: 5_000, zapierRefuses: 0, togetherOn: 0, noMeta: false, unsubscribeFails: 0 },
};
const vary = (name: string, changes: Partial<Setting>): Setting => ({ ...BASE, ...changes, name });
const EVERYTHING: Partial<Setting> = {
  ...{ share: 0.2, rotations: 15, grace: 'both', closePairs: true, junkBurst: 100, processes: 4 },
};

const WIDE: Partial<Setting> = {
  ...{ svixClockSeconds: -60, stolen: 4, cacheLatencyMs: 8_000, commitLagMs: 5_000, svixClockJumps: true },
  ...{ forgeAheadSeconds: 300, junkSpreadSeconds: 3_600, endpoints: 20, throttledSetAnswer: 'false' },
};

/** A Zap's life in the least favourable world no source rules out (docs/zapier-fidelity.md). */
const ZAP_LIFE: Partial<Setting> = { serveLagMs: 600_000, editGapMs: 3_600_000, zapierRefuses: 0.2, togetherOn: 10 };

export const SETTINGS: readonly Setting[] = [
  BASE,
  vary('share-0.01', { share: 0.01 }),
  vary('share-0.2', { share: 0.2 }),
  vary('no-rotation', { rotations: 0, junkBurst: 40 }),
  vary('rotations-15-immediate', { rotations: 15, grace: 'immediate' }),
  vary('rotations-15-grace', { rotations: 15, grace: 'grace' }),
  vary('close-pairs', { rotations: 8, closePairs: true }),
  vary('junk-100', { rotations: 5, junkBurst: 100 }),
  vary('svix-behind-240', { rotations: 5, svixClockSeconds: -240 }),
  vary('svix-ahead-240', { rotations: 5, svixClockSeconds: 240 }),
  vary('one-process', { processes: 1, rotations: 5 }),
  vary('four-processes', { processes: 4, rotations: 5 }),
  vary('one-a-minute', { perSecond: 1 / 60, rotations: 5, closePairs: true }),
  vary('fifty-a-second', { perSecond: 50, rotations: 5, closePairs: true }),
  // A secret stolen, then replaced, and used while the Zap is quiet: no delivery teaches a process the new one.
  vary('quiet-stolen-secret', { events: 60, perSecond: 0.001, rotations: 5, stolen: 4 }),
  // Past the rates promised, behind a backlog: deliveries signed with a secret no process read, windows over 4 pages.
  vary('backlog', { events: 1500, perSecond: 500, share: 0.1, rotations: 5, closePairs: true, backlogSeconds: 20 }),
  vary('everything-fast', { ...EVERYTHING, perSecond: 50, svixClockSeconds: -240 }),
  vary('everything-slow', { ...EVERYTHING, perSecond: 1 / 60, svixClockSeconds: 240 }),
  vary('everything', { ...EVERYTHING, svixClockSeconds: -60 }),
  // The wider world: each of its adversities pushed to its extreme from the base, then all together.
  vary('slow-cache', { share: 0.2, rotations: 5, cacheLatencyMs: 30_000 }),
  // z.cache answering a throttled set `false`, as core's own test mocks it: claims, Skip Outdated and marks alike.
  vary('throttled-false', { share: 0.2, rotations: 5, throttledSetAnswer: 'false' }),
  vary('commit-lag', { rotations: 8, closePairs: true, commitLagMs: 30_000 }),
  vary('svix-clock-jumps', { rotations: 5, svixClockSeconds: 240, svixClockJumps: true }),
  vary('forged-ahead', { share: 0.2, rotations: 5, grace: 'immediate', stolen: 10, forgeAheadSeconds: 300 }),
  vary('old-junk', { rotations: 5, junkBurst: 100, junkSpreadSeconds: 604_800 }),
  // Junk naming real-looking ids of the last 10 minutes: each a read of Svix, the allowance taken for 25 s.
  vary('junk-recent-windows', { rotations: 5, junkBurst: 100, junkSpreadSeconds: 600 }),
  // A stolen secret replaced at once, a flood of junk, then bodies signed with the replaced secret (world.ts).
  vary('flood-then-stolen', { rotations: 15, grace: 'immediate', junkBurst: 40 }),
  // A process serving more endpoints than it keeps: what it knows of each let go between its deliveries.
  vary('many-endpoints', {
    events: 6_000,
    perSecond: 200,
    rotations: 5,
    junkBurst: 40,
    processes: 1,
    endpoints: 2_000,
  }),
  vary('cold', { share: 0.2, rotations: 5, processes: 4, cold: true }),
  vary('long-run', { events: 500, rotations: 10, hours: 24 }),
  vary('wide-world', { ...EVERYTHING, ...WIDE }),
  vary('wide-world-cold', { ...EVERYTHING, ...WIDE, cold: true }),
  // Zaps edited while on, in either order, at the same target URL or a new one, with deliveries in flight.
  // Each edit runs the app's subscribe and unsubscribe against the simulated Svix; Zapier serves a new subscription
  // up to 2 s after its subscribe returns, and Svix retries what it could not deliver on its own schedule, only.
  vary('edits', { share: 0.1, rotations: 5, endpoints: 3, edits: 8 }),
  vary('edits-wide', { ...EVERYTHING, ...WIDE, ...ZAP_LIFE, edits: 12 }),
  vary('edits-long', { events: 500, rotations: 10, hours: 24, endpoints: 3, edits: 12, editGapMs: 10_800_000 }),
  // Zapier slow to serve a new subscription (up to an hour), an edit's calls up to 3 hours apart (over an hour: what
  // was made between is skipped, as for a Zap turned off), Zapier refusing a third of deliveries.
  vary('serve-late', { share: 0.1, rotations: 3, endpoints: 3, edits: 12, serveLagMs: 3_600_000 }),
  vary('edit-gaps', { events: 400, hours: 8, rotations: 3, endpoints: 3, edits: 16, editGapMs: 10_800_000 }),
  vary('zapier-refuses', { share: 0.1, rotations: 3, endpoints: 3, edits: 8, zapierRefuses: 0.33 }),
  // Many Zaps turned on at once, and edited; Zaps named by nothing but their target URL.
  vary('together-on', { share: 0.1, rotations: 3, endpoints: 3, edits: 8, togetherOn: 20 }),
  vary('no-zap-named', { share: 0.1, rotations: 3, endpoints: 3, edits: 8, noMeta: true }),
  // Svix failing every call of half the unsubscribes: each Zap's mark in z.cache lets the next operation park or
  // remove what the unsubscribe could not; edits' calls close together and far apart.
  vary('unsubscribe-fails', {
    share: 0.05,
    rotations: 3,
    endpoints: 3,
    edits: 12,
    editGapMs: 600_000,
    unsubscribeFails: 0.5,
  }),
];

/** The setting with each `--set KEY=VALUE` applied (its name marked), or why one is refused. */
export const changed = (setting: Setting, sets: readonly string[]): Setting | string => {
  if (sets.length === 0) return setting;
  const flags = sets.map((set) => `--set ${set}`);
  const result: Setting = { ...setting, name: `${setting.name}+custom`, flags };
  for (const [key = '', text = ''] of sets.map((pair) => pair.split(/=(.*)/s))) {
    if (!isField(key)) return `--set: there is no field ${key} (${Object.keys(FIELDS).join(', ')}).`;
    const value = FIELDS[key].read(text);
    if (value === undefined) return `--set ${key}= takes ${FIELDS[key].says}.`;
    Object.assign(result, { [key]: value });
  }
  return result;
};

export const replayCommand = ({ name, flags = [] }: Setting, seed: number): string =>
  `npm run simulate -- ${[`--setting ${name.replace(/\+custom$/, '')}`, ...flags].join(' ')} --seed ${seed}`;

/** A run's result in one line: the same seed and setting give the same line, byte for byte. */
export const outcomeLine = (outcome: Outcome, setting: Setting): string =>
  `simulate: setting=${outcome.setting} seed=${outcome.seed} events=${outcome.events} deliveries=${outcome.deliveries} ` +
  `performs=${outcome.performs} lost=${outcome.lost} doubled=${outcome.doubled} forged_run=${outcome.forgedRun} ` +
  `revoked_run=${outcome.revokedRun} junk=${outcome.junk} junk_svix_calls=${outcome.junkSvixCalls} ` +
  `svix_calls_per_junk=${(outcome.junkSvixCalls / Math.max(1, outcome.junk)).toFixed(2)} ` +
  `junk_over_allowance=${outcome.junkOverBound} over_time=${outcome.overTime} over_memory=${outcome.overMemory} ` +
  `unanswered=${outcome.unanswered} unclaimed=${outcome.unclaimed} cut=${outcome.cut} ` +
  `svix_calls=${outcome.svixCalls} ` +
  `skipped=${outcome.skipped} refused_throughout=${outcome.refusedThroughout} ran_while_off=${outcome.ranWhileOff} zap_life=${outcome.zapLife} unmarked=${outcome.unmarked} unnamed=${outcome.unnamed} ` +
  `late_p50_s=${outcome.late.p50} late_max_s=${outcome.late.max} ` +
  `cache_calls=${outcome.cacheCalls} virtual_s=${outcome.virtualSeconds} p99_ms=${outcome.latency.p99} max_ms=${outcome.latency.max} replay="${replayCommand(setting, outcome.seed)}"`;

export const failed = (outcome: Outcome): boolean =>
  outcome.lost + outcome.doubled + outcome.forgedRun + outcome.revokedRun + outcome.junkOverBound > 0 ||
  outcome.ranWhileOff + outcome.zapLife > 0 ||
  outcome.overTime + outcome.overMemory > 0;
