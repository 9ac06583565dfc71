import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, registeredId, registerArgs } from '../src/tools/package/cli';
import { listingProblems, projectListing, readListing } from '../src/tools/package/listing';
import { appDirectory } from '../package.json';
import { productionManifest } from '../src/tools/package/stage';

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

  it('registers under the app\'s own name from package.json, described as "<name> is a…" (§2.5, §2.7, M002)', () => {
    const listing = projectListing();
    expect(listing).toEqual(appDirectory);
    expect(listingProblems(listing)).toEqual([]);
    // Not the trigger's name, nor the trigger's description.
    expect(listing.title).not.toBe('Auction Status Changed');
    expect(listing.description).toMatch(new RegExp(`^${listing.title} is an? `));
    expect(registerArgs()).toEqual(['register', listing.title, '--desc', listing.description]);
    expect(registerArgs({ title: 'Gavel', description: 'Gavel is x' })).toEqual([
      'register',
      'Gavel',
      '--desc',
      'Gavel is x',
    ]);
  });

  it("refuses a listing that breaks Zapier's rules, saying which", () => {
    const good = { title: 'Harbour Auctions', description: 'Harbour Auctions is an auction platform for property.' };
    expect(listingProblems(good)).toEqual([]);
    expect(
      listingProblems({ ...good, description: 'Triggers when an auction changes status in Harbour Auctions.' }),
    ).toEqual(['the description does not start with the title ("… is a …")']);
    expect(listingProblems({ ...good, description: 'Harbour Auctions is short.' })).toEqual([
      'the description is not 40 to 140 characters',
    ]);
    expect(listingProblems({ ...good, description: `${good.description} It syncs with Zapier.` })).toEqual([
      'the description names Zapier or syncing',
    ]);
    expect(listingProblems({ title: ' ', description: good.description })).toContain(
      'the title is empty or has spaces around it',
    );
    expect(() => readListing({ name: 'x' })).toThrow(/no appDirectory/);
    expect(() => readListing({ appDirectory: { ...good, title: 'Zapier Auctions' } })).toThrow(/names Zapier/);
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
