/**
 * npm run test:e2e: the suites that run the built project in child processes or wait in real time: npm start (a
 * newcomer's first command), the soak (400 events over real HTTP, a share in bare processes), a paced burst, the
 * contract CLI (interrupted with Ctrl+C among others), every operation that waits alone in a bare Node process as
 * Zapier's runtime runs it, npm run setup, seeds of the simulation, and the memory flood. CI runs them after npm
 * test, which leaves them out to stay within a minute.
 * @type {import('jest').Config}
 */
const { E2E, ...base } = require('./jest.config.js');

module.exports = {
  ...base,
  testMatch: E2E.map((path) => `**/${path}`),
  testPathIgnorePatterns: ['/node_modules/'],
};
