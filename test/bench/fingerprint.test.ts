import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MEASURED, sourceFingerprint } from '../../src/tools/bench/report';

/**
 * The performance document names the source it was measured for; a test
 * fails when that source changes. Everything that changes the built app must
 * change the fingerprint, and nothing else may.
 */

const ROOT = resolve(__dirname, '../..');

describe('the source fingerprint', () => {
  let copy: string;
  beforeEach(() => {
    copy = mkdtempSync(join(tmpdir(), 'fingerprint-'));
    for (const entry of MEASURED) cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
    writeFileSync(join(copy, 'README.md'), '# a document\n');
  });
  afterEach(() => rmSync(copy, { recursive: true, force: true }));

  it('is the same for a copy of the same source', () => {
    expect(sourceFingerprint(copy)).toBe(sourceFingerprint(ROOT));
  });

  it.each(['src/index.ts', 'package-lock.json', 'tsconfig.build.json', 'tsconfig.json'])(
    'changes when %s changes',
    (file) => {
      const before = sourceFingerprint(copy);
      writeFileSync(join(copy, file), '{}\n', { flag: 'a' });
      expect(sourceFingerprint(copy)).not.toBe(before);
    },
  );

  it('does not change when a document changes', () => {
    const before = sourceFingerprint(copy);
    writeFileSync(join(copy, 'README.md'), 'more\n', { flag: 'a' });
    expect(sourceFingerprint(copy)).toBe(before);
  });
});
