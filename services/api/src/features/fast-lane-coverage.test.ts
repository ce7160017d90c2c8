import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

/**
 * "The fast lane covers every use case" (issue 69), kept true: every use-case file of a capability
 * (`features/<cap>/**\/*.ts` but its HTTP side — mount.ts, admin.ts, openapi.ts, bodies.ts —, an
 * index.ts, its tests, its test support — memory-*.ts doubles, *-fixture.ts setups,
 * test-support.ts — and its e2e/ folder) has its own test beside it, named after it
 * (`create-label.ts` ↔ `create-label.test.ts`), which imports it for its values; the fast lane runs
 * those by their folder (.mocharc.fast.json) with an in-memory holder (holder/memory-holder.ts) and
 * in-memory stores — no Redis, no process. A use case without such a test fails here, naming it,
 * and so does a test of a capability named after no use-case file (a grouped test: split it, one
 * per file).
 */
const FEATURES = path.dirname(fileURLToPath(import.meta.url));
/**
 * A capability's HTTP side — its rows and handlers, its admin rows, its OpenAPI operations, the body
 * bounds its rows share (as eslint.config.js USE_CASES has it) — and its public surface.
 */
const NOT_USE_CASES = new Set(['mount.ts', 'admin.ts', 'openapi.ts', 'bodies.ts', 'index.ts']);

/** Test support beside the use cases (doubles, shared setups), left out of the build: no use case. */
export function isTestSupport(file: string): boolean {
  const name = path.basename(file);
  return name === 'test-support.ts' || name.startsWith('memory-') || name.endsWith('-fixture.ts');
}

/** Whether a file of a capability (a path from its folder, e2e/ left out) is a use-case file. */
export function isUseCase(file: string): boolean {
  return !file.endsWith('.test.ts') && !NOT_USE_CASES.has(path.basename(file)) && !isTestSupport(file);
}

/** The test a use-case file `x.ts` has beside it: `x.test.ts`. */
export const testOf = (file: string): string => file.replace(/\.ts$/, '.test.ts');

/**
 * Use-case files whose every step is a script of libs/store (Lua): nothing of them runs without
 * Redis, so their tests are the full suite's (named here). Kept short and true: an entry that is
 * gone, or whose file has its own test beside it now (importing it), fails the check.
 */
const SCRIPT_ONLY: Record<string, string> = {
  'events/retry-now.ts':
    'WebhookReport.retryNow (lua/webhook-retry-now-3.lua): features/events/e2e/event-outlets.test.ts',
};

/** The .ts files under `dir` (paths from `dir`), e2e/ left out. */
function filesUnder(dir: string, rel = ''): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((entry) => {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return entry.name === 'e2e' ? [] : filesUnder(dir, child);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [child] : [];
  });
}

/**
 * The files a test imports for their values (an `import type` alone runs nothing of them),
 * relative ones only, as paths from `dir`.
 */
export function valueImports(source: string, fromFile: string): string[] {
  const out: string[] = [];
  const statements = source.matchAll(/^(?:import|export)\s+([^;]*?)\s+from\s+['"](\.{1,2}\/[^'"]+)['"]/gms);
  for (const [, what, spec] of statements) {
    if (/^type\s/.test(what!)) continue;
    const names = /^\{([^}]*)\}$/s.exec(what!.trim());
    // `import { type A, type B }`: types only too.
    if (names && names[1]!.split(',').every((n) => !n.trim() || /^type\s/.test(n.trim()))) continue;
    out.push(path.join(path.dirname(fromFile), spec!.replace(/\.js$/, '.ts')));
  }
  for (const [, spec] of source.matchAll(/^import\s+['"](\.{1,2}\/[^'"]+)['"]/gm))
    out.push(path.join(path.dirname(fromFile), spec!.replace(/\.js$/, '.ts')));
  return out;
}

/**
 * Each capability's use-case files without their own test beside them (`x.ts`: no `x.test.ts`, or
 * one that does not import it), and its tests named after no use-case file; `scriptOnlyButTested`:
 * the SCRIPT_ONLY entries whose file has its own test now.
 */
function untested(): { missing: Record<string, string[]>; unmatched: Record<string, string[]> } {
  const missing: Record<string, string[]> = {};
  const unmatched: Record<string, string[]> = {};
  for (const cap of readdirSync(FEATURES, { withFileTypes: true })) {
    if (!cap.isDirectory()) continue;
    const dir = path.join(FEATURES, cap.name);
    const files = filesUnder(dir);
    const tests = new Set(files.filter((f) => f.endsWith('.test.ts')));
    const useCases = files.filter(isUseCase);
    const tested = (f: string) =>
      tests.has(testOf(f)) &&
      valueImports(readFileSync(path.join(dir, testOf(f)), 'utf8'), testOf(f)).includes(f);
    const why = (f: string) =>
      tests.has(testOf(f)) ? `${f} (${testOf(f)} does not import it)` : `${f} (no ${testOf(f)})`;
    const lacking = useCases.filter((f) => !tested(f) && !SCRIPT_ONLY[`${cap.name}/${f}`]).map(why);
    if (lacking.length) missing[cap.name] = lacking;
    for (const f of useCases.filter((f) => SCRIPT_ONLY[`${cap.name}/${f}`] && tested(f)))
      (missing.scriptOnlyButTested ??= []).push(`${cap.name}/${f}`);
    const named = new Set(useCases.map(testOf));
    const stray = [...tests].filter((t) => !named.has(t));
    if (stray.length) unmatched[cap.name] = stray;
  }
  return { missing, unmatched };
}

describe('features: the fast lane covers every use case (its own test beside each use-case file)', () => {
  it('When a test imports a file, then its value imports count and its type-only ones do not', () => {
    const source = [
      "import { expect } from 'chai';",
      "import { probe } from '../probe/probe-thing.js';",
      "import type { LabelDeps } from './device-labels.js';",
      "import { type ChatLabel } from './label-chat.js';",
      "import {\n  listLabels,\n  type X,\n} from './list-labels.js';",
      "import './side-effect.js';",
    ].join('\n');
    expect(valueImports(source, 'labels.test.ts')).to.deep.equal([
      '../probe/probe-thing.ts',
      'list-labels.ts',
      'side-effect.ts',
    ]);
  });

  it('When the files of a capability are sorted, then its HTTP side, index, tests and test support are no use case', () => {
    for (const file of ['mount.ts', 'admin.ts', 'openapi.ts', 'bodies.ts', 'index.ts', 'sub/index.ts'])
      expect(isUseCase(file), file).to.equal(false);
    for (const file of ['create-label.test.ts', 'memory-labels.ts', 'label-fixture.ts', 'test-support.ts'])
      expect(isUseCase(file), file).to.equal(false);
    for (const file of ['create-label.ts', 'device-labels.ts', 'fixture-store.ts', 'sub/read-thing.ts'])
      expect(isUseCase(file), file).to.equal(true);
    expect(testOf('create-label.ts')).to.equal('create-label.test.ts');
    expect(testOf('sub/read-thing.ts')).to.equal('sub/read-thing.test.ts');
  });

  it('When the capabilities are read, then every use-case file `x.ts` has `x.test.ts` beside it, importing it', () => {
    const caps = readdirSync(FEATURES, { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(caps.length, 'the capabilities are found').to.be.greaterThan(10);
    expect(untested().missing, 'use-case files without their own test beside them').to.deep.equal({});
  });

  it('When the tests of the capabilities are read, then each is named after a use-case file beside it (one test file per use-case file)', () => {
    expect(
      untested().unmatched,
      "tests named after no use-case file (move each case to its use case's test)",
    ).to.deep.equal({});
  });

  it('When a use case is listed as a script only (its test in the full suite), then its file is there', () => {
    for (const file of Object.keys(SCRIPT_ONLY))
      expect(existsSync(path.join(FEATURES, file)), `${file} (SCRIPT_ONLY: drop the entry)`).to.equal(true);
  });
});
