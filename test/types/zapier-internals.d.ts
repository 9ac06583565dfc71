// Type declarations for the two untyped platform modules the tests use to check
// the app definition exactly as the CLI does.
declare module 'zapier-platform-schema' {
  export interface ValidationResult {
    errors: Array<{ stack: string; property: string; message: string }>;
  }
  export function validateAppDefinition(definition: unknown): ValidationResult;
}

declare module 'zapier-platform-core/src/tools/schema' {
  export function compileApp(app: object): object;
  export function serializeApp(compiledApp: object): unknown;
  export function validateApp(compiledApp: object): unknown[];
}
