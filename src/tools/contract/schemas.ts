import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import schemas from './svix-schemas.json';

/**
 * Svix's response schemas (svix-schemas.json, extracted from its API
 * contract by `npm run schemas:extract`) compiled with ajv: the contract suite
 * checks every answer against them, and the tests check the emulator's.
 */
const ajv = new Ajv({ allErrors: true });
addFormats(ajv);
ajv.addVocabulary(['components']);
// OpenAPI's integer formats, which JSON Schema does not define.
ajv.addFormat('uint16', {
  type: 'number',
  validate: (value: number) => Number.isInteger(value) && value >= 0 && value <= 65_535,
});
ajv.addFormat('int16', {
  type: 'number',
  validate: (value: number) => Number.isInteger(value) && value >= -32_768 && value <= 32_767,
});
ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isSafeInteger(value) });
ajv.addSchema({ $id: 'svix', components: schemas.components });

export type SchemaName = keyof typeof schemas.components.schemas;

export const schemaErrors = (name: SchemaName, value: unknown): string[] => {
  const validate: ValidateFunction | undefined = ajv.getSchema(`svix#/components/schemas/${String(name)}`);
  if (!validate) throw new Error(`no schema ${String(name)} in the fixture`);
  return validate(value)
    ? []
    : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`);
};

/** One answer of Svix, as a schema check needs it. */
export interface Answer {
  method: string;
  path: string;
  status: number;
  body: unknown;
}

/** The schema an answer must match, by route and status (undefined: no body to check). */
export const schemaFor = ({ method, path, status, body }: Answer): SchemaName | undefined => {
  if (status === 422) return 'HTTPValidationError';
  // Svix's server answers every failure of its own with 500 and the body {} (error.rs), not the contract's shape.
  if (status === 500 && JSON.stringify(body) === '{}') return undefined;
  if (status >= 400) return 'HttpErrorOut';
  if (status === 204 || body === undefined) return undefined;
  const route = path.replace(/\/+$/, '').split('/').slice(3);
  const [collection, , sub, , leaf] = route;
  const list = method === 'GET';
  if (collection === 'event-type') return route.length === 1 && list ? 'ListResponse_EventTypeOut_' : 'EventTypeOut';
  if (route.length <= 2) return route.length === 1 && list ? 'ListResponse_ApplicationOut_' : 'ApplicationOut';
  if (sub === 'endpoint') {
    if (leaf === 'secret') return 'EndpointSecretOut';
    if (leaf === 'recover') return 'RecoverOut';
    if (leaf === 'replay-missing') return 'ReplayOut';
    return route.length === 3 && list ? 'ListResponse_EndpointOut_' : 'EndpointOut';
  }
  if (sub === 'msg') return route.length === 3 && list ? 'ListResponse_MessageOut_' : 'MessageOut';
  if (sub === 'attempt') return 'ListResponse_MessageAttemptOut_';
  if (sub === 'integration') {
    if (leaf === 'key') return 'IntegrationKeyOut';
    return route.length === 3 && list ? 'ListResponse_IntegrationOut_' : 'IntegrationOut';
  }
  throw new Error(`no schema for ${method} ${path}`);
};
