/**
 * The suites npm run test:e2e runs (jest.e2e.config.js), and npm test leaves out: each runs the built project in
 * child processes, or waits in real time (npm start, the soak, a paced burst), so npm test stays a loop of a minute.
 */
const E2E = [
  'test/sandbox/start.test.ts',
  'test/sandbox/soak.test.ts',
  'test/sandbox/burst.test.ts',
  'test/contract/contract.test.ts',
  'test/runtime/bareProcess.test.ts',
  'test/setup/npmRunSetup.test.ts',
  'test/sim/simulation.test.ts',
  'test/delivery/memory.test.ts',
  'test/validateCli.test.ts',
];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The built package has its own suite (npm run test:package); the suites in E2E are npm run test:e2e, which CI
  // runs too.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/package/', ...E2E.map((path) => `<rootDir>/${path}`)],
  // Tests are compiled file by file by swc, without type checking (tsconfig.json sets isolatedModules, so each
  // file compiles alone); the types of sources and tests are checked once, by npm run typecheck, as CI does.
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }],
    // The provider's SDK (svix 2) ships ES modules only, and jest loads modules
    // as CommonJS: its files alone are compiled to CommonJS for the tests.
    '/node_modules/svix/.+\\.mjs$': ['@swc/jest', { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!svix/)'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json', 'node'],
  // A test that hangs fails after this long. Five seconds (jest's default) is a
  // clock a loaded machine can beat: spawning node or building under load took longer.
  testTimeout: 30_000,
  // The network is closed in tests: every provider call is mocked or goes to loopback.
  setupFilesAfterEnv: ['<rootDir>/test/setup.ts'],
  // Each file starts with Node's own http and https, so a worker runs file after file: zapier-platform-core patches
  // them once per process, keeping whichever nock it found (test/freshHttp.ts).
  setupFiles: ['<rootDir>/test/freshHttp.ts'],
  maxWorkers: 2,
  // What passing tests print (the app logging Svix's refusals a test provokes, on purpose) reads as failure: left
  // out; a failure still says what failed. \`npm test -- --silent=false\` shows it all.
  silent: true,
};
// For jest.e2e.config.js; not enumerable, so jest does not take it for an option (and warn on every run).
Object.defineProperty(module.exports, 'E2E', { value: E2E, enumerable: false });
