import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { validateAppDefinition } from 'zapier-platform-schema';
import { compileApp, serializeApp } from 'zapier-platform-core/src/tools/schema';
import app from '../src';
import { version } from '../package.json';

const ROOT = resolve(__dirname, '..');

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
      'showSkipped',
    ]);
  });

  it('index.js (what Zapier loads) exports the same app, compiled to CommonJS', () => {
    // `npm test` builds first (pretest), so dist/ is current.
    const loaded: unknown = require('../index.js');
    if (typeof loaded !== 'object' || loaded === null) throw new Error('index.js exports no app');
    expect(serializeApp(compileApp(loaded))).toEqual(serializeApp(compileApp(app)));
  });

  /** The files matching `pattern` that a fresh Node process has loaded once it loaded index.js, as Zapier does. */
  const loadedBy = (pattern: RegExp): unknown => {
    const script = `require('./index.js'); const loaded = Object.keys(require.cache).filter((file) => ${String(pattern)}.test(file)); process.stdout.write(JSON.stringify(loaded));`;
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' }));
  };

  it('loads none of the sandbox, the set-up or test-only libraries on Zapier', () => {
    expect(loadedBy(/dist[\\/](sandbox|setup)[\\/]|node_modules[\\/](svix|standardwebhooks|nock|ajv)[\\/]/)).toEqual(
      [],
    );
  });

  it('loads what turning a Zap on or off and testing a connection need only when first asked', () => {
    // The files watched exist (a rename would otherwise pass unseen).
    for (const file of ['zap/life.js', 'zap/access.js']) expect(existsSync(resolve(ROOT, 'dist', file))).toBe(true);
    expect(loadedBy(/dist[\\/]zap[\\/](life|access)\.js$/)).toEqual([]);
    // Svix's server rules are the tools' model of Svix (src/tools/svix/): nothing of the app loads them.
    expect(loadedBy(/svix[\\/]rules\.js$/)).toEqual([]);
  });
});
