import { spawn, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';

/** Runs a command to its end, its standard output and error read together as one text, as a person sees them. */
export const spawned = async (
  command: string,
  args: string[],
  options: Pick<SpawnOptions, 'cwd' | 'env'>,
): Promise<{ code: number | null; printed: string }> => {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const [code] = await once(child, 'exit');
  return { code: typeof code === 'number' ? code : null, printed };
};
