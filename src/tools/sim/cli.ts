import { fork } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isRight } from 'fp-ts/Either';
import { runCommand } from '../cli/runCommand';
import { Outcome } from './vocabulary';
import { changed, failed, FIELDS, outcomeLine, SETTINGS, type Setting } from './settings';
import { simulate } from './world';

/** `npm run simulate`: the delivery path in a seeded, deterministic simulation (see world.ts). */
const USAGE = `Usage: npm run simulate -- [--seed N | --seeds FROM-TO] [--setting NAME|all] [--set KEY=VALUE]...
                         [--workers N] [--quiet]
One seed prints a verdict in words, its line and a trace of each failure (default setting: base). A sweep of seeds
(default 1-100, every setting) says how far it has got every 10 s, then each setting's worst, the line of each failing
seed with its replay (--quiet: the first 3), and a verdict. docs/guarantees.md says what each counter means.
  --setting: ${SETTINGS.map((setting) => setting.name).join(', ')}
  --set, a field of the setting: ${Object.keys(FIELDS).join(', ')}
  --workers: the processes a sweep is shared among (1 to 16, default 2)`;

const OPTIONS = {
  ...{ seed: { type: 'string' }, seeds: { type: 'string' }, setting: { type: 'string' }, workers: { type: 'string' } },
  ...{ set: { type: 'string', multiple: true } },
  ...{ quiet: { type: 'boolean' }, worker: { type: 'boolean' }, help: { type: 'boolean' } },
} as const satisfies ParseArgsConfig['options'];
type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
type Seeds = { from: number; to: number };
/** Node's flags for a worker, which makes short-lived objects and errors by the million (and reads no stack). */
export const WORKER_FLAGS = ['--max-semi-space-size=32', '--stack-trace-limit=0'];

const whole = (text: string, max: number) => (/^\d+$/.test(text) && Number(text) <= max ? Number(text) : undefined);

/** What the options ask for, or why they are wrong. */
const planOf = (values: Values) => {
  const seed = whole(values.seed ?? '', 2 ** 31 - 1);
  const [, first, last] = /^(\d+)(?:-(\d+))?$/.exec(values.seeds ?? '1-100') ?? []; // N alone: 1 to N
  const range = { from: Number(last === undefined ? 1 : first), to: Number(last ?? first) };
  const workers = whole(values.workers ?? '2', 16);
  const name = values.setting ?? (values.seed === undefined ? 'all' : 'base');
  const named = SETTINGS.filter((setting) => name === 'all' || setting.name === name);
  const settings = named.map((setting) => changed(setting, values.set ?? []));
  if (values.seed !== undefined && seed === undefined) return '--seed must be a whole number.';
  if (seed === undefined && !(first && range.from <= range.to)) return '--seeds must be FROM-TO, such as 1-1000.';
  if (!workers) return '--workers must be from 1 to 16.';
  if (named.length === 0) return `There is no setting named ${name}.`;
  const seeds: Seeds = seed === undefined ? range : { from: seed, to: seed };
  const problem = settings.find((setting) => typeof setting === 'string');
  return problem ?? { values, seeds, workers, settings: settings.filter((setting) => typeof setting !== 'string') };
};

/** What a sweep's summary line shows the worst of, each with the first seed that had it. */
const WORST: Array<[label: string, of: (outcome: Outcome) => number, digits?: number]> = [
  ['lost', (outcome) => outcome.lost],
  ['doubled', (outcome) => outcome.doubled],
  ['forged_run', (outcome) => outcome.forgedRun],
  ['revoked_run', (outcome) => outcome.revokedRun],
  ['ran_while_off', (outcome) => outcome.ranWhileOff],
  ['zap_life', (outcome) => outcome.zapLife],
  ['junk_over_allowance', (outcome) => outcome.junkOverBound],
  ['over_time', (outcome) => outcome.overTime],
  ['over_memory', (outcome) => outcome.overMemory],
  ['svix_calls_per_junk', (outcome) => outcome.junkSvixCalls / Math.max(1, outcome.junk), 2],
  ['junk_svix_calls', (outcome) => outcome.junkSvixCalls],
  ['unanswered', (outcome) => outcome.unanswered],
  ['unclaimed', (outcome) => outcome.unclaimed],
  ['unmarked', (outcome) => outcome.unmarked],
  ['unnamed', (outcome) => outcome.unnamed],
  ['skipped', (outcome) => outcome.skipped],
  ['late_p50_s', (outcome) => outcome.late.p50],
  ['late_max_s', (outcome) => outcome.late.max],
];

const summaryLine = (setting: Setting, outcomes: Outcome[], { from, to }: Seeds): string => {
  const worst = WORST.map(([label, of, digits = 0]) => {
    let top = { value: 0, seed: 0 };
    for (const outcome of outcomes) if (of(outcome) > top.value) top = { value: of(outcome), seed: outcome.seed };
    return `${label}=${top.value.toFixed(digits)}${top.value > 0 ? ` (seed ${top.seed})` : ''}`;
  });
  const failures = outcomes.filter(failed).length;
  return `sweep: setting=${setting.name} seeds=${from}-${to} (${outcomes.length}) failed=${failures} worst: ${worst.join(' ')}`;
};

/** Runs a sweep's seeds in child processes, a share each; takes the outcomes as they come, gives the exit codes. */
const sweepIn = (workers: number, argv: string[], { from, to }: Seeds, take: (outcome: Outcome) => void) => {
  const each = Math.ceil((to - from + 1) / workers);
  const starts = Array.from({ length: workers }, (_, index) => from + index * each).filter((start) => start <= to);
  const children = starts.map((start) => {
    // The share's --seeds comes last, and parseArgs keeps the last.
    const args = [...argv, '--seeds', `${start}-${Math.min(to, start + each - 1)}`, '--worker'];
    const child = fork(__filename, args, { execArgv: WORKER_FLAGS, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    if (child.stdout)
      createInterface({ input: child.stdout }).on('line', (line) => {
        const outcome = Outcome.decode(JSON.parse(line));
        if (isRight(outcome)) take(outcome.right);
      });
    return new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  });
  return Promise.all(children);
};

export const main = async (argv: string[]): Promise<number> => {
  let plan: ReturnType<typeof planOf>;
  try {
    plan = planOf(parseArgs({ args: argv, options: OPTIONS }).values);
  } catch (error) {
    plan = error instanceof Error ? error.message : String(error);
  }
  if (typeof plan === 'string') {
    process.stderr.write(`${plan}\n${USAGE}\n`);
    return 2;
  }
  const { values, seeds, workers, settings } = plan;
  const write = (line: string) => process.stdout.write(`${line}\n`);
  if (values.help) {
    write(USAGE);
    return 0;
  }
  process.stdout.on('error', (error: NodeJS.ErrnoException) => process.exit(error.code === 'EPIPE' ? 0 : 1)); // | head
  if (values.worker) {
    for (const setting of settings)
      for (let seed = seeds.from; seed <= seeds.to; seed += 1) write(JSON.stringify(await simulate(setting, seed)));
    return 0;
  }
  const started = Date.now();
  const outcomes: Outcome[] = [];
  const share = Math.min(workers, seeds.to - seeds.from + 1);
  const total = settings.length * (seeds.to - seeds.from + 1);
  // Long work says how far it has got, on stderr (stdout is the result).
  const progress = setInterval(() => {
    const percent = Math.floor((outcomes.length / total) * 100);
    process.stderr.write(`simulate: ${outcomes.length} of ${total} runs (${percent}%), ${failedSoFar()} failing\n`);
  }, 10_000);
  const failedSoFar = () => outcomes.filter(failed).length;
  const codes = await sweepIn(share, argv, seeds, (outcome) => outcomes.push(outcome)).finally(() =>
    clearInterval(progress),
  );
  if (codes.some((code) => code !== 0)) {
    process.stderr.write('A worker of the simulation stopped early.\n');
    return 1;
  }
  outcomes.sort((a, b) => a.seed - b.seed);
  if (values.seed !== undefined) for (const outcome of outcomes) write(verdictOf(outcome));
  for (const setting of settings) {
    const ran = outcomes.filter((outcome) => outcome.setting === setting.name);
    if (values.seed === undefined) write(summaryLine(setting, ran, seeds));
    const shown = values.seed === undefined ? ran.filter(failed).slice(0, values.quiet ? 3 : 20) : ran;
    for (const outcome of shown)
      if (values.seed === undefined) write(`  ${outcomeLine(outcome, setting)}`);
      else [outcomeLine(outcome, setting), ...outcome.traces].forEach(write);
  }
  const seconds = (Date.now() - started) / 1000;
  const rate = `${Math.round((outcomes.length / seconds) * 60)} a minute, ${share} workers, Node ${process.version}`;
  if (values.seed === undefined) {
    write(`sweep: ${outcomes.length} runs of ${settings.length} settings in ${seconds.toFixed(1)} s (${rate})`);
    const broke = outcomes.filter(failed).length;
    write(
      broke === 0
        ? `verdict: every promise kept in all ${outcomes.length} runs.`
        : `verdict: ${broke} of ${outcomes.length} runs broke a promise: each failing line above gives its replay.`,
    );
  }
  return outcomes.some(failed) ? 1 : 0;
};

/** One run's verdict, in words, before its counters. */
const verdictOf = (outcome: Outcome): string => {
  const { events, lost, doubled, forgedRun, revokedRun, late } = outcome;
  if (!failed(outcome))
    return `verdict: every promise kept: of ${events} events none lost, none run twice, no forged body run; the slowest ran ${late.max} s after it was made.`;
  const broken = [
    ...(lost > 0 ? [`${lost} lost`] : []),
    ...(doubled > 0 ? [`${doubled} run twice`] : []),
    ...(forgedRun > 0 ? [`${forgedRun} forged bodies run`] : []),
    ...(revokedRun > 0 ? [`${revokedRun} bodies signed with a revoked secret run`] : []),
  ];
  return `verdict: a promise broken (${broken.join(', ') || 'see the counters'}); the traces below show where.`;
};

if (require.main === module) runCommand(() => main(process.argv.slice(2)), 'The simulation stopped');
