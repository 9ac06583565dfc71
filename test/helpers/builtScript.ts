import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import type * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';

/**
 * Runs a script of the built project (dist/, built by npm test's pretest) in a Node process of its own, and decodes
 * the one JSON document it prints: heavy runs go there, since jest's vm context makes each global lookup slow.
 */
export const runBuilt = async <A>(
  codec: t.Decoder<unknown, A>,
  script: string,
  args: string[],
  flags: string[] = [],
) => {
  const child = spawn(process.execPath, [...flags, resolve(__dirname, '../../dist', script), ...args]);
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const [code] = await once(child, 'exit');
  const decoded = codec.decode(JSON.parse(out));
  if (code !== 0 || !isRight(decoded))
    throw new Error(`dist/${script} printed no ${codec.name} (exit ${code}): ${out}`);
  return decoded.right;
};
