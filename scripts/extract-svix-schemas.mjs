// Regenerates src/tools/contract/svix-schemas.json from the provider's OpenAPI
// contract: the response schemas the emulator answers with, and every schema
// they reference. Only structure is kept (types, required, patterns, refs);
// descriptions and examples are dropped.
//
//   npm run schemas:extract -- path/to/svix-openapi.json
import { readFileSync, writeFileSync } from 'node:fs';

const ROOTS = [
  'ApplicationOut',
  'ListResponse_ApplicationOut_',
  'EventTypeOut',
  'ListResponse_EventTypeOut_',
  'EndpointOut',
  'ListResponse_EndpointOut_',
  'EndpointSecretOut',
  'MessageOut',
  'ListResponse_MessageOut_',
  'ListResponse_MessageAttemptOut_',
  'IntegrationOut',
  'IntegrationKeyOut',
  'ListResponse_IntegrationOut_',
  'HttpErrorOut',
  'HTTPValidationError',
  'RecoverOut',
  'ReplayOut',
];
const DROPPED = new Set(['description', 'example', 'examples', 'title']);

const [source] = process.argv.slice(2);
if (!source) {
  console.error("Give the path of the provider's OpenAPI file: npm run schemas:extract -- path/to/svix-openapi.json");
  process.exit(2);
}
const spec = JSON.parse(readFileSync(source, 'utf8'));
const all = spec.components.schemas;
const kept = {};
const strip = (node) => {
  if (Array.isArray(node)) return node.map(strip);
  if (typeof node !== 'object' || node === null) return node;
  // A nullable reference (MessageAttemptOut's msg): JSON Schema says it as a choice, as ajv's nullable needs a type.
  if (node.$ref && node.nullable === true) return { anyOf: [{ $ref: node.$ref }, { type: 'null' }] };
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    // "properties" maps field names to schemas: a field may be called "description".
    if (key === 'properties')
      out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, strip(schema)]));
    // Extensions (x-enum-varnames…) name things for code generators: not structure.
    else if (!DROPPED.has(key) && !key.startsWith('x-')) out[key] = strip(value);
  }
  return out;
};
const visit = (name) => {
  if (kept[name]) return;
  if (!all[name]) throw new Error(`${name} is not in the contract`);
  kept[name] = strip(all[name]);
  JSON.stringify(all[name], (key, value) => {
    if (key === '$ref' && typeof value === 'string') visit(value.split('/').pop());
    return value;
  });
};
ROOTS.forEach(visit);
const fixture = {
  $comment: 'Response schemas from the Svix API contract (structure only). Regenerate with npm run schemas:extract.',
  source: { title: spec.info.title, version: spec.info.version },
  // Kept under the same path as in the contract, so its $refs resolve unchanged.
  components: {
    schemas: Object.fromEntries(
      Object.keys(kept)
        .sort()
        .map((name) => [name, kept[name]]),
    ),
  },
};
writeFileSync(
  new URL('../src/tools/contract/svix-schemas.json', import.meta.url),
  `${JSON.stringify(fixture, null, 2)}\n`,
);
console.log(`wrote ${Object.keys(kept).length} schemas from ${spec.info.title} ${spec.info.version}`);
