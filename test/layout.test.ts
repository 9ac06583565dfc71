import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { PRODUCT, ships } from '../src/tools/package/stage';

/**
 * The floors of the house, kept (in the spirit of TigerBeetle's tidy.zig): every import of src/ runs down this list,
 * and no files import each other in a loop. The product is floors 0 to 8; the tools stand above it, and the product
 * never imports them. A new room gets a floor here, or this fails.
 */
const FLOORS: Record<string, number> = {
  'limits.ts': 0, // every limit and promise, one home
  models: 1, // the published models, io-ts codecs, lossless JSON
  zapier: 2, // Zapier's ports: requests, z.cache, the clock, errors
  svix: 3, // the Svix client, its ids, signatures and failures
  fields: 4, // models to Zap fields: pure mappers
  delivery: 5, // which delivery runs, top to bottom: verify, then claim; verdicts, not words
  'messages.ts': 6, // the words of a delivery's verdicts and of turning a Zap on; each floor words its own failures
  // (svix/failures.ts, zap/, fields/), and test/messages.test.ts gathers every message a person can read
  zap: 7, // a Zap's life: subscribe, unsubscribe, catch-up, pacing, access
  triggers: 8,
  'authentication.ts': 8,
  'index.ts': 9,
  // Tools (src/tools/: never imported by the product, never shipped), by their own floors.
  'tools/cli': 10,
  'tools/svix': 10, // Svix's server rules as the emulator and the simulation model them
  'tools/package': 11,
  'tools/docs': 12,
  'tools/setup': 11,
  'tools/sim': 11,
  'tools/sandbox': 13,
  'tools/contract': 14,
  'tools/bench': 14,
};
const ROOT = resolve(__dirname, '..');
const SRC = join(ROOT, 'src');

/** The room of a file of src/: its top folder (a tool's folder under tools/), or the file itself. */
const roomOf = (file: string): string => {
  const [first = '', second = ''] = relative(SRC, file).split(/[\\/]/);
  return first === 'tools' ? `tools/${second}` : first;
};

/** Every TypeScript file below a folder. */
const sources = (folder: string): string[] =>
  readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? sources(path) : /\.ts$/.test(name) ? [path] : [];
  });

/** The files of src/ a file imports (static, dynamic and require), resolved. */
const importsOf = (file: string): string[] => {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)'(\.{1,2}\/[^']*)'/g)];
  return specs.flatMap(([, spec = '']) => {
    const base = resolve(dirname(file), spec);
    const found = [`${base}.ts`, `${base}.d.ts`, join(base, 'index.ts')].find((path) => existsSync(path));
    return found && found.startsWith(SRC) ? [found] : [];
  });
};

type Graph = Map<string, string[]>;
/** What breaks the floors: imports from a room to one on its floor or above (rooms unknown to FLOORS too), and
 * loops of files. */
const brokenFloors = (graph: Graph, floors: Record<string, number>, room: (file: string) => string): string[] => {
  const broken: string[] = [];
  for (const [file, imports] of graph) {
    const from = room(file);
    if (floors[from] === undefined) broken.push(`${from} has no floor`);
    for (const target of imports) {
      const to = room(target);
      if (from !== to && !((floors[to] ?? Infinity) < (floors[from] ?? -Infinity)))
        broken.push(`${from} imports ${to}, which is not below it`);
    }
  }
  // Loops, by depth-first search: a file met again while it is still on the path.
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, path: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') return void broken.push(`a loop: ${path.slice(path.indexOf(file)).join(' -> ')}`);
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) visit(next, [...path, next]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, [file]);
  return [...new Set(broken)];
};

describe('the floors of the house', () => {
  const graph: Graph = new Map(sources(SRC).map((file) => [file, importsOf(file)]));
  const short = (file: string) => relative(SRC, file);

  it('reads the whole of src/', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect([...graph.values()].flat().length).toBeGreaterThan(300);
  });

  it('every import runs down, and no files import each other in a loop', () => {
    expect(brokenFloors(graph, FLOORS, roomOf).map((line) => line.replaceAll(SRC, 'src'))).toEqual([]);
  });

  it('fails on an import that runs back up, a loop, and a room without a floor', () => {
    const fake: Graph = new Map([
      ['svix/api.ts', ['zap/life.ts']],
      ['zap/life.ts', ['svix/api.ts']],
      ['extra/new.ts', []],
    ]);
    const room = (file: string) => file.split('/')[0] ?? '';
    expect(brokenFloors(fake, FLOORS, room)).toEqual([
      'svix imports zap, which is not below it',
      'extra has no floor',
      'a loop: svix/api.ts -> zap/life.ts -> svix/api.ts',
    ]);
  });

  it('the product never imports a tool', () => {
    const product = [...graph.keys()].filter((file) => (FLOORS[roomOf(file)] ?? Infinity) <= FLOORS['index.ts']!);
    const tools = (file: string) => (FLOORS[roomOf(file)] ?? 0) > FLOORS['index.ts']!;
    expect(product.flatMap((file) => (graph.get(file) ?? []).filter(tools).map(short))).toEqual([]);
  });

  it("what ships is an allow-list of the product's rooms: every one of them, and no tool", () => {
    const rooms = readdirSync(SRC).filter((name) => name !== 'tools' && !name.endsWith('.d.ts'));
    expect(rooms.map((name) => name.replace(/\.ts$/, '.js')).sort()).toEqual([...PRODUCT].sort());
    expect(['zap/life.js', 'index.d.ts', 'limits.js'].every(ships)).toBe(true);
    expect(['tools/sim/cli.js', 'tools', '.build-stamp', 'later/new.js'].some(ships)).toBe(false);
  });
});
