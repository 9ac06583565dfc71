import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * bareRunner watches timers (a stack trace for each) only in the bare process it runs. Processes that merely import
 * its BARE_MARK, as the soak and the benchmark do through bareProcess, must not pay for it: the watch would count in
 * every figure they measure.
 */
describe('bareRunner, imported', () => {
  it('takes no stack trace for a timer in the process that imports it', () => {
    const bareProcess = resolve(__dirname, '../../dist/tools/sandbox/bareProcess.js');
    const script = [
      `require(${JSON.stringify(bareProcess)});`,
      'let stacks = 0;',
      "Error.prepareStackTrace = () => { stacks += 1; return ''; };",
      'setTimeout(() => process.stdout.write(String(stacks)), 1);',
    ].join('\n');
    expect(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })).toBe('0');
  });
});
