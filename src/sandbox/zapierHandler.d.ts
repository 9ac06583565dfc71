// zapier-platform-core exports the handler the platform calls for every
// invocation (createAppHandler) without a type; this is the part the hook
// runner uses.
import 'zapier-platform-core';

declare module 'zapier-platform-core' {
  export interface HandlerEvent {
    command: 'execute';
    /** A dotted path into the app definition, e.g. `triggers.key.operation.perform`. */
    method: string;
    bundle: object;
    /** An in-memory z.cache, as the local tester and CLI use. */
    zcacheTestObj?: Record<string, unknown>;
    /** A local run: no memory log lines, platform checks throw. */
    calledFromCli?: boolean;
  }
  export const createAppHandler: (app: object) => (event: HandlerEvent) => Promise<{ results: unknown }>;
}
