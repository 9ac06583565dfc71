/**
 * The suite for the package Zapier runs (npm run test:package): it needs
 * build/build.zip, made by npm run package, and Node 22 from the npm registry.
 * @type {import('jest').Config}
 */
module.exports = {
  ...require('./jest.config.js'),
  roots: ['<rootDir>/test/package'],
  testPathIgnorePatterns: ['/node_modules/'],
  // Each step runs in a Node 22 child process against servers on loopback.
  testTimeout: 30_000,
};
