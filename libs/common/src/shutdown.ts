import type { Logger } from './logger.js';
import { serializeError } from './logger.js';

export interface ShutdownStep {
  name: string;
  run: () => Promise<unknown> | unknown;
}

/**
 * On SIGTERM/SIGINT run the steps in order (stop intake first, close storage last), then exit 0.
 * If the steps overrun `timeoutMs` the process exits 1 so an orchestrator does not wait forever.
 * An exception or a rejection that escaped every handler (a bug) is logged as a JSON line and
 * takes the same steps, then exits 1: the process's state is unknown from then on, and without
 * this Node would print a bare stack trace and stop at once (leases held until they expire).
 * Returns the function so tests and supervisors can trigger the same path.
 */
export function installShutdown(
  logger: Logger,
  steps: ShutdownStep[],
  timeoutMs: number,
): () => Promise<void> {
  let running: Promise<void> | undefined;
  const shutdown = (signal = 'manual'): Promise<void> => {
    if (running) return running;
    logger.info('shutting down', { signal });
    const timer = setTimeout(() => {
      logger.error('shutdown timed out; exiting', { timeoutMs });
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    running = (async () => {
      for (const step of steps) {
        try {
          await step.run();
        } catch (err) {
          logger.warn('shutdown step failed', { step: step.name, err: serializeError(err) });
        }
      }
      clearTimeout(timer);
      logger.info('shutdown complete');
    })();
    return running;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void shutdown(signal).then(() => process.exit(0));
    });
  }
  const crash = (what: string) => (err: unknown) => {
    logger.error(what, { err: serializeError(err) });
    void shutdown(what).finally(() => process.exit(1));
  };
  process.once('uncaughtException', crash('uncaught exception'));
  process.once('unhandledRejection', crash('unhandled rejection'));
  return () => shutdown();
}
