import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { MAY_IMPORT } from '../../../eslint.config.js';
import { tsFiles } from '../../support/source-files.js';

/**
 * Each package's manifest names every workspace package it imports, so npm links it and lerna
 * builds it first: its sources' imports under `dependencies`, its tests' and benchmarks' under
 * `devDependencies` (its tests: those of `test/`, and those beside its code — a `<name>.test.ts`
 * under `src/`, an `e2e/` folder there — which its build leaves out). The one exception is the
 * test kit's own dependencies: a lib that @mgw/testing (or the simulator) is built from reaches
 * the kit through the workspace, because listing it would close a cycle in lerna's build order (it
 * then refuses to build).
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PACKAGES = Object.keys(MAY_IMPORT);
const nameOf = (dir: string) => `@mgw/${dir.split('/')[1]}`;

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
const manifest = (dir: string) =>
  JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as Manifest;
const workspaceDeps = (deps: Record<string, string> = {}) =>
  Object.keys(deps).filter((d) => d.startsWith('@mgw/'));
/** A test beside the code under `src/`: a `<name>.test.ts`, or a file of an `e2e/` folder. */
const besideTheCode = (file: string) => /\.test\.ts$/.test(file) || /[\\/]e2e[\\/]/.test(file);

/** The workspace packages the files import (static, dynamic and type imports), as `@mgw/<name>`. */
function importedPackages(files: string[], self: string): Set<string> {
  const found = new Set<string>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      const m = /^(@mgw\/[a-z-]+)(\/|$)/.exec(fileName);
      if (m && m[1] !== self) found.add(m[1]!);
    }
  }
  return found;
}

/** Every workspace package `name` is built from (its dependencies, transitively). */
function buildClosure(name: string): Set<string> {
  const seen = new Set<string>();
  const visit = (n: string) => {
    const dir = PACKAGES.find((d) => nameOf(d) === n);
    if (!dir) return;
    for (const dep of workspaceDeps(manifest(dir).dependencies))
      if (!seen.has(dep)) (seen.add(dep), visit(dep));
  };
  visit(name);
  return seen;
}

describe('package manifests (against the imports and the lint map)', () => {
  it('When eslint.config.js maps the packages, then every workspace package is in the map', () => {
    const onDisk = ['libs', 'services'].flatMap((top) =>
      readdirSync(join(ROOT, top)).map((d) => `${top}/${d}`),
    );
    expect(
      onDisk.filter((d) => statSync(join(ROOT, d, 'package.json'), { throwIfNoEntry: false })).sort(),
    ).to.deep.equal([...PACKAGES].sort());
  });

  for (const dir of PACKAGES) {
    const self = nameOf(dir);

    it(`When ${dir}'s sources import a workspace package, then its dependencies list it, and nothing the lint forbids`, () => {
      const m = manifest(dir);
      expect(m.name).to.equal(self);
      const sources = tsFiles(join(ROOT, dir, 'src')).filter((f) => !besideTheCode(f));
      const used = importedPackages(sources, self);
      const listed = new Set(workspaceDeps(m.dependencies));
      expect(
        [...used].filter((p) => !listed.has(p)),
        'imported but not in dependencies',
      ).to.deep.equal([]);
      const allowed = MAY_IMPORT[dir]!.map((n) => `@mgw/${n}`);
      expect(
        [...listed].filter((p) => !allowed.includes(p)),
        'listed against the lint map',
      ).to.deep.equal([]);
      expect(
        [...listed].filter((p) => !used.has(p)),
        'listed but no source imports it',
      ).to.deep.equal([]);
    });

    it(`When ${dir}'s tests or benchmarks import a workspace package, then its manifest lists it (bar the test kit's own cycle)`, () => {
      const m = manifest(dir);
      const used = importedPackages(
        [
          ...tsFiles(join(ROOT, dir, 'test')),
          ...tsFiles(join(ROOT, dir, 'bench')),
          ...tsFiles(join(ROOT, dir, 'src')).filter(besideTheCode),
        ],
        self,
      );
      const listed = new Set([...workspaceDeps(m.dependencies), ...workspaceDeps(m.devDependencies)]);
      const cyclic = (p: string) => buildClosure(p).has(self);
      expect(
        [...used].filter((p) => !listed.has(p) && !cyclic(p)),
        'imported but not listed',
      ).to.deep.equal([]);
      expect(
        workspaceDeps(m.devDependencies).filter(cyclic),
        'a devDependency built from this package: lerna would refuse the cycle',
      ).to.deep.equal([]);
    });
  }
});

/**
 * Dependencies whose internals the code relies on (BullMQ: its job packing and add-job script, and
 * patched by patches/;
 * Baileys and libsignal: patched by patches/) are pinned to one exact version in every manifest,
 * so an `npm install` can never bring a release those internals were not checked against.
 */
const PINNED = ['bullmq', '@whiskeysockets/baileys'];

describe('exact pins (dependencies whose internals the code relies on)', () => {
  for (const dep of PINNED) {
    it(`When a manifest lists ${dep}, then it names one exact version, the same everywhere`, () => {
      const specs = ['.', ...PACKAGES].flatMap((dir) => {
        const m = manifest(dir);
        const spec = m.dependencies?.[dep] ?? m.devDependencies?.[dep];
        return spec === undefined ? [] : [{ dir, spec }];
      });
      expect(specs, `no manifest lists ${dep}`).to.not.be.empty;
      expect(
        specs.filter(({ spec }) => !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)),
        'a range, not an exact version',
      ).to.deep.equal([]);
      expect(new Set(specs.map((s) => s.spec)).size, 'different versions').to.equal(1);
    });
  }
});
