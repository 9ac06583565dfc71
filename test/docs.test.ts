import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIELDS_END, FIELDS_START, fieldReferenceTable, withFieldReference } from '../src/docs/fieldReference';
import { auctionStatusChangedOutputFields } from '../src/fields/auctionStatusChanged';

/** The README's field reference is made from outputFields; this keeps it in step. */

const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');

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

describe('the README', () => {
  it("has a field reference that matches the trigger's output fields (run npm run docs after changing them)", () => {
    const start = readme.indexOf(FIELDS_START);
    const end = readme.indexOf(FIELDS_END);
    expect(start).toBeGreaterThan(0);
    expect(cells(readme.slice(start + FIELDS_START.length, end))).toEqual(cells(fieldReferenceTable()));
    // Every output field is in it.
    expect(
      cells(fieldReferenceTable())
        .slice(1)
        .map((row) => row[0]),
    ).toEqual(auctionStatusChangedOutputFields.map((field) => `\`${field.key}\``));
  });

  it('regenerates only the marked section', () => {
    const stale = `intro\n${FIELDS_START}\nold table\n${FIELDS_END}\noutro`;
    const fresh = withFieldReference(stale);
    expect(fresh.startsWith(`intro\n${FIELDS_START}`)).toBe(true);
    expect(fresh.endsWith(`${FIELDS_END}\noutro`)).toBe(true);
    expect(fresh).not.toContain('old table');
    expect(() => withFieldReference('no markers')).toThrow(/fields:start/);
  });

  it('leads with npm install, npm start, npm run setup and npm test', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Quick start') + 400);
    for (const command of ['npm install', 'npm start', 'npm run setup', 'npm test'])
      expect(quickStart).toContain(command);
  });
});
