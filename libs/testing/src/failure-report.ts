import type { Stack } from './stack.js';

/** How many warn/error lines of each process a failed test's message carries. */
const CARRIED_LINES = 8;
const LINE_CHARS = 400;

/**
 * After a failed test of a stack: every process's last `lines` log lines to stderr (where a
 * developer's terminal shows them), and each process's last warnings and errors appended to the
 * test's error message, so mocha's closing summary — often all a CI excerpt keeps — carries the
 * evidence too.
 */
export function reportFailedTest(
  test: Mocha.Test | undefined,
  stack: Pick<Stack, 'processes' | 'dumpLogs'> | undefined,
  lines = 60,
): void {
  if (test?.state !== 'failed' || !stack) return;
  console.error(stack.dumpLogs(lines));
  const err = test.err;
  if (!err) return;
  const carried = stack.processes
    .map((p) => {
      const bad = p.output.filter((l) => /"level":"(warn|error)"/.test(l)).slice(-CARRIED_LINES);
      return bad.length ? `--- ${p.name}\n${bad.map((l) => l.slice(0, LINE_CHARS)).join('\n')}` : '';
    })
    .filter(Boolean);
  if (!carried.length) return;
  const before = err.message;
  err.message = `${before}\n  the stack's last warnings and errors:\n${carried.join('\n')}`;
  if (err.stack?.includes(before)) err.stack = err.stack.replace(before, err.message);
}
