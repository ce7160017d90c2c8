import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesUnder, tsFiles } from '../../support/source-files.js';

/**
 * Every Redis script is a `.lua` file of the package that owns its keys (`loadScript` of
 * @mgw/common), run through the one EVALSHA runner: no Lua in TypeScript, no second caller of
 * `eval`/`evalsha`, no service with Lua of its own, and each file named with its key count and
 * opening with a header that says what it does, its KEYS, its ARGV and what it returns.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const RUNNER = 'libs/common/src/redis-scripts.ts';

const rel = (path: string) => relative(ROOT, path).split('\\').join('/');
/** Tests (a package's `test/`, the root's `test/`) may hold Lua of their own: fixtures, probes. */
const isTest = (path: string) => /(^|\/)test\//.test(rel(path));
const sources = ['libs', 'services', 'scripts']
  .flatMap((d) => tsFiles(join(ROOT, d)))
  .filter((p) => !isTest(p));
const luaFiles = filesUnder(join(ROOT, 'libs'), (p) => p.endsWith('.lua'))
  .concat(filesUnder(join(ROOT, 'services'), (p) => p.endsWith('.lua')))
  .filter((p) => !isTest(p));
const scripts = luaFiles.filter((p) => !/\/includes\//.test(rel(p)));

describe('lint: Redis scripts are .lua files run by one EVALSHA runner', () => {
  it('When the sources outside tests are read, then none holds Lua (`redis.call(`)', () => {
    const offenders = sources.filter((p) => readFileSync(p, 'utf8').includes('redis.call('));
    expect(offenders.map(rel)).to.deep.equal([]);
  });

  it('When the sources outside tests are read, then only the runner calls eval or evalsha', () => {
    const callers = sources.filter((p) =>
      /\.(eval|evalsha|evalBuffer|evalshaBuffer)\(/.test(readFileSync(p, 'utf8')),
    );
    expect(callers.map(rel)).to.deep.equal([RUNNER]);
  });

  it('When the scripts are listed, then every one lives in a lib (no service owns Lua on store keys)', () => {
    expect(luaFiles.length).to.be.greaterThan(0);
    expect(luaFiles.map(rel).filter((p) => !/^libs\/[a-z-]+\/lua\//.test(p))).to.deep.equal([]);
  });

  it('When a script file is read, then its name gives its key count and its header says what it does, its KEYS, ARGV and output', () => {
    const problems: string[] = [];
    for (const path of scripts) {
      const name = rel(path);
      const m = /\/([a-z][a-z0-9-]*?)-(\d+|n)\.lua$/.exec(name);
      if (!m) {
        problems.push(`${name}: not named <name>-<numKeys>.lua or <name>-n.lua`);
        continue;
      }
      const text = readFileSync(path, 'utf8');
      const header = /^--\[\[([\s\S]*?)\]\]/.exec(text)?.[1];
      if (!header) {
        problems.push(`${name}: no --[[ header ]] at the top`);
        continue;
      }
      const description = header.split(/\n\s*(Input|Output):/)[0]!.trim();
      if (description.length < 20) problems.push(`${name}: the header does not say what the script does`);
      if (!/\n\s*Output:/.test(header)) problems.push(`${name}: the header has no Output: section`);
      const body = text.slice(text.indexOf(']]') + 2);
      const used = [...body.matchAll(/KEYS\[(\d+)\]/g)].map((k) => Number(k[1]));
      const documented = new Set([...header.matchAll(/KEYS\[(\d+)\]/g)].map((k) => Number(k[1])));
      if (m[2] !== 'n') {
        const numKeys = Number(m[2]);
        for (let i = 1; i <= numKeys; i++)
          if (!documented.has(i)) problems.push(`${name}: KEYS[${i}] is not in the header`);
        const over = used.filter((k) => k > numKeys);
        if (over.length)
          problems.push(`${name}: uses KEYS[${Math.max(...over)}] but its name says ${numKeys} keys`);
      } else if (!/KEYS/.test(header)) problems.push(`${name}: the header does not say what its keys are`);
      const argv = new Set([...body.matchAll(/ARGV\[(\d+)\]/g)].map((a) => Number(a[1])));
      for (const a of argv)
        if (!new RegExp(`ARGV\\[${a}\\]`).test(header) && !/ARGV\[\d+\.\.\]|ARGV:/.test(header))
          problems.push(`${name}: ARGV[${a}] is used but not in the header`);
    }
    expect(problems).to.deep.equal([]);
  });

  it('When the sources are searched, then every script file is loaded by name somewhere and every include exists', () => {
    const code = sources.map((p) => readFileSync(p, 'utf8')).join('\n');
    const unused = scripts.map(rel).filter((p) => {
      const file = p.replace(/^.*\//, '').replace(/\.lua$/, '');
      return !code.includes(`'${file}'`) && !code.includes(`"${file}"`);
    });
    expect(unused, 'script files no source loads').to.deep.equal([]);
    const includes = new Set(luaFiles.filter((p) => /\/includes\//.test(rel(p))).map((p) => rel(p)));
    const missing: string[] = [];
    for (const path of luaFiles) {
      for (const inc of readFileSync(path, 'utf8').matchAll(/^--- @include "([a-z0-9/-]+)"/gm)) {
        const own = rel(path).replace(/\/lua\/.*$/, `/lua/includes/${inc[1]}.lua`);
        const common = `libs/common/lua/includes/${inc[1]}.lua`;
        if (!includes.has(own) && !includes.has(common)) missing.push(`${rel(path)}: ${inc[1]}`);
      }
    }
    expect(missing, 'includes that resolve to no file').to.deep.equal([]);
  });
});
