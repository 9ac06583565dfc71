import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { validateAppDefinition } from 'zapier-platform-schema';
import { compileApp, serializeApp } from 'zapier-platform-core/src/tools/schema';
import app from '../src';
import { version } from '../package.json';

describe('the app definition', () => {
  it('passes zapier-platform-schema once serialized as the CLI does', () => {
    const serialized = serializeApp(compileApp(app));
    expect(validateAppDefinition(serialized).errors.map((error) => error.stack)).toEqual([]);
  });

  it('follows package.json for its version and pins the platform core exactly', () => {
    expect(app.version).toBe(version);
    expect(app.platformVersion).toBe('19.1.0');
  });

  it('has the Auction Status Changed instant trigger as published', () => {
    const trigger = app.triggers.auction_status_changed;
    expect(trigger.noun).toBe('Auction');
    expect(trigger.display.label).toBe('Auction Status Changed');
    expect(trigger.display.description).toBe('Triggers when an auction is created or its status changes.');
    expect(trigger.operation.type).toBe('hook');
    expect(trigger.operation.inputFields?.map((field) => 'key' in field && field.key)).toEqual([
      'statuses',
      'auctioneerUuid',
      'skipOutdated',
      'catchUp',
    ]);
  });

  it('index.js (what Zapier loads) exports the same app, compiled to CommonJS', () => {
    // `npm test` builds first (pretest), so dist/ is current.
    const loaded: unknown = require('../index.js');
    if (typeof loaded !== 'object' || loaded === null) throw new Error('index.js exports no app');
    expect(serializeApp(compileApp(loaded))).toEqual(serializeApp(compileApp(app)));
  });

  it('loads none of the sandbox, the set-up or test-only libraries on Zapier', () => {
    const script =
      "require('./index.js');" +
      'const loaded = Object.keys(require.cache).filter((file) => /dist[\\/](sandbox|setup)[\\/]|node_modules[\\/](svix|standardwebhooks|nock|ajv)[\\/]/.test(file));' +
      'process.stdout.write(JSON.stringify(loaded));';
    const output = execFileSync(process.execPath, ['-e', script], { cwd: resolve(__dirname, '..'), encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual([]);
  });

  it('loads what turning a Zap on or off and testing a connection need only when asked: no delivery needs it', () => {
    const script =
      "require('./index.js');" +
      'const loaded = Object.keys(require.cache).filter((file) => /dist[\\/](provider[\\/](zapLife|access)|svix[\\/]rules)\\.js$/.test(file));' +
      'process.stdout.write(JSON.stringify(loaded));';
    const output = execFileSync(process.execPath, ['-e', script], { cwd: resolve(__dirname, '..'), encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual([]);
  });
});
