import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withFieldReference } from './fieldReference';

/** `npm run docs`: rewrites the README's field reference from the trigger's outputFields. */
const path = join(__dirname, '../../README.md');
const before = readFileSync(path, 'utf8');
const after = withFieldReference(before);
if (after !== before) writeFileSync(path, after);
process.stdout.write(
  after === before ? 'README.md field reference is up to date.\n' : 'README.md field reference updated.\n',
);
