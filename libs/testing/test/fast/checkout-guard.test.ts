import { mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { guardCheckout, listCheckout } from '../../src/checkout-guard.js';

/** The guard the suite ends with, on a checkout of its own (a temp directory, no git). */
describe('testing: the checkout guard (the suite leaves the checkout as it found it)', () => {
  let root: string;
  const write = (rel: string, text = 'x') => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'mgw-checkout-'));
    write('package.json', '{}');
    write('services/api/src/main.ts', 'export {};');
    write('services/api/dist/main.js', '');
    write('libs/store/package.json', '{}');
    write('README.md', '# x');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('When a run adds, removes and writes files (ignored ones too), then the check names each, with what happened', () => {
    const check = guardCheckout(root);
    write('.data/admin-password', 'secret');
    write('test-artifacts/dashboard/home-laptop.png');
    unlinkSync(path.join(root, 'README.md'));
    write('services/api/src/main.ts', 'export const changed = 1;');

    expect(check).to.throw(
      [
        '  + .data/',
        '  + .data/admin-password',
        '  - README.md',
        '  ~ services/api/src/main.ts',
        '  + test-artifacts/',
        '  + test-artifacts/dashboard/',
        '  + test-artifacts/dashboard/home-laptop.png',
      ].join('\n'),
    );
  });

  it('When a run only builds and installs (dist/, node_modules/, .nx/, *.tsbuildinfo), or writes a temp file and removes it, then the check passes', () => {
    const check = guardCheckout(root);
    write('services/api/dist/main.js', 'rebuilt');
    write('libs/store/dist/index.js');
    write('node_modules/.package-lock.json', '{}');
    write('.nx/workspace-data/file-map.json', '{}');
    write('libs/store/tsconfig.build.tsbuildinfo', '{}');
    write('.tmp/scratch');
    rmSync(path.join(root, '.tmp'), { recursive: true });

    expect(check).not.to.throw();
  });

  it('When a file is rewritten with the same size, then its new modification time still counts as a change', () => {
    const check = guardCheckout(root);
    write('package.json', '[]');
    const later = new Date(Date.now() + 60_000);
    utimesSync(path.join(root, 'package.json'), later, later);

    expect(check).to.throw(/~ package\.json/);
  });

  it('When the real checkout is listed, then it holds the sources and none of the skipped directories', () => {
    const checkout = path.resolve(import.meta.dirname, '../../../..');
    const started = performance.now();
    const listing = listCheckout(checkout);
    console.log(`      ${listing.size} entries listed in ${(performance.now() - started).toFixed(0)} ms`);

    expect(listing.has('libs/testing/src/checkout-guard.ts')).to.equal(true);
    expect([...listing.keys()].filter((p) => /(^|\/)(node_modules|dist|\.git)(\/|$)/.test(p))).to.deep.equal(
      [],
    );
  });
});
