import type { Logger } from '@mgw/common';

/**
 * libsignal (used by Baileys) writes to the global console: "Closing session:" with the whole
 * session record — ratchet keys included — on every session replacement, and a few warnings.
 * Keys must never reach a log, so in a gateway process these lines go to the logger at debug,
 * as a bare message without the objects. Everything else on the console is left alone.
 */
const LIBSIGNAL_PREFIXES = [
  'Closing session',
  'Closing open session',
  'Session already closed',
  'Decrypted message with closed session',
  'Migrating session to',
];

let target: Logger | undefined;

/** Routes libsignal's console lines to `logger` (the console is patched once per process). */
export function routeLibsignalConsole(logger: Logger): void {
  const patch = target === undefined;
  target = logger;
  if (!patch) return;
  for (const method of ['info', 'warn', 'log'] as const) {
    // eslint-disable-next-line no-console -- wrapping the console is the point here
    const original = console[method].bind(console);
    // eslint-disable-next-line no-console -- see above
    console[method] = (...args: unknown[]) => {
      const first = args[0];
      if (typeof first === 'string' && LIBSIGNAL_PREFIXES.some((p) => first.startsWith(p))) {
        target?.debug('libsignal', { event: first.replace(/:$/, '') });
        return;
      }
      original(...args);
    };
  }
}
