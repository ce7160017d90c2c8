import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { clockBounds, FACTOR, UNMARKED_FLOOR_MS } from '../support/clock-bounds.js';
import { filesUnder } from '../support/source-files.js';

/**
 * No clock in an assertion that load can move (issue 80): CI runs four whole stacks on two cores,
 * and a test that bounds a duration close to what it takes alone fails there though nothing is
 * wrong. An upper bound on a measured duration must be at least ten times the duration on a quiet
 * machine, and say so, so that the next reader can judge it: `// quiet: 40 ms` on the line (or
 * just above it, or on the constant the bound is). Better still is no clock at all: wait for the
 * event the test means (`waitFor` of @mgw/testing, with a bound of 10 x its quiet time), or prove
 * an order (a marker sent after), and move a speed that matters to a benchmark (`npm run bench`).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const HOW_TO_FIX =
  `an upper bound on a measured duration must be at least ${FACTOR} x its quiet time, stated in a ` +
  'comment on the line or just above it, e.g. `// quiet: 40 ms` (in the unit of the bound; run the ' +
  'test alone to measure it). Better: wait for the event itself (waitFor from @mgw/testing, bounded ' +
  `at ${FACTOR} x its quiet time), prove an order instead of a time, or move a speed that matters to ` +
  'a benchmark under bench/ (npm run bench).';

/** What the scan says of a one-file source: the problems, as `line: problem`. */
const problems = (source: string) =>
  clockBounds(source)
    .filter((b) => b.problem)
    .map((b) => `${b.line}: ${b.problem}`);

describe('lint: no clock bound in a test that load can break', () => {
  it('When a test bounds a measured duration without a stated quiet time, then it is named with its line', () => {
    const src = [
      "it('x', async () => {",
      '  const t0 = Date.now();',
      '  await work();',
      '  expect(Date.now() - t0).to.be.below(1000);',
      "  expect(res.answeredMs, 'answered').to.be.lessThan(500);",
      '  expect(took).to.be.within(400, 2000);',
      '  expect(performance.now() - started).to.be.at.most(300);',
      '});',
    ].join('\n');
    expect(problems(src)).to.deep.equal([
      '4: no quiet-time marker',
      '5: no quiet-time marker',
      '6: no quiet-time marker',
      '7: no quiet-time marker',
    ]);
  });

  it('When the bound is ten times the stated quiet time or more, then it passes; under that it fails', () => {
    expect(problems('expect(Date.now() - t0).to.be.below(1000); // quiet: 100 ms')).to.deep.equal([]);
    expect(problems('expect(Date.now() - t0).to.be.below(1000); // quiet: 101 ms')).to.deep.equal([
      '1: bound 1000 is under 10 x the quiet 101',
    ]);
    // The upper end of `within` is the bound; its lower end proves a wait happened and is free.
    expect(problems('expect(closedMs).to.be.within(900, 5_000); // quiet: 1_000 ms')).to.deep.equal([
      '1: bound 5000 is under 10 x the quiet 1000',
    ]);
    // On the line above, and across a statement prettier wrapped.
    const wrapped = [
      '// The deadline closed it, not the client: quiet: 1040 ms',
      "expect(res.closedMs, 'closed after the deadline').to.be.within(",
      '  900,',
      '  11_000,',
      ');',
    ].join('\n');
    expect(problems(wrapped)).to.deep.equal([]);
  });

  it('When the bound is a constant of the file, then its value is checked, and a marker on the constant counts', () => {
    const src = [
      'const ANSWER_WITHIN_MS = 36_000; // quiet: 3600 ms',
      'const GAP = 2000;',
      "expect(a.ms, 'answer').to.be.below(ANSWER_WITHIN_MS);",
      'expect(Date.now() - last).to.be.within(GAP - 30, GAP + 450);',
    ].join('\n');
    expect(problems(src)).to.deep.equal(['4: no quiet-time marker']);
  });

  it('When a quiet time is given in seconds for a time in ms, then it is converted; for a time in seconds it is read as is', () => {
    expect(problems('expect(Date.now() - t0).to.be.below(10_000); // quiet: 2 s')).to.deep.equal([
      '1: bound 10000 is under 10 x the quiet 2000',
    ]);
    expect(problems('expect(Date.now() - t0).to.be.below(20_000); // quiet: 2 s')).to.deep.equal([]);
    expect(problems("expect(lag, 'lag').to.be.below(2); // quiet: 0.1 s")).to.deep.equal([]);
  });

  it('When an assertion is no upper bound on a measured duration, then it is left alone', () => {
    const src = [
      // Lower bounds: load only makes them truer.
      'expect(Date.now() - t0).to.be.at.least(580);',
      'expect(res.answeredMs).to.be.greaterThan(2500);',
      // Time left (shrinks with load), counts, sizes, other measures.
      'expect(Date.parse(expiresAt) - Date.now()).to.be.lessThan(1000);',
      'expect(inbox.length, phone).to.be.at.most(1);',
      'expect(after - atCancel).to.be.at.most(1);',
      "expect(fit.table, 'px').to.be.at.most(fit.box);",
      // A bound the file does not spell out as a number (another measurement).
      'expect(Date.now() - t1).to.be.below(delayedMs);',
      // Negated, and a bound of ten minutes or more (a TTL, an age): no quiet time is that long.
      'expect(Date.now() - t0).to.not.be.below(100);',
      'expect(Date.now() - Date.parse(made)).to.be.within(0, 3_600_000);',
    ].join('\n');
    expect(problems(src)).to.deep.equal([]);
    expect(UNMARKED_FLOOR_MS).to.equal(600_000);
  });

  it("When the repository's test files are scanned, then every upper bound on a measured duration is at least ten times its stated quiet time", function () {
    this.timeout(60_000);
    const files = ['libs', 'services', 'test'].flatMap((dir) =>
      filesUnder(join(ROOT, dir), (p) => p.endsWith('.test.ts')),
    );
    expect(files.length, 'test files found').to.be.greaterThan(300);
    const found = files.flatMap((file) =>
      clockBounds(readFileSync(file, 'utf8'), file)
        .filter((b) => b.problem)
        .map((b) => `${relative(ROOT, file).split('\\').join('/')}:${b.line}: ${b.problem}: ${b.text}`),
    );
    expect(found, `${found.join('\n')}\n\nHow to fix: ${HOW_TO_FIX}\n`).to.deep.equal([]);
  });
});
