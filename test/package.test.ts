import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LISTING, main, registeredId, registerArgs } from '../src/package/cli';
import { productionManifest } from '../src/package/stage';

/**
 * npm run package and npm run deploy, as far as they can be tried offline.
 * The zip itself is tested as built by npm run test:package.
 */

const roots: string[] = [];
const rootWith = (appRc: object): string => {
  const root = mkdtempSync(join(tmpdir(), 'auction-deploy-'));
  roots.push(root);
  writeFileSync(join(root, '.zapierapprc'), JSON.stringify(appRc));
  return root;
};
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

describe('npm run deploy', () => {
  it('stops before building, and says what to run, when the app was never registered with Zapier', async () => {
    const errors: string[] = [];
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((text) => {
      errors.push(String(text));
      return true;
    });
    try {
      await expect(main(['deploy'], rootWith({ includeInBuild: [] }))).resolves.toBe(1);
    } finally {
      write.mockRestore();
    }
    expect(errors.join('')).toMatch(/not registered with Zapier yet .*npm run register/s);
  });

  it("registers with the App Directory's listing: a sentence of at most 140 characters that says when it triggers", () => {
    expect(LISTING.description.length).toBeLessThanOrEqual(140);
    expect(LISTING.description).toMatch(/^Triggers when [^\n]+\.$/);
    expect(LISTING.description).not.toMatch(/zapier/i);
    expect(registerArgs()).toEqual(['register', 'Auction Status Changed', '--desc', LISTING.description]);
  });

  it('reads the id zapier-platform register writes', () => {
    expect(registeredId(rootWith({ id: 123456, key: 'App123456' }))).toBe(123456);
    expect(registeredId(rootWith({}))).toBeUndefined();
  });
});

describe('npm run package', () => {
  it('stages package.json without scripts (dist is built) or development dependencies', () => {
    const manifest = productionManifest(join(__dirname, '..'));
    expect(manifest).not.toHaveProperty('scripts');
    expect(manifest).not.toHaveProperty('devDependencies');
    expect(manifest).toHaveProperty('dependencies.zapier-platform-core', '19.1.0');
  });
});
