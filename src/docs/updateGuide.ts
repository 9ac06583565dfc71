import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withFieldReference } from './fieldReference';

/** `npm run docs`: rewrites the guide's table of fields from the trigger's outputFields. */
const GUIDE_PATH = join(__dirname, '../../docs/guide.md');

if (require.main === module) {
  const before = readFileSync(GUIDE_PATH, 'utf8');
  const after = withFieldReference(before);
  if (after !== before) writeFileSync(GUIDE_PATH, after);
  process.stdout.write(after === before ? 'docs/guide.md is up to date.\n' : 'docs/guide.md: fields updated.\n');
}
