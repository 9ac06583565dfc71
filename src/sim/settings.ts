import type { Outcome } from './oracle';
import type { Setting } from './world';

/**
 * The settings a sweep covers: each varies one kind of adversity to its
 * extreme from a base, and the last ones put every extreme together, at
 * the fastest and the slowest event rates. docs/guarantees.md states them
 * with their figures.
 */

const BASE: Setting = {
  name: 'base',
  events: 200,
  perSecond: 2,
  share: 0.05,
  rotations: 3,
  grace: 'both',
  closePairs: false,
  junkBurst: 0,
  historyFaults: false,
  svixClockSeconds: 0,
  processes: 2,
  backlogSeconds: 0,
};

const vary = (name: string, changes: Partial<Setting>): Setting => ({ ...BASE, ...changes, name });

const EVERYTHING: Partial<Setting> = {
  share: 0.2,
  rotations: 15,
  grace: 'both',
  closePairs: true,
  junkBurst: 100,
  historyFaults: true,
  processes: 4,
};

export const SETTINGS: readonly Setting[] = [
  BASE,
  vary('share-0.01', { share: 0.01 }),
  vary('share-0.2', { share: 0.2 }),
  vary('no-rotation', { rotations: 0, junkBurst: 40 }),
  vary('rotations-15-immediate', { rotations: 15, grace: 'immediate' }),
  vary('rotations-15-grace', { rotations: 15, grace: 'grace' }),
  vary('close-pairs', { rotations: 8, closePairs: true }),
  vary('junk-100', { rotations: 5, junkBurst: 100 }),
  vary('history-faults', { rotations: 5, historyFaults: true }),
  vary('svix-behind-240', { rotations: 5, svixClockSeconds: -240 }),
  vary('svix-ahead-240', { rotations: 5, svixClockSeconds: 240 }),
  vary('one-process', { processes: 1, rotations: 5 }),
  vary('four-processes', { processes: 4, rotations: 5 }),
  vary('one-a-minute', { perSecond: 1 / 60, rotations: 5, closePairs: true }),
  vary('fifty-a-second', { perSecond: 50, rotations: 5, closePairs: true }),
  // Beyond the rates promised, behind a backlog (as the soak's queue): many deliveries signed with a secret no process
  // read, in windows of the record too full for four pages (up to 1,500 messages in their 4 s).
  vary('backlog', { events: 1500, perSecond: 500, share: 0.1, rotations: 5, closePairs: true, backlogSeconds: 20 }),
  vary('everything-fast', { ...EVERYTHING, perSecond: 50, svixClockSeconds: -240 }),
  vary('everything-slow', { ...EVERYTHING, perSecond: 1 / 60, svixClockSeconds: 240 }),
  vary('everything', { ...EVERYTHING, svixClockSeconds: -60 }),
];

export const settingNamed = (name: string): Setting | undefined => SETTINGS.find((setting) => setting.name === name);

/** The flags that make a setting other than a named one (see USAGE in cli.ts). */
export const settingFlags = (setting: Setting): string => {
  const named = settingNamed(setting.name);
  if (named && JSON.stringify(named) === JSON.stringify(setting)) return `--setting ${setting.name}`;
  const flags = [
    `--events ${setting.events}`,
    `--per-second ${setting.perSecond}`,
    `--share ${setting.share}`,
    `--rotations ${setting.rotations}`,
    `--grace ${setting.grace}`,
    `--junk-burst ${setting.junkBurst}`,
    `--svix-clock ${setting.svixClockSeconds}`,
    `--processes ${setting.processes}`,
    `--backlog ${setting.backlogSeconds}`,
  ];
  if (setting.closePairs) flags.push('--close-pairs');
  if (setting.historyFaults) flags.push('--history-faults');
  return flags.join(' ');
};

export const replayCommand = (setting: Setting, seed: number): string =>
  `npm run simulate -- ${settingFlags(setting)} --seed ${seed}`;

/** A run's result in one line: the same seed and setting give the same line, byte for byte. */
export const outcomeLine = (outcome: Outcome, setting: Setting): string =>
  `simulate: setting=${outcome.setting} seed=${outcome.seed} events=${outcome.events} deliveries=${outcome.deliveries} ` +
  `performs=${outcome.performs} lost=${outcome.lost} doubled=${outcome.doubled} forged_run=${outcome.forgedRun} ` +
  `revoked_run=${outcome.revokedRun} junk=${outcome.junk} junk_svix_calls=${outcome.junkSvixCalls} ` +
  `svix_calls_per_junk=${(outcome.junkSvixCalls / Math.max(1, outcome.junk)).toFixed(2)} ` +
  `junk_over_allowance=${outcome.junkOverBound} unanswered=${outcome.unanswered} cut=${outcome.cut} svix_calls=${outcome.svixCalls} ` +
  `cache_calls=${outcome.cacheCalls} virtual_s=${outcome.virtualSeconds} p99_ms=${outcome.latency.p99} max_ms=${outcome.latency.max} replay="${replayCommand(setting, outcome.seed)}"`;

export const failed = (outcome: Outcome): boolean =>
  outcome.lost + outcome.doubled + outcome.forgedRun + outcome.revokedRun + outcome.junkOverBound > 0;
