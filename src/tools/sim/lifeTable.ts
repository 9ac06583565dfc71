import { parseArgs } from 'node:util';
import { tellStory, type Plan, type Told } from './story';

/**
 * `npm run life`: docs/guarantees.md's table of a Zap's life, measured by src/tools/sim/story.ts over seeds (default
 * 1-20, `--seeds FROM-TO`): for each plan, with and without Run Events Missed While Off, how many of the events made
 * meanwhile ran, and how late (minutes: the median and the worst over every seed), with Skip Outdated Events off so
 * that each event's arrival shows; and how many runs went backwards (an auction's older status after its newer), with
 * the option off and on (its default).
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
export const PLANS: Array<[string, Plan]> = [
  ['Edit, subscribe first', { kind: 'edit', order: 'subscribe-first', gapMs: 30_000, sameUrl: false }],
  ['Edit, unsubscribe first', { kind: 'edit', order: 'unsubscribe-first', gapMs: 30_000, sameUrl: false }],
  ['Off 30 s', { kind: 'off', offMs: 30_000 }],
  ['Off 10 min', { kind: 'off', offMs: 10 * MINUTE }],
  ['Off 2 h', { kind: 'off', offMs: 2 * HOUR }],
  ['Off 30 h', { kind: 'off', offMs: 30 * HOUR }],
];

type Row = { name: string; catchUp: boolean; between: number; ran: number; late: number[]; doubled: number } & {
  backwards: number;
  backwardsSkipping: number;
};

export const measure = async (seeds: { from: number; to: number }, everyMs = 20_000): Promise<Row[]> => {
  const rows: Row[] = [];
  for (const [name, plan] of PLANS) {
    for (const catchUp of [false, true]) {
      const row: Row = { name, catchUp, between: 0, ran: 0, late: [], doubled: 0, backwards: 0, backwardsSkipping: 0 };
      for (let seed = seeds.from; seed <= seeds.to; seed += 1) {
        const told: Told = await tellStory({ plan, seed, catchUp, skipOutdated: false, everyMs });
        Object.assign(row, {
          ...{ between: row.between + told.between, ran: row.ran + told.ran, late: [...row.late, ...told.late] },
          ...{ doubled: row.doubled + told.doubled, backwards: row.backwards + told.backwards },
        });
        const skipping = await tellStory({ plan, seed, catchUp, everyMs });
        row.backwardsSkipping += skipping.backwards + skipping.doubled;
      }
      rows.push(row);
    }
  }
  return rows;
};

const minutes = (value: number | undefined) =>
  value === undefined ? '–' : value < 90 ? `${value.toFixed(1)} min` : `${(value / 60).toFixed(1)} h`;

/** The table: a plan's two rows made one ("Either") where Run Missed changes nothing. */
export const tableOf = (rows: Row[]): string => {
  const lines = [
    '| Plan | Run Missed | Made | Ran | Late: median | Worst | Twice | Backwards: off / on |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const cellsOf = (row: Row) => {
    const sorted = [...row.late].sort((a, b) => a - b);
    const late = [minutes(sorted[Math.floor(sorted.length / 2)]), minutes(sorted[sorted.length - 1])];
    return [
      String(row.between),
      String(row.ran),
      ...late,
      String(row.doubled),
      `${row.backwards} / ${row.backwardsSkipping}`,
    ];
  };
  for (const [index, row] of rows.entries()) {
    const other = row.catchUp ? rows[index - 1] : rows[index + 1];
    const same = other?.name === row.name && cellsOf(other).join() === cellsOf(row).join();
    if (same && row.catchUp) continue;
    lines.push(`| ${[row.name, same ? 'Either' : row.catchUp ? 'Yes' : 'No', ...cellsOf(row)].join(' | ')} |`);
  }
  return lines.join('\n');
};

const main = async () => {
  const { values } = parseArgs({ options: { seeds: { type: 'string' } } });
  const [, from = '1', to = from] = /^(\d+)(?:-(\d+))?$/.exec(values.seeds ?? '1-20') ?? [];
  const seeds = { from: Number(from), to: Number(to) };
  const started = Date.now();
  console.log(tableOf(await measure(seeds)));
  console.log(
    `\nSeeds ${seeds.from}-${seeds.to}, an event every 20 s, in ${((Date.now() - started) / 1000).toFixed(1)} s.`,
  );
};

if (require.main === module) void main();
