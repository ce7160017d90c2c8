import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesUnder } from '../../support/source-files.js';

/**
 * A newcomer reads a source file top-down: none outside tests and benchmarks grows past 500 lines
 * (split it by capability instead). Lua scripts count too.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAX_LINES = 500;

describe('lint: no source file over 500 lines', () => {
  it('When the sources of libs, services and scripts are measured, then none outside tests and benchmarks is over 500 lines', () => {
    const sources = ['libs', 'services', 'scripts'].flatMap((d) =>
      filesUnder(join(ROOT, d), (p) => /\.(ts|tsx|mts|mjs|cjs|js|lua)$/.test(p) && !p.endsWith('.d.ts')),
    );
    expect(sources.length).to.be.greaterThan(100);
    const long = sources
      .map((p) => relative(ROOT, p).split('\\').join('/'))
      .filter((p) => !/(^|\/)(test|bench)\//.test(p))
      .map((p) => ({ p, lines: readFileSync(join(ROOT, p), 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.p}: ${f.lines}`);
    expect(long).to.deep.equal([]);
  });
});
