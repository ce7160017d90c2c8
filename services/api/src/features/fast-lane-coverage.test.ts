import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

/**
 * "The fast lane covers every use case" (issue 69), kept true: every use-case file of a capability
 * (`features/<cap>/*.ts` but its HTTP side — mount.ts, openapi.ts, admin.ts — an index.ts, its
 * tests and its e2e/ folder) is imported, for its values, by a test beside it: a
 * `features/<cap>/**\/*.test.ts` outside e2e/, which the fast lane runs by its folder
 * (.mocharc.fast.json) with an in-memory holder (holder/memory-holder.ts) and in-memory stores — no
 * Redis, no process. A new use case without such a test fails here, naming it.
 */
const FEATURES = path.dirname(fileURLToPath(import.meta.url));
const NOT_USE_CASES = new Set(['mount.ts', 'admin.ts', 'openapi.ts', 'index.ts']);

/**
 * Use-case files whose every step is a script of libs/store (Lua): nothing of them runs without
 * Redis, so their tests are the full suite's (named here). Kept short and true: an entry that is
 * gone, or whose file a test beside it now imports, fails the check.
 */
const SCRIPT_ONLY: Record<string, string> = {
  'events/retry-now.ts':
    'WebhookReport.retryNow (lua/webhook-retry-now-3.lua): services/api/test/admin/admin-webhooks.test.ts',
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

/** Each capability's use-case files that no test of its folder imports. */
function untested(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const cap of readdirSync(FEATURES, { withFileTypes: true })) {
    if (!cap.isDirectory()) continue;
    const dir = path.join(FEATURES, cap.name);
    const files = filesUnder(dir);
    const tests = files.filter((f) => f.endsWith('.test.ts'));
    const useCases = files.filter((f) => !f.endsWith('.test.ts') && !NOT_USE_CASES.has(path.basename(f)));
    const imported = new Set(tests.flatMap((t) => valueImports(readFileSync(path.join(dir, t), 'utf8'), t)));
    const missing = useCases.filter((f) => !imported.has(f) && !SCRIPT_ONLY[`${cap.name}/${f}`]);
    if (missing.length) out[cap.name] = missing;
    for (const f of useCases.filter((f) => SCRIPT_ONLY[`${cap.name}/${f}`] && imported.has(f)))
      (out.scriptOnlyButTested ??= []).push(`${cap.name}/${f}`);
  }
  return out;
}

describe('features: the fast lane covers every use case (a test beside each use-case file)', () => {
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

  it('When the capabilities are read, then every use-case file is imported by a test of its folder', () => {
    const caps = readdirSync(FEATURES, { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(caps.length, 'the capabilities are found').to.be.greaterThan(10);
    expect(untested(), 'use-case files without a test beside them').to.deep.equal({});
  });

  it('When a use case is listed as a script only (its test in the full suite), then its file is there', () => {
    for (const file of Object.keys(SCRIPT_ONLY))
      expect(existsSync(path.join(FEATURES, file)), `${file} (SCRIPT_ONLY: drop the entry)`).to.equal(true);
  });
});
