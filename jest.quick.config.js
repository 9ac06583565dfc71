/**
 * npm run test:quick: every test but the two that run the project in child
 * processes (npm start, three times, each building first; and the soak), for
 * the edit-and-rerun loop (`npm run test:quick -- --watch`). npm test runs all.
 * @type {import('jest').Config}
 */
const base = require('./jest.config.js');

module.exports = {
  ...base,
  testPathIgnorePatterns: [
    ...base.testPathIgnorePatterns,
    '<rootDir>/test/sandbox/start.test.ts',
    '<rootDir>/test/sandbox/soak.test.ts',
  ],
};
