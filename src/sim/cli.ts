import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { isRight } from 'fp-ts/Either';
import { runCommand } from '../cli/runCommand';
import { failed, outcomeLine, settingNamed, SETTINGS } from './settings';
import { Outcome } from './oracle';
import { simulate, type Setting } from './world';

/**
 * `npm run simulate`: the delivery path in a seeded, deterministic
 * simulation (see world.ts). One seed prints its result line, and a trace of
 * each failure; a sweep runs many seeds of every setting (or one) and prints
 * the worst outcome per setting, and each failing seed with the command that
 * replays it.
 */

const USAGE = `Usage: npm run simulate -- [--seed N | --seeds FROM-TO] [--setting NAME | --setting all]
                         [--events N] [--per-second R] [--share S] [--rotations R]
                         [--grace immediate|grace|both] [--close-pairs] [--junk-burst N]
                         [--history-faults] [--svix-clock SECONDS] [--processes N]
                         [--backlog SECONDS] [--workers N] [--quiet]

  --seed N          run one seed and print its line (and a trace of each failure)
  --seeds FROM-TO   run every seed from FROM to TO of each setting; print the worst per setting
  --setting NAME    a named setting (default: base for one seed, all for a sweep):
                    ${SETTINGS.map((setting) => setting.name).join(', ')}
  the other options change the setting they follow from (its name becomes "custom")
  --workers N       processes to share a sweep among (default 2)
  --quiet           a sweep prints only each setting's summary and its failures`;

const OPTIONS = {
  seed: { type: 'string' },
  seeds: { type: 'string' },
  setting: { type: 'string' },
  events: { type: 'string' },
  'per-second': { type: 'string' },
  share: { type: 'string' },
  rotations: { type: 'string' },
  grace: { type: 'string' },
  'close-pairs': { type: 'boolean' },
  'junk-burst': { type: 'string' },
  'history-faults': { type: 'boolean' },
  'svix-clock': { type: 'string' },
  processes: { type: 'string' },
  backlog: { type: 'string' },
  workers: { type: 'string' },
  quiet: { type: 'boolean' },
  worker: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

const number = (text: string | undefined, min: number, max: number, whole = true): number | undefined => {
  if (text === undefined) return undefined;
  const value = Number(text);
  return (whole ? Number.isInteger(value) : Number.isFinite(value)) && value >= min && value <= max
    ? value
    : Number.NaN;
};

/** The settings the options ask for, or why they are wrong. */
export const settingsOf = (values: Values, sweep: boolean): Setting[] | string => {
  const name = values.setting ?? (sweep ? 'all' : 'base');
  const base = name === 'all' ? [...SETTINGS] : [settingNamed(name)].filter((setting) => setting !== undefined);
  if (base.length === 0) return `There is no setting named ${name}.`;
  const changes: Partial<Setting> = {};
  const numbers: Array<[keyof Setting, string | undefined, number, number, boolean]> = [
    ['events', values.events, 1, 100_000, true],
    ['perSecond', values['per-second'], 0.001, 1_000, false],
    ['share', values.share, 0, 0.2, false],
    ['rotations', values.rotations, 0, 15, true],
    ['junkBurst', values['junk-burst'], 0, 100, true],
    ['svixClockSeconds', values['svix-clock'], -240, 240, true],
    ['processes', values.processes, 1, 4, true],
    ['backlogSeconds', values.backlog, 0, 600, true],
  ];
  const flag: Partial<Record<keyof Setting, string>> = { svixClockSeconds: 'svix-clock', backlogSeconds: 'backlog' };
  for (const [key, text, min, max, whole] of numbers) {
    const value = number(text, min, max, whole);
    if (value === undefined) continue;
    if (Number.isNaN(value)) return `--${flag[key] ?? key} must be a number from ${min} to ${max}.`;
    Object.assign(changes, { [key]: value });
  }
  if (values.grace !== undefined) {
    if (values.grace !== 'immediate' && values.grace !== 'grace' && values.grace !== 'both')
      return '--grace must be immediate, grace or both.';
    changes.grace = values.grace;
  }
  if (values['close-pairs']) changes.closePairs = true;
  if (values['history-faults']) changes.historyFaults = true;
  if (Object.keys(changes).length === 0) return base;
  return base.map((setting) => ({
    ...setting,
    ...changes,
    name: name === 'all' ? `${setting.name}+custom` : 'custom',
  }));
};

const seedsOf = (values: Values): { from: number; to: number } | string => {
  if (values.seed !== undefined) {
    const seed = number(values.seed, 0, 2 ** 31 - 1);
    return seed === undefined || Number.isNaN(seed) ? '--seed must be a whole number.' : { from: seed, to: seed };
  }
  const range = /^(\d+)(?:-(\d+))?$/.exec(values.seeds ?? '1-100');
  const from = Number(range?.[2] === undefined ? 1 : range[1]);
  const to = Number(range?.[2] ?? range?.[1]);
  return range && from <= to ? { from, to } : '--seeds must be FROM-TO, such as 1-1000.';
};

export const runSeed = (setting: Setting, seed: number): Promise<Outcome> => simulate(setting, seed);

interface Summary {
  setting: Setting;
  seeds: number;
  failures: Outcome[];
  worst: Record<
    'lost' | 'doubled' | 'forgedRun' | 'revokedRun' | 'junkOverBound' | 'unanswered' | 'junkSvixCalls',
    { value: number; seed: number }
  >;
  worstPerJunk: { value: number; seed: number };
  started: number;
}

const summaryOf = (setting: Setting): Summary => {
  const none = () => ({ value: 0, seed: 0 });
  return {
    setting,
    seeds: 0,
    failures: [],
    worst: {
      lost: none(),
      doubled: none(),
      forgedRun: none(),
      revokedRun: none(),
      junkOverBound: none(),
      unanswered: none(),
      junkSvixCalls: none(),
    },
    worstPerJunk: none(),
    started: Date.now(),
  };
};

const WORST = ['lost', 'doubled', 'forgedRun', 'revokedRun', 'junkOverBound', 'unanswered', 'junkSvixCalls'] as const;

const add = (summary: Summary, outcome: Outcome): void => {
  summary.seeds += 1;
  for (const key of WORST) {
    if (outcome[key] > summary.worst[key].value) summary.worst[key] = { value: outcome[key], seed: outcome.seed };
  }
  const perJunk = outcome.junkSvixCalls / Math.max(1, outcome.junk);
  if (perJunk > summary.worstPerJunk.value) summary.worstPerJunk = { value: perJunk, seed: outcome.seed };
  if (failed(outcome)) summary.failures.push(outcome);
};

const summaryLine = (summary: Summary, seeds: { from: number; to: number }): string => {
  const { worst } = summary;
  const at = ({ value, seed }: { value: number; seed: number }, digits = 0) =>
    value > 0 ? `${value.toFixed(digits)} (seed ${seed})` : value.toFixed(digits);
  return (
    `sweep: setting=${summary.setting.name} seeds=${seeds.from}-${seeds.to} (${summary.seeds}) failed=${summary.failures.length} ` +
    `worst: lost=${at(worst.lost)} doubled=${at(worst.doubled)} forged_run=${at(worst.forgedRun)} ` +
    `revoked_run=${at(worst.revokedRun)} junk_over_allowance=${at(worst.junkOverBound)} ` +
    `svix_calls_per_junk=${at(summary.worstPerJunk, 2)} junk_svix_calls=${at(worst.junkSvixCalls)} unanswered=${at(worst.unanswered)}`
  );
};

/** A worker of a sweep: runs its seeds of every setting, one JSON outcome a line. */
const work = async (settings: Setting[], seeds: { from: number; to: number }): Promise<number> => {
  for (const setting of settings) {
    for (let seed = seeds.from; seed <= seeds.to; seed += 1) {
      const outcome = await runSeed(setting, seed);
      process.stdout.write(`${JSON.stringify(outcome)}\n`);
    }
  }
  return 0;
};

/** Runs the seeds in `workers` child processes, a share of the seeds each; the outcomes as they come. */
const sweepIn = (
  workers: number,
  argv: string[],
  seeds: { from: number; to: number },
  take: (outcome: Outcome) => void,
) => {
  const count = seeds.to - seeds.from + 1;
  const each = Math.ceil(count / workers);
  const children = Array.from({ length: Math.min(workers, count) }, (_, index) => {
    const from = seeds.from + index * each;
    const to = Math.min(seeds.to, from + each - 1);
    const args = [
      ...argv.filter((arg, at, all) => arg !== '--seeds' && all[at - 1] !== '--seeds'),
      '--seeds',
      `${from}-${to}`,
      '--worker',
    ];
    const child = fork(__filename, args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const outcome = line.trim() === '' ? undefined : Outcome.decode(JSON.parse(line));
        if (outcome && isRight(outcome)) take(outcome.right);
      }
    });
    return new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  });
  return Promise.all(children);
};

export const main = async (argv: string[]): Promise<number> => {
  let values: Values;
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS }));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    return 2;
  }
  const seeds = seedsOf(values);
  const sweep = values.seed === undefined;
  const settings = settingsOf(values, sweep);
  const workers = number(values.workers, 1, 16) ?? 2;
  for (const problem of [seeds, settings, Number.isNaN(workers) ? '--workers must be from 1 to 16.' : []]) {
    if (typeof problem === 'string') {
      process.stderr.write(`${problem}\n${USAGE}\n`);
      return 2;
    }
  }
  if (typeof seeds === 'string' || typeof settings === 'string') return 2;
  if (values.worker) return work(settings, seeds);
  if (!sweep) {
    let exit = 0;
    for (const setting of settings) {
      const outcome = await runSeed(setting, seeds.from);
      process.stdout.write(`${outcomeLine(outcome, setting)}\n`);
      for (const trace of outcome.traces) process.stdout.write(`${trace}\n`);
      if (failed(outcome)) exit = 1;
    }
    return exit;
  }
  const summaries = new Map(settings.map((setting) => [setting.name, summaryOf(setting)]));
  const started = Date.now();
  const take = (outcome: Outcome) => {
    const summary = summaries.get(outcome.setting);
    if (summary) add(summary, outcome);
  };
  if (workers > 1) {
    const codes = await sweepIn(workers, argv, seeds, take);
    if (codes.some((code) => code !== 0)) {
      process.stderr.write('A worker of the sweep stopped early.\n');
      return 1;
    }
  } else {
    for (const setting of settings)
      for (let seed = seeds.from; seed <= seeds.to; seed += 1) take(await runSeed(setting, seed));
  }
  let exit = 0;
  for (const summary of summaries.values()) {
    process.stdout.write(`${summaryLine(summary, seeds)}\n`);
    for (const outcome of summary.failures.sort((a, b) => a.seed - b.seed).slice(0, values.quiet ? 3 : 20)) {
      process.stdout.write(`  ${outcomeLine(outcome, summary.setting)}\n`);
      exit = 1;
    }
    if (summary.failures.length > 0) exit = 1;
  }
  const total = [...summaries.values()].reduce((sum, summary) => sum + summary.seeds, 0);
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(
    `sweep: ${total} runs of ${settings.length} settings in ${seconds.toFixed(1)} s (${Math.round((total / seconds) * 60)} a minute, ${workers} workers)\n`,
  );
  return exit;
};

if (require.main === module) runCommand(() => main(process.argv.slice(2)), 'The simulation stopped');
