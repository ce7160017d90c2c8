import { Stack } from './stack.js';

/** Valgrind slows the lease renewals' thread as well: a lease that cannot lapse under it. */
export const UNDER_VALGRIND_ENV = { LEASE_TTL_MS: '120000', LEASE_RENEW_MS: '10000' };

/**
 * The stack of a bench that starts its own sender (profiled, or under valgrind): the built services,
 * the simulator as a process, no sender yet, pacing off (its gaps are timers, not work), logs at
 * `warn`; `env` adds to or overrides that.
 */
export function senderBenchStack(env: Record<string, string> = {}): Promise<Stack> {
  return Stack.start({
    built: true,
    simulatorProcess: true,
    senders: 0,
    env: { LOG_LEVEL: 'warn', SEND_MIN_GAP_MS: '0', SEND_GAP_JITTER_MS: '0', ...env },
  });
}
