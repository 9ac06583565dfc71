import { ApiException } from 'svix';
import { schemaErrors, type SchemaName } from '../../src/tools/contract/schemas';

export { schemaErrors, schemaFor, type SchemaName } from '../../src/tools/contract/schemas';

/** One raw answer of Svix (or the emulator), kept for the schema check. */
export interface Recorded {
  method: string;
  path: string;
  status: number;
  body: unknown;
}

/** A fetch for Svix's SDK that records each raw answer into `recorded`. */
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
