import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectListing } from '../package/listing';
import { withFieldReference } from './fieldReference';
import { withIntegrationName } from './integrationName';

/**
 * `npm run docs`: rewrites the guide's table of fields from the trigger's outputFields, and the integration's
 * name from its App Directory listing (package.json).
 */
const GUIDE_PATH = join(__dirname, '../../../docs/guide.md');

if (require.main === module) {
  const before = readFileSync(GUIDE_PATH, 'utf8');
  const after = withIntegrationName(withFieldReference(before), projectListing().title);
  if (after !== before) writeFileSync(GUIDE_PATH, after);
  process.stdout.write(after === before ? 'docs/guide.md is up to date.\n' : 'docs/guide.md: updated.\n');
}
