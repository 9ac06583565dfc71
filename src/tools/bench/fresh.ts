// Entry point of `npm run bench:fresh`: perform against the claim-only hook, as `npm run bench` compares them, once
// per fresh process (a process's first deliveries and its JIT differ from run to run), in CPU time and in wall time.
// Core's tester prints a memory line per invocation unless NODE_ENV says a test runs it: set before anything loads.
process.env.NODE_ENV = process.env.NODE_ENV ?? 'test';

import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import { runCommand } from '../cli/runCommand';
import { deliveryCpu, wallMicros } from './measures';
import { median, round } from './stats';
import { BUDGETS } from './verdict';

export const CLOCKS = ['cpu', 'wall'] as const;
export type ClockName = (typeof CLOCKS)[number];
/** The CPU budget of `npm run bench`; wall time is a guard reported beside it. */
export const CPU_BUDGET = BUDGETS.performCpu;
const Measured = t.type({ clock: t.keyof({ cpu: null, wall: null }), ratio: t.number });
type Measured = t.TypeOf<typeof Measured>;

/** What the processes measured, a line per clock (each ratio in the order measured, then the median), and the verdict. */
export const summary = (measured: readonly Measured[]): { lines: string[]; met: boolean } => {
  const ratiosOf = (clock: ClockName) => measured.filter((m) => m.clock === clock).map((m) => round(m.ratio));
  const lines = CLOCKS.map(
    (clock) => `bench:fresh: ${clock} ${ratiosOf(clock).join(', ')}; median ${round(median(ratiosOf(clock)))}`,
  );
  // Judged on the median as printed, so the verdict never contradicts the line above it.
  const met = round(median(ratiosOf('cpu'))) <= CPU_BUDGET;
  return { lines: [...lines, `bench:fresh: CPU median ${met ? 'within' : 'over'} its budget of ${CPU_BUDGET}`], met };
};

/** One fresh process measuring with one clock: its ratio, or why it gave none. */
const measureIn = (clock: ClockName): Promise<Measured | string> =>
  new Promise((resolve) => {
    const child = fork(__filename, ['--child', clock], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', (error) => resolve(`a ${clock} process did not start: ${error.message}`));
    child.on('close', (code, signal) => {
      let decoded: ReturnType<typeof Measured.decode> | undefined;
      try {
        decoded = Measured.decode(JSON.parse(out));
      } catch {
        decoded = undefined;
      }
      resolve(
        code === 0 && decoded && isRight(decoded)
          ? decoded.right
          : `a ${clock} process gave no ratio (exit ${code ?? signal})`,
      );
    });
  });

const OPTIONS = { processes: { type: 'string' }, child: { type: 'string' } } as const;

export const main = async (argv: string[]): Promise<number> => {
  const { values } = parseArgs({ args: argv, options: OPTIONS });
  const child = CLOCKS.find((clock) => clock === values.child);
  if (child) {
    const compared = await deliveryCpu(40, 200, () => undefined, child === 'wall' ? wallMicros : undefined);
    process.stdout.write(`${JSON.stringify({ clock: child, ratio: compared.ratio })}\n`);
    return 0;
  }
  const processes = Number(values.processes ?? '5');
  if (!Number.isInteger(processes) || processes < 1 || processes > 20) {
    process.stderr.write('--processes takes a whole number from 1 to 20 (default 5).\n');
    return 2;
  }
  const measured: Measured[] = [];
  // One process at a time, the clocks in turn, so that neither side of a pair meets another process's load.
  for (let index = 0; index < processes; index += 1) {
    for (const clock of CLOCKS) {
      const result = await measureIn(clock);
      if (typeof result === 'string') throw new Error(result);
      process.stderr.write(`bench:fresh: process ${index + 1} of ${processes}, ${clock}: ${round(result.ratio)}\n`);
      measured.push(result);
    }
  }
  const { lines, met } = summary(measured);
  process.stdout.write(`${lines.join('\n')}\n`);
  return met ? 0 : 1;
};

if (require.main === module) runCommand(() => main(process.argv.slice(2)), 'The benchmark stopped');
