import type { SocketConfig } from '@whiskeysockets/baileys';
import { serializeError, type Logger } from '@mgw/common';

type ILogger = SocketConfig['logger'];

/**
 * Baileys logs through pino's interface; this bridges it to our winston logger at a quiet level
 * (its info and warn are our debug, its error our warn, its debug/trace are dropped). Only scalar fields of its log
 * objects are kept: nested objects may hold message content or key material.
 */
export function baileysLogger(logger: Logger, bindings: Record<string, unknown> = {}): ILogger {
  const fields = (obj: unknown): Record<string, unknown> => {
    if (obj instanceof Error) return { err: serializeError(obj) };
    if (!obj || typeof obj !== 'object') return {};
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) {
      if (v instanceof Error) out[k] = serializeError(v);
      else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
    }
    return out;
  };
  const emit = (level: 'debug' | 'warn', obj: unknown, msg?: string) => {
    // Below our level: dropped here, before its fields are copied and winston's streams run.
    if (!logger.isLevelEnabled(level)) return;
    const message = msg ?? (typeof obj === 'string' ? obj : 'baileys');
    logger.log(level, message, { ...bindings, ...fields(obj), source: 'baileys' });
  };
  return {
    // Baileys does expensive extra logging when its level is trace/debug; never let it.
    level: 'info',
    child: (obj) => baileysLogger(logger, { ...bindings, ...fields(obj) }),
    trace: () => undefined,
    debug: () => undefined,
    // Baileys warns and errors on routine events (history sync off, the 515 restart after a
    // link): one level quieter, our own logs say what matters.
    info: (obj, msg) => emit('debug', obj, msg),
    warn: (obj, msg) => emit('debug', obj, msg),
    error: (obj, msg) => emit('warn', obj, msg),
  };
}
