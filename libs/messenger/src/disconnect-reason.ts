import { DisconnectReason } from '@whiskeysockets/baileys';

/** What the owner of a socket does after it closed with a given status code. */
export type CloseAction = 'restart' | 'reconnect' | 'logged-out' | 'replaced';

export interface CloseInfo {
  code: number | undefined;
  /** A bounded label for metrics and session records (restart_required, logged_out, …). */
  reason: string;
  action: CloseAction;
}

const LABELS: Record<number, string> = {
  [DisconnectReason.restartRequired]: 'restart_required',
  [DisconnectReason.loggedOut]: 'logged_out',
  [DisconnectReason.forbidden]: 'forbidden',
  [DisconnectReason.connectionReplaced]: 'replaced',
  [DisconnectReason.timedOut]: 'timed_out',
  [DisconnectReason.connectionClosed]: 'connection_closed',
  [DisconnectReason.badSession]: 'bad_session',
  [DisconnectReason.unavailableService]: 'unavailable',
  [DisconnectReason.multideviceMismatch]: 'multidevice_mismatch',
};

/** Classifies a close by the Boom status code Baileys puts on `lastDisconnect.error`. */
export function classifyClose(error: unknown): CloseInfo {
  const code = (error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;
  const reason = code === undefined ? 'closed' : (LABELS[code] ?? 'other');
  if (code === DisconnectReason.restartRequired) return { code, reason, action: 'restart' };
  if (code === DisconnectReason.loggedOut || code === DisconnectReason.forbidden) {
    return { code, reason, action: 'logged-out' };
  }
  if (code === DisconnectReason.connectionReplaced) return { code, reason, action: 'replaced' };
  return { code, reason, action: 'reconnect' };
}

/**
 * Exponential backoff with full jitter, capped: anywhere in [0, 1 s], [0, 2 s], [0, 4 s] … [0, 30 s]
 * (AWS's "full jitter": sockets that closed together do not come back together).
 */
export function reconnectDelayMs(attempt: number, baseMs = 1000, capMs = 30_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt));
  return Math.round(Math.random() * ceiling);
}
