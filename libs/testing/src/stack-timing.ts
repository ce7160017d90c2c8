/**
 * What a spec file's wall time owes to its stacks, and how many stacks and browsers it started,
 * for the `MGW_TEST_TIMINGS` report of mocha-fixtures.ts (`scripts/test-report.mjs` sums them):
 * starting whole stacks and browsers is most of what the suite's time costs, so the report counts
 * them where they start (`Stack.start`, the dashboard's `launchChromium`), whoever asked.
 */
let spent = 0;
const started = { stacks: 0, browsers: 0 };

/** Adds the time since `startedAt` (ms since the epoch) to the file's stack time. */
export function noteStackTime(startedAt: number): void {
  spent += Date.now() - startedAt;
}

/**
 * `MGW_TEST_COUNT_ONLY=1` (with `MGW_TEST_TIMINGS`): a run that counts what the suites' hooks
 * would start — every test is skipped (mocha-fixtures.ts) and each stack start throws once counted
 * — to compare two trees' counts in minutes instead of two whole runs. A browser is launched still
 * (a second or two), so that a suite's hooks after it run and count their stack. Starts inside a
 * test's body are not counted that way.
 */
export const countOnly = process.env.MGW_TEST_COUNT_ONLY === '1';

/** Counts one stack or one browser started by the running file (a stack then throws, when counting only). */
export function noteStarted(what: 'stack' | 'browser'): void {
  if (what === 'stack') started.stacks++;
  else started.browsers++;
  if (countOnly && what === 'stack') throw new Error('MGW_TEST_COUNT_ONLY: a stack counted, not started');
}

/** The file's stack time and counts so far, and fresh ones for the next file. */
export function takeStackTime(): { ms: number; stacks: number; browsers: number } {
  const taken = { ms: spent, ...started };
  spent = 0;
  started.stacks = 0;
  started.browsers = 0;
  return taken;
}
