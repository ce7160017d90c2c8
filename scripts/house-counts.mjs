#!/usr/bin/env node
/**
 * Prints the counts issue 53 ("the house, fourth step") follows, read from the sources: copies of
 * the "ask the device's holder" code and its helpers, places the API's route list is written,
 * hand-rolled leases, API test files that start an API, files at the size cap. Each count says
 * what it matches, so a reader can check it with grep. Usage: `node scripts/house-counts.mjs`
 * (`--json` for the numbers alone).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIP = new Set(['node_modules', 'dist', '.git', '.data', '.node24', '.tmp', '.nx']);

function walk(dir, out = []) {
  for (const name of readdirSync(path.join(ROOT, dir))) {
    if (SKIP.has(name)) continue;
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel, out);
    else if (/\.(ts|tsx|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

const read = (file) => readFileSync(path.join(ROOT, file), 'utf8');
const matches = (files, re) => files.reduce((n, f) => n + (read(f).match(re)?.length ?? 0), 0);
const filesWith = (files, re) => files.filter((f) => re.test(read(f)));

const apiSrc = walk('services/api/src');
const serviceSrc = ['services', 'libs'].flatMap((d) => walk(d)).filter((f) => /\/src\//.test(f));
const apiTests = [...walk('services/api/test'), ...walk('services/api/src')].filter((f) =>
  f.endsWith('.test.ts'),
);
const featureFiles = apiSrc.filter((f) => f.includes('/features/') && !f.endsWith('.test.ts'));
const outsideHolder = apiSrc.filter((f) => !f.includes('/features/holder/'));
const leaseHome = /libs\/store\/src\/(leases|locks)\//;

const counts = [
  {
    name: "copies of the holder ask (a device command's `.ask(` outside features/holder/)",
    value: matches(outsideHolder, /(\)|\b\w+)\s*\.ask\(/g),
  },
  { name: '`noQuery` definitions', value: matches(apiSrc, /(const|function) noQuery\b/g) },
  {
    name: 'idempotent `change` wrappers written out (`const change = (req, res, run)`)',
    value: matches(apiSrc, /const change = \(req/g),
  },
  {
    name: 'wait constants of holder asks (`const …WAIT_SECONDS`, one per meaning)',
    value: matches(apiSrc, /const \w*WAIT_SECONDS\b/g),
  },
  { name: '`Unaddressed<C>` definitions', value: matches(apiSrc, /type Unaddressed</g) },
  {
    name: 'public API routes registered by hand (`app.<method>(v1(…))` outside http/route-table.ts)',
    value: matches(apiSrc, /app\.(get|post|put|patch|delete|head|all)\(\s*v1\(/g),
  },
  {
    name: "hand-written 405 tables of the public API ('[path, allow]' lists)",
    value: matches(
      apiSrc.filter((f) => !f.includes('/admin/')),
      /const allowed: \[string, string\]\[\]/g,
    ),
  },
  {
    name: 'OpenAPI paths written inline in openapi/document.ts',
    value: matches(['services/api/src/openapi/document.ts'], /\[`\$\{API_BASE\}/g),
  },
  {
    name: 'hand-rolled leases (SET … NX with an expiry, outside libs/store leases/locks)',
    value: serviceSrc
      .filter((f) => !leaseHome.test(f))
      .reduce((n, f) => n + (read(f).match(/\.set\([^)]*'(PX|EX)'[^)]*'NX'/g)?.length ?? 0), 0),
  },
  {
    name: 'interval-lock idioms outside libs/store (SET NX PX to run once per interval)',
    value: serviceSrc
      .filter((f) => !leaseHome.test(f) && !f.includes('/http/idempotency'))
      .reduce((n, f) => n + (read(f).match(/'NX',\s*'PX'|'PX',[^)]*'NX'/g)?.length ?? 0), 0),
  },
  {
    name: `API test files that start an API (startApi or a stack), of ${apiTests.length}`,
    value: filesWith(apiTests, /startApi\(|startStack\(|withStack\(/).length,
  },
  {
    name: `API test files that start any API, process or stack, of ${apiTests.length}`,
    value: filesWith(
      apiTests,
      /start(Admin)?Api(Process)?\(|startStack\(|withStack\(|use(Dashboard)?Stack\(|startService\(/,
    ).length,
  },
  {
    name: 'admin twin folders (services/api/src/admin/)',
    value: walk('services/api/src').filter((f) => f.startsWith('services/api/src/admin/')).length,
  },
  {
    name: 'OpenAPI operations keyed by a path string in features (`paths:`)',
    value: matches(featureFiles, /^\s+paths:/gm),
  },
  { name: '`new DeviceCommandClient(` in the API', value: matches(apiSrc, /new DeviceCommandClient\(/g) },
  {
    name: 'feature files that take the whole services bag (`: ApiServices`)',
    value: filesWith(featureFiles, /:\s*ApiServices\b/).length,
  },
  { name: 'capability folders under services/api/src/features/', value: countFeatures() },
  {
    name: 'source files at 480-500 lines (services, libs, scripts)',
    value: ['services', 'libs', 'scripts']
      .flatMap((d) => walk(d))
      .filter((f) => !f.includes('/test/') && read(f).split('\n').length >= 480).length,
  },
];

function countFeatures() {
  const dir = path.join(ROOT, 'services/api/src/features');
  try {
    return readdirSync(dir).filter((n) => statSync(path.join(dir, n)).isDirectory()).length;
  } catch {
    return 0;
  }
}

process.stdout.on('error', () => undefined); // a reader that stops early (head) is no failure
if (process.argv.includes('--json')) {
  process.stdout.write(
    `${JSON.stringify(Object.fromEntries(counts.map((c) => [c.name, c.value])), null, 2)}\n`,
  );
} else {
  const width = Math.max(...counts.map((c) => String(c.value).length));
  for (const c of counts) process.stdout.write(`${String(c.value).padStart(width)}  ${c.name}\n`);
}
