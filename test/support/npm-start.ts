/** What the npm start tests (test/e2e/npm-start*.test.ts) share. */

/** The line npm start prints once every service answers /readyz. */
export const READY_LINE = /^\[start\] ready: .*$/m;
