import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isRight } from 'fp-ts/Either';
import { BenchResults, performanceDoc, sourceFingerprint } from '../src/tools/bench/report';
import { FIELDS_END, FIELDS_START, fieldReferenceTable, withFieldReference } from '../src/tools/docs/fieldReference';
import { guideIntegrationName, withIntegrationName } from '../src/tools/docs/integrationName';
import { projectListing } from '../src/tools/package/listing';
import { SETTINGS } from '../src/tools/sim/settings';

/**
 * The documents, each for its reader, kept true: the README for whoever
 * deploys or maintains the integration, the guide for the person building
 * Zaps (its table of fields made from the trigger), and the performance
 * document written by the benchmark from a run of the current source.
 */

const ROOT = join(__dirname, '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const readme = read('README.md');
const guide = read('docs/guide.md');
const svixSetup = read('docs/svix-setup.md');

/** A markdown table as rows of trimmed cells, whatever its column padding. */
const cells = (table: string): string[][] =>
  table
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );

/** The text outside fenced code blocks. */
const prose = (markdown: string): string[] => {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return !fenced && !line.startsWith('```');
  });
};

/** Words as `wc -w` counts them: whitespace-separated tokens. */
const words = (markdown: string): number => markdown.split(/\s+/).filter((word) => word !== '').length;

/** Each document's budget in words, for its one reader. */
const BUDGETS: Record<string, number> = {
  'docs/guide.md': 1_650, // with a worked example and how to learn the statuses' names (#61)
  'docs/svix-setup.md': 1_020, // which key goes where, and when to expire the set-up's (#61.11)
  'README.md': 1_100, // with the path's diagram (#61.6)
  'docs/guarantees.md': 1_800, // with the legend of the simulation's counters (#61)
  'docs/performance.md': 400,
  'docs/svix-fidelity.md': 1_100,
  'CHANGELOG.md': 300,
};

describe('each document, within its word budget', () => {
  it.each(Object.entries(BUDGETS))('%s has at most %i words', (path, budget) => {
    expect(words(read(path))).toBeLessThanOrEqual(budget);
  });
});

describe('the README', () => {
  it('is for whoever deploys or maintains the integration, and its lines wrap', () => {
    for (const line of prose(readme)) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('draws the path under its first paragraph, in a diagram GitHub renders: Svix, a Zap’s endpoint, the claim (#61.6)', () => {
    const top = readme.slice(0, readme.indexOf('This README is for'));
    const diagram = /```mermaid\n(flowchart [^]*?)```/.exec(top)?.[1] ?? '';
    for (const step of ['Auction service', 'Svix', 'one endpoint per Zap', 'verify', 'claim', 'the Zap runs'])
      expect(diagram).toContain(step);
  });

  it('leads with the sandbox: npm install, npm start, npm test', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Setting it up'));
    expect(quickStart).toMatch(/npm install\nnpm start\nnpm test/);
  });

  it('names the Node to install before the commands, as package.json does, and what the first npm test fetches (#54)', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Setting it up'));
    expect(quickStart.slice(0, quickStart.indexOf('```'))).toMatch(/Install Node 22/);
    const manifest: unknown = JSON.parse(read('package.json'));
    expect(manifest).toMatchObject({ engines: { node: '>=22' } });
    expect(quickStart).toMatch(/first run, which fetches Node\s+22/);
    // Figures measured, quiet and busy, and what the first run's silence is (#61.5).
    expect(quickStart).toMatch(/\d+ s measured on a quiet\s+2-core machine, \d+ s with both cores busy/);
    expect(quickStart).toMatch(/silently: give it a minute or two/);
  });

  it('keeps what passing tests print out of npm test: a run says what failed (#54)', () => {
    const config: unknown = require(join(ROOT, 'jest.config.js'));
    expect(config).toMatchObject({ silent: true });
    expect(readme).toMatch(/npm test -- --silent=false/);
  });

  it("links to the guide, the Svix owner's steps, the guarantees, the performance figures and the changelog", () => {
    for (const path of [
      'docs/guide.md',
      'docs/svix-setup.md',
      'docs/guarantees.md',
      'docs/performance.md',
      'docs/svix-fidelity.md',
      'CHANGELOG.md',
    ]) {
      expect(readme).toContain(`](${path})`);
      expect(read(path).length).toBeGreaterThan(500);
    }
  });
});

describe('the fidelity table, for whoever changes a model of Svix', () => {
  const fidelity = read('docs/svix-fidelity.md');

  it('names tests that exist, and each row of issue 45 among them', () => {
    const named = [...fidelity.matchAll(/`(test\/[^`]+\.test\.ts)`/g)].map((match) => match[1] ?? '');
    expect(named.length).toBeGreaterThan(20);
    for (const path of new Set(named))
      expect({ path, exists: existsSync(join(ROOT, path)) }).toEqual({ path, exists: true });
    for (let row = 1; row <= 10; row += 1) expect(fidelity).toContain(`(row ${row})`);
  });

  it('names sources in words: no address of a code host or a package registry', () => {
    expect(fidelity).not.toMatch(/https?:\/\//);
  });
});

describe('the guide, for the person building Zaps', () => {
  it('works through the job it is for: an email when an auction closes, its recipients, the UUIDs collected (#61.10)', () => {
    const example = guide.slice(guide.indexOf('## An example'), guide.indexOf('## When something goes wrong'));
    for (const step of ['Only These Statuses', 'no bidder', 'Auction UUID', 'lookup', 'one row per **Auction UUID**'])
      expect(example).toContain(step);
  });

  it('says to leave the Server URL empty unless the hand-off gave one, wherever it says to leave it (#61.9)', () => {
    const empties = guide
      .split('\n\n')
      .filter((paragraph) => /Server URL[^.]*leave it empty|Leave it empty/.test(paragraph));
    expect(empties.length).toBeGreaterThanOrEqual(2);
    for (const paragraph of empties) expect(paragraph).toMatch(/unless whoever set up your Consumer App\s+gave/);
  });

  it("says how to learn the statuses' real names: the list of recent ones, and skipped events' halts (#61.8)", () => {
    const options = guide.slice(guide.indexOf('**Only These Statuses**'), guide.indexOf('**Only This Auctioneer**'));
    expect(options).toMatch(/a status typed wrong never runs/);
    expect(options).toMatch(
      /Show Skipped\s+Events\*\* at\s+\*\*Yes\*\* for the first days: each event it skips is halted with\s+its status named/,
    );
  });

  it("has a table of fields that matches the trigger's output fields (run npm run docs after changing them)", () => {
    const start = guide.indexOf(FIELDS_START);
    const end = guide.indexOf(FIELDS_END);
    expect(start).toBeGreaterThan(0);
    expect(cells(guide.slice(start + FIELDS_START.length, end))).toEqual(cells(fieldReferenceTable()));
  });

  it('regenerates only the marked section', () => {
    const stale = `intro\n${FIELDS_START}\nold table\n${FIELDS_END}\noutro`;
    const fresh = withFieldReference(stale);
    expect(fresh.startsWith(`intro\n${FIELDS_START}`)).toBe(true);
    expect(fresh.endsWith(`${FIELDS_END}\noutro`)).toBe(true);
    expect(fresh).not.toContain('old table');
    expect(() => withFieldReference('no markers')).toThrow(/fields:start/);
  });

  it('needs no npm, no terminal and no code: no commands, options, code names or internals', () => {
    const forbidden = [
      /\bnpm\b/i,
      /terminal|command line|shell/i,
      /\s--[a-z]/,
      // A camelCase or snake_case name is a code name; capitals with underscores are values a person sees.
      /\b[a-z]+[A-Z][A-Za-z]*\b/,
      /\b[a-z]+_[a-z]+\b/,
      /__|@class|\bLONG\b|io-ts|z\.cache|\bperform\b|JSON|\bbundle\b|\.ts\b|src\//,
    ];
    for (const line of prose(guide).filter((text) => !text.startsWith('<!--'))) {
      for (const pattern of forbidden)
        expect({ line, pattern: pattern.source, found: pattern.test(line) }).toMatchObject({ found: false });
    }
  });

  it('names the integration as the App Directory lists it, where a person looks for it (run npm run docs after changing it)', () => {
    const { title } = projectListing();
    expect(guideIntegrationName(guide)).toBe(title);
    const section = (heading: string) =>
      guide.slice(guide.indexOf(heading), guide.indexOf('\n## ', guide.indexOf(heading) + 1));
    expect(section('## Connect your account')).toContain(`If you cannot find **${title}** in Zapier`);
    expect(section('## Build a Zap')).toContain(`1. Choose **Create Zap** and pick **${title}** as the trigger.`);
  });

  it('renames the integration in the heading and wherever it is in bold, and nothing else', () => {
    const before = '# Old Name in Zapier: a guide\n\nPick **Old Name**, then **Old**. Old Name stays.';
    expect(withIntegrationName(before, 'Gavel')).toBe(
      '# Gavel in Zapier: a guide\n\nPick **Gavel**, then **Old**. Old Name stays.',
    );
    expect(() => withIntegrationName('no heading', 'Gavel')).toThrow(/in Zapier: a guide/);
  });

  it("links to the Svix owner's steps instead of repeating them", () => {
    expect(guide).toContain('](svix-setup.md)');
    expect(svixSetup).toContain('## Resend an event');
  });

  it('says which Svix environment to use, and how to get names into a Zap', () => {
    expect(guide).toMatch(/environment/);
    expect(guide).toMatch(/Production/);
    expect(guide).toMatch(/## Getting names into your Zap/);
    expect(guide).toMatch(/does \*\*not\*\*\s+carry/);
  });
});

describe("the Svix owner's steps", () => {
  it('leaves no loose key: the API Access Key runs the set-up and expires; the builder gets the integration key (#61.11)', () => {
    const setup = read('docs/svix-setup.md');
    expect(setup).not.toMatch(/API Access Key for Zapier/);
    expect(setup).toMatch(/Then expire the API Access Key "Zapier set-up"/);
    expect(setup).toMatch(/the key for Zapier \(the integration key of §2; without it,\s+§1's API Access Key\)/);
    expect(setup).toMatch(/a rate you edit in the dashboard is\s+overwritten/);
  });

  const headings = svixSetup.match(/^## .+$/gm) ?? [];

  it('lead with the dashboard alone, saying what that key can do, then the one command for an integration key', () => {
    expect(headings[0]).toMatch(/dashboard: no terminal needed/);
    const dashboard = svixSetup.slice(svixSetup.indexOf(headings[0] ?? ''), svixSetup.indexOf(headings[1] ?? ''));
    expect(dashboard).not.toMatch(/npm|terminal\b(?! needed)/);
    expect(dashboard).toMatch(/all Zaps need/);
    expect(dashboard).toMatch(/an API Access Key can do anything in its environment/);
    expect(headings[1]).toMatch(/integration key, with one command/);
    // Where Node and the project come from, and Windows' shell, are said before the command.
    expect(svixSetup).toMatch(/Node\.js 22 or later\*\*: the LTS installer from nodejs\.org, for Windows/);
    expect(svixSetup).toMatch(/this project's source\*\*, from whoever deploys the integration/);
    expect(svixSetup).toMatch(/on Windows, Command Prompt: PowerShell drops the `--`/);
  });

  it('show a set-up command that makes no second Consumer App, with options the set-up takes', () => {
    const commands = svixSetup.match(/^npm run setup -- .+$/gm) ?? [];
    expect(commands).toEqual(['npm run setup -- --app-id app_… --integration-key']);
    for (const option of svixSetup.match(/--[a-z][a-z-]+/g) ?? []) {
      expect(['--app-id', '--app-name', '--integration-key', '--rotate-integration-key', '--server-url']).toContain(
        option,
      );
    }
  });

  it('cover the hand-off, what a key given to the auction service can do, rotation, revoking and undoing', () => {
    expect(headings).toEqual(
      expect.arrayContaining([
        '## 3. Tell the auction service',
        '## 4. Hand the key to the Zap builder',
        '## Rotate, revoke, undo',
      ]),
    );
    const service = svixSetup.slice(svixSetup.indexOf('## 3.'), svixSetup.indexOf('## 4.'));
    expect(service).toMatch(/it can do anything\s+in the environment/);
    expect(svixSetup).toMatch(/never by email or\s+chat/);
    expect(svixSetup).toMatch(/invite link/);
    expect(svixSetup).toMatch(/every Zap whose connection used it fails until its\s+builder reconnects/);
    expect(svixSetup).toMatch(/expire the old one/);
    expect(svixSetup).toMatch(/A Consumer App made by mistake/);
    // What the Zaps leave: parked endpoints failing on purpose, the alerts they raise, when they go (#59.8).
    const left = svixSetup.slice(svixSetup.indexOf('## What Zaps leave'), svixSetup.indexOf("## What Zapier's"));
    expect(left).toMatch(/zapier-zap-/);
    expect(left).toMatch(/parked\.invalid/);
    expect(left).toMatch(/message\.attempt\.failing/);
    expect(left).toMatch(/3 minutes after/);
    expect(left).toMatch(/Deleting a parked one is safe/);
    // What builders' messages ask of the owner, the set-up failing, and taking it all back out (#54).
    expect(svixSetup).toMatch(/\*\*Register AUCTION_STATUS_CHANGE\*\*/);
    expect(svixSetup).toMatch(/\*\*Un-archive it\*\*/);
    expect(svixSetup).toMatch(/## If the set-up fails/);
    expect(svixSetup).toMatch(/\*\*Take everything out\*\*/);
  });
});

describe('the performance document', () => {
  const recorded = BenchResults.decode(JSON.parse(read('docs/performance.json')));

  it('is exactly what npm run bench -- --docs wrote from its figures', () => {
    if (!isRight(recorded)) throw new Error('docs/performance.json is not a bench result: run npm run bench -- --docs');
    expect(read('docs/performance.md')).toBe(performanceDoc(recorded.right));
    expect(read('docs/performance.md')).toMatch(/on \d{4}-\d\d-\d\d: .+, \d+ cores,\n\d+ GiB, /);
  });

  it('is from a run of the current source (after changing src/, the lockfile or a tsconfig, run npm run bench -- --docs)', () => {
    if (!isRight(recorded)) throw new Error('docs/performance.json is not a bench result');
    expect(recorded.right.source).toBe(sourceFingerprint(ROOT));
    expect(recorded.right.comparisons.length).toBeGreaterThanOrEqual(3);
    expect(recorded.right.roundTrips.length).toBeGreaterThanOrEqual(5);
  });

  it('shows, beside each measured ratio, the 95% interval its verdict was judged with', () => {
    if (!isRight(recorded)) throw new Error('docs/performance.json is not a bench result');
    const measured = recorded.right.comparisons.filter((entry) => entry.detail?.interval95 !== undefined);
    expect(measured.length).toBeGreaterThanOrEqual(2);
    const doc = read('docs/performance.md');
    for (const entry of measured) {
      expect(doc).toContain(`| **${entry.ratio}×** (${String(entry.detail?.interval95)}) |`);
    }
  });
});

/**
 * What is wrong with a guarantees map: a promise (a section) or a known limit (a bullet) naming nothing that holds
 * it, a test file that does not exist, a setting the simulation does not have.
 */
const mapProblems = (markdown: string, exists: (path: string) => boolean, settings: ReadonlySet<string>): string[] => {
  const problems: string[] = [];
  const sections = markdown.split(/^## /m).slice(1);
  const claims = sections.flatMap((section) => {
    const [title = '', ...body] = section.split('\n');
    if (title === 'How it is tested') return [];
    const text = body.join('\n');
    if (title !== 'Known limits') return [{ what: title, text }];
    return text
      .split(/^- /m)
      .slice(1)
      .map((bullet) => ({ what: bullet.slice(0, 40).replace(/\s+/g, ' '), text: bullet }));
  });
  for (const { what, text } of claims) {
    const held = text.split('**Held by:**')[1];
    if (held === undefined) {
      problems.push(`names nothing that holds it: ${what}`);
      continue;
    }
    const [tests = '', named = ''] = held.split(/;\s*settings?\s/);
    for (const [, path = ''] of tests.matchAll(/`(test\/[^`]+)`/g))
      if (!exists(path)) problems.push(`no such test: ${path}`);
    for (const [, name = ''] of named.matchAll(/`([^`]+)`/g))
      if (!settings.has(name)) problems.push(`no such setting: ${name}`);
  }
  return problems;
};

describe('the guarantees map', () => {
  const settings = new Set(SETTINGS.map((setting) => setting.name));
  const exists = (path: string) => existsSync(join(ROOT, path));

  it('names, for every promise and known limit, tests and settings that exist', () => {
    expect(mapProblems(read('docs/guarantees.md'), exists, settings)).toEqual([]);
  });

  it('fails for a promise that names nothing, a test that is gone and a setting the simulation lacks', () => {
    const broken = [
      '# Guarantees',
      '## Kept',
      'Something. **Held by:** `test/gone.test.ts`; setting `no-such-setting`.',
      '## Unheld',
      'Nothing holds this.',
      '## Known limits',
      '- A limit with nothing behind it.',
    ].join('\n');
    expect(mapProblems(broken, exists, settings)).toEqual([
      'no such test: test/gone.test.ts',
      'no such setting: no-such-setting',
      'names nothing that holds it: Unheld',
      'names nothing that holds it: A limit with nothing behind it.',
    ]);
  });
});
