// zapier-platform-core exports the handler the platform calls for every
// invocation (createAppHandler) without a type; this is the part the hook
// runner, the benchmark and the tests use.
import 'zapier-platform-core';

declare module 'zapier-platform-core' {
  export interface HandlerEvent {
    command: 'execute' | 'definition';
    /** A dotted path into the app definition, e.g. `triggers.key.operation.perform`. */
    method?: string;
    bundle?: object;
    /** Where core's RPC client sends z.cache calls, and the token it sends them with (as on Zapier). */
    rpc_base?: string;
    token?: string;
    /** Copied into process.env before the invocation (core reads LOGGING_ENDPOINT from there). */
    environment?: Record<string, string>;
    /** An in-memory z.cache, as the local tester and CLI use: it ignores `nx` and always answers true. */
    zcacheTestObj?: Record<string, unknown>;
    /** A local run: no memory log lines, no patching of http, platform checks throw. */
    calledFromCli?: boolean;
  }
  export const createAppHandler: (app: object | string) => (event: HandlerEvent) => Promise<{ results: unknown }>;
}
