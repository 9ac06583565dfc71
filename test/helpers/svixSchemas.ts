import Ajv, { type ValidateFunction } from 'ajv';
import { ApiException } from 'svix';
import addFormats from 'ajv-formats';
import schemas from '../fixtures/svix-schemas.json';

/**
 * The provider's response schemas (test/fixtures/svix-schemas.json, extracted
 * from its API contract) compiled with ajv, to check the emulator's answers.
 */
const ajv = new Ajv({ allErrors: true });
addFormats(ajv);
ajv.addVocabulary(['components']);
// OpenAPI's integer formats, which JSON Schema does not define.
ajv.addFormat('uint16', {
  type: 'number',
  validate: (value: number) => Number.isInteger(value) && value >= 0 && value <= 65_535,
});
ajv.addSchema({ $id: 'svix', components: schemas.components });

export type SchemaName = keyof typeof schemas.components.schemas;

export const schemaErrors = (name: SchemaName, value: unknown): string[] => {
  const validate: ValidateFunction | undefined = ajv.getSchema(`svix#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name} in the fixture`);
  return validate(value)
    ? []
    : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`);
};

/** One raw answer of the provider (or the emulator), kept for the schema check. */
export interface Recorded {
  method: string;
  path: string;
  status: number;
  body: unknown;
}

/** A fetch for the provider's SDK that records each raw answer into `recorded`. */
export const recordingFetch =
  (recorded: Recorded[]): typeof fetch =>
  async (input, init) => {
    const response = await fetch(input, init);
    const text = await response.clone().text();
    const target = new URL(input instanceof Request ? input.url : String(input));
    recorded.push({
      method: init?.method ?? 'GET',
      path: target.pathname,
      status: response.status,
      body: text === '' ? undefined : JSON.parse(text),
    });
    return response;
  };

/** Which response schema a recorded answer must match (undefined: an empty answer). */
export type SchemaOf = (answer: Recorded) => SchemaName | undefined;

/** Every recorded answer checked against its schema: one line per mismatch. */
export const schemaMismatches = (recorded: readonly Recorded[], schemaOf: SchemaOf): string[] =>
  recorded.flatMap((answer) => {
    const name = schemaOf(answer);
    return name
      ? schemaErrors(name, answer.body).map((error) => `${answer.method} ${answer.path} (${name}): ${error}`)
      : [];
  });

/** The SDK's error for a request the emulator must refuse. */
export const apiError = async (promise: Promise<unknown>): Promise<ApiException<unknown>> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiException) return error;
    throw error;
  }
  throw new Error('expected the emulator to refuse the request');
};

/** The schema an answer must match, by route and status (undefined: no body to check). */
export const schemaFor: SchemaOf = ({ method, path, status, body }) => {
  if (status === 422) return 'HTTPValidationError';
  if (status >= 400) return 'HttpErrorOut';
  if (status === 204 || body === undefined) return undefined;
  const route = path.replace(/\/+$/, '').split('/').slice(3);
  const [collection, , sub, , leaf] = route;
  const list = method === 'GET';
  if (collection === 'event-type') return route.length === 1 && list ? 'ListResponse_EventTypeOut_' : 'EventTypeOut';
  if (route.length <= 2) return route.length === 1 && list ? 'ListResponse_ApplicationOut_' : 'ApplicationOut';
  if (sub === 'endpoint') {
    if (leaf === 'secret') return 'EndpointSecretOut';
    return route.length === 3 && list ? 'ListResponse_EndpointOut_' : 'EndpointOut';
  }
  if (sub === 'msg') return route.length === 3 && list ? 'ListResponse_MessageOut_' : 'MessageOut';
  if (sub === 'integration') {
    if (leaf === 'key') return 'IntegrationKeyOut';
    return route.length === 3 && list ? 'ListResponse_IntegrationOut_' : 'IntegrationOut';
  }
  throw new Error(`no schema for ${method} ${path}`);
};
