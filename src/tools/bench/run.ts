// Entry point of `npm run bench`. zapier-platform-core's tester prints a memory
// line for every invocation unless it believes it runs under a test runner,
// which it reads from NODE_ENV when it is first loaded: set it before anything
// loads (TypeScript keeps this order when it compiles to CommonJS).
process.env.NODE_ENV = process.env.NODE_ENV ?? 'test';

import { runCommand } from '../cli/runCommand';
import { main } from './index';

runCommand(() => main(process.argv.slice(2)), 'The benchmark stopped');
