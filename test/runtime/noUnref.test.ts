import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/**
 * A guard that cannot be forgotten: no code a Zap runs may unref a timer (or
 * anything else). Zapier's runtime ends an invocation as soon as nothing holds
 * the event loop, so an unref'd wait lets an operation be cut off unanswered.
 * The code a Zap runs is everything src/index.ts reaches through imports and
 * requires (lazy ones included), found by the TypeScript parser, so a new
 * folder or a new lazy load is covered without anyone remembering to add it.
 * The sandbox's own servers and samplers are not reached, and may keep theirs.
 */

const ROOT = resolve(__dirname, '../..');

const resolveModule = (from: string, specifier: string): string | undefined => {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  return [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
};

/** Each `unref` the file's code names (comments and text do not count), by line, and the modules it loads. */
const scan = (file: string): { unrefs: number[]; loads: string[] } => {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const unrefs: number[] = [];
  const loads: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) && node.text === 'unref') {
      unrefs.push(source.getLineAndCharacterOfPosition(node.getStart()).line + 1);
    }
    if (ts.isElementAccessExpression(node) && ts.isStringLiteral(node.argumentExpression)) {
      if (node.argumentExpression.text === 'unref')
        unrefs.push(source.getLineAndCharacterOfPosition(node.getStart()).line + 1);
    }
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) loads.push(node.moduleSpecifier.text);
    }
    if (ts.isCallExpression(node) && node.arguments.length === 1) {
      const [argument] = node.arguments;
      const loader = node.expression.kind === ts.SyntaxKind.ImportKeyword || node.expression.getText() === 'require';
      if (loader && argument && ts.isStringLiteral(argument)) loads.push(argument.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { unrefs, loads };
};

/** Every file reached from `entry`, with the lines that name `unref`. */
const reach = (entry: string): Map<string, number[]> => {
  const found = new Map<string, number[]>();
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (found.has(file)) continue;
    const { unrefs, loads } = scan(file);
    found.set(file, unrefs);
    for (const specifier of loads) {
      const next = resolveModule(file, specifier);
      if (next) queue.push(next);
    }
  }
  return found;
};

const named = (files: Map<string, number[]>) =>
  [...files].filter(([, lines]) => lines.length > 0).map(([file, lines]) => `${relative(ROOT, file)}:${lines}`);

describe('no unref in the code a Zap runs', () => {
  const app = reach(join(ROOT, 'src', 'index.ts'));

  it('reaches the delivery path, lazy loads included', () => {
    const files = [...app.keys()].map((file) => relative(ROOT, file));
    expect(files).toEqual(
      expect.arrayContaining([
        'src/delivery/runtime.ts',
        'src/delivery/verify.ts',
        'src/delivery/claim.ts',
        'src/triggers/auctionStatusChanged.ts',
      ]),
    );
    expect(files.filter((file) => file.startsWith('src/tools/'))).toEqual([]);
  });

  it('finds no unref there', () => {
    expect(named(app)).toEqual([]);
  });

  it('would find one: the soak samples memory on an unref’d interval', () => {
    expect(named(reach(join(ROOT, 'src', 'tools', 'sandbox', 'soak.ts')))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^src\/tools\/sandbox\/soak\.ts:\d+$/)]),
    );
  });
});
