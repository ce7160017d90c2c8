import { Stack, type StackOptions } from './stack.js';
import { noteStackTime } from './stack-timing.js';
import { reportFailedTest } from './failure-report.js';

/**
 * Mocha hooks for a suite that runs against one whole stack: started before the suite, stopped
 * after it, and the last log lines of every process printed when a test fails.
 * Returns a getter, since the stack exists only once `before` ran.
 */
export function useStack(opts: StackOptions = {}, logLines = 60): () => Stack {
  let stack: Stack | undefined;
  before(async () => {
    const startedAt = Date.now();
    stack = await Stack.start(opts);
    noteStackTime(startedAt);
  });
  after(async () => {
    const startedAt = Date.now();
    await stack?.stop();
    noteStackTime(startedAt);
  });
  afterEach(function () {
    reportFailedTest(this.currentTest, stack, logLines);
  });
  return () => {
    if (!stack) throw new Error('the stack is not started yet (use it inside a test or hook)');
    return stack;
  };
}
