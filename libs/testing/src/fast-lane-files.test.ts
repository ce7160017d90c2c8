import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { fastLaneFiles, fastLaneGlobs, fastLaneMatches, globToRegExp, matchGlob } from './fast-lane-files.js';

describe('testing: the fast lane is chosen by folder (the globs of .mocharc.fast.json)', () => {
  it('When globs are read as mocha reads them, then ** spans any number of folders (none too), * one name, and dir/** the folder itself', () => {
    const re = globToRegExp('services/*/src/**/*.test.ts');
    expect(re.test('services/api/src/x.test.ts')).to.equal(true);
    expect(re.test('services/api/src/features/labels/create-label.test.ts')).to.equal(true);
    expect(re.test('services/api/src/features/labels/create-label.ts')).to.equal(false);
    expect(re.test('services/api/test/x.test.ts')).to.equal(false);
    expect(re.test('services/a/b/src/x.test.ts'), '* is one name').to.equal(false);
    const e2e = globToRegExp('**/e2e/**');
    expect(e2e.test('services/api/src/features/labels/e2e/labels.test.ts')).to.equal(true);
    expect(e2e.test('e2e/a.test.ts')).to.equal(true);
    expect(e2e.test('services/api/src/features/labels/e2e-ish.test.ts')).to.equal(false);
    expect(globToRegExp('test/fast/**').test('test/fast')).to.equal(true);
    expect(globToRegExp('libs/?/x.ts').test('libs/a/x.ts')).to.equal(true);
    expect(globToRegExp('a.b/*.ts').test('axb/c.ts'), 'a dot is a dot').to.equal(false);
  });

  it('When a folder is matched, then the files of the glob are found, less the ignored ones, and node_modules is never walked', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'mgw-fast-globs-'));
    try {
      for (const file of [
        'services/api/src/features/labels/create-label.test.ts',
        'services/api/src/features/labels/create-label.ts',
        'services/api/src/features/labels/e2e/labels.test.ts',
        'services/api/src/node_modules/dep/x.test.ts',
        'services/sender/src/pacing.test.ts',
      ]) {
        await mkdir(path.dirname(path.join(root, file)), { recursive: true });
        await writeFile(path.join(root, file), '');
      }
      expect(matchGlob(root, 'services/*/src/**/*.test.ts', ['**/e2e/**'])).to.deep.equal([
        'services/api/src/features/labels/create-label.test.ts',
        'services/sender/src/pacing.test.ts',
      ]);
      expect(matchGlob(root, 'libs/*/src/**/*.test.ts'), 'no such folder').to.deep.equal([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("When the lane's configuration is read, then its spec is globs only, each matching test files, none of them end-to-end", () => {
    const { spec, ignore } = fastLaneGlobs();
    expect(spec.length).to.be.greaterThan(0);
    for (const glob of spec) expect(glob, 'a glob, not a hand-kept file').to.match(/\*/);
    expect(ignore).to.include('**/e2e/**');
    for (const { glob, files } of fastLaneMatches()) expect(files, glob).not.to.deep.equal([]);
    const files = fastLaneFiles();
    expect(files).to.include('libs/testing/src/fast-lane-files.test.ts');
    for (const file of files) {
      expect(file).to.match(/\.test\.ts$/);
      expect(file).not.to.match(/(^|\/)(e2e|dashboard)\//);
    }
  });
});
