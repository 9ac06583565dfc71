import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';

/**
 * A newcomer's `npm install` warns of nothing it need not: npm 11 lists every locked package whose install script
 * package.json's `allowScripts` does not cover ("not yet covered by allowScripts"), as if it were blocked. Each such
 * script here was reviewed (#61.1): @swc/core's and esbuild's fetch or check their platform's binary.
 */

const ROOT = join(__dirname, '..');
const Lock = t.type({ packages: t.record(t.string, t.partial({ hasInstallScript: t.boolean })) });
const Manifest = t.partial({ allowScripts: t.record(t.string, t.boolean) });
const read = <A>(codec: t.Decoder<unknown, A>, file: string): A => {
  const decoded = codec.decode(JSON.parse(readFileSync(join(ROOT, file), 'utf8')));
  if (!isRight(decoded)) throw new Error(`${file} is not what npm writes`);
  return decoded.right;
};

describe('npm install', () => {
  it("runs every locked install script by package.json's allowScripts, so npm warns of none", () => {
    const { packages } = read(Lock, 'package-lock.json');
    const { allowScripts = {} } = read(Manifest, 'package.json');
    const scripted = Object.entries(packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(scripted.length).toBeGreaterThan(0);
    expect(scripted.filter((name) => allowScripts[name] !== true)).toEqual([]);
  });
});
