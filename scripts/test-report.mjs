#!/usr/bin/env node
// Where a test run's time went, from the file MGW_TEST_TIMINGS named (mocha-fixtures.ts writes a
// line per spec file: `<ms>\t<file>\t<stack ms>\t<started>\t<stacks>\t<browsers>`): the 20 slowest
// files, then the totals — how many files, their summed wall time, and how many whole stacks and
// browsers the run started (what most of a run costs). `.ci/run` prints it after each pass.
//
//   node scripts/test-report.mjs <timings file> [how many slowest, default 20]
import { readFileSync } from 'node:fs';

const [file, many = '20'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/test-report.mjs <timings file> [how many slowest]');
  process.exit(2);
}
let text = '';
try {
  text = readFileSync(file, 'utf8');
} catch (err) {
  console.error(`no timings at ${file}: ${err.message}`);
  process.exit(1);
}
const rows = text
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const [ms, name, stackMs, , stacks, browsers] = line.split('\t');
    return {
      ms: Number(ms),
      name,
      stackMs: Number(stackMs) || 0,
      stacks: Number(stacks) || 0,
      browsers: Number(browsers) || 0,
    };
  });
const sec = (ms) => `${(ms / 1000).toFixed(1)} s`;
const sum = (key) => rows.reduce((n, r) => n + r[key], 0);

console.log(
  `the ${Math.min(Number(many), rows.length)} slowest test files (wall time; of it, starting and stopping stacks; stacks and browsers started):`,
);
for (const r of [...rows].sort((a, b) => b.ms - a.ms).slice(0, Number(many))) {
  console.log(
    `  ${sec(r.ms).padStart(9)}  ${sec(r.stackMs).padStart(8)}  ${String(r.stacks).padStart(3)}  ${String(r.browsers).padStart(3)}  ${r.name}`,
  );
}
console.log(
  `${rows.length} files, ${sec(sum('ms'))} of file time (${sec(sum('stackMs'))} starting and stopping stacks); ` +
    `${sum('stacks')} stacks and ${sum('browsers')} browsers started`,
);
