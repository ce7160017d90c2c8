/**
 * How long a spec file spent starting and stopping stacks (`useStack`, `useSharedStack`), for the
 * `MGW_TEST_TIMINGS` report of mocha-fixtures.ts: what a file's wall time owes to its stacks.
 */
let spent = 0;

/** Adds the time since `startedAt` (ms since the epoch) to the file's stack time. */
export function noteStackTime(startedAt: number): void {
  spent += Date.now() - startedAt;
}

/** The file's stack time so far, and a fresh count for the next file. */
export function takeStackTime(): number {
  const ms = spent;
  spent = 0;
  return ms;
}
