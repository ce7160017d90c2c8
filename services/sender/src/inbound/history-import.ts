import type { Agent } from 'node:http';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import type { ContactIdentity, Metrics } from '@mgw/contracts';
import {
  HistoryTooLargeError,
  readHistory,
  readHistorySalt,
  type DeviceSocket,
  type FirstContacts,
  type HistoryNotice,
} from '@mgw/messenger';
import { readAccountSettings, type Encryption, type HistoryStore } from '@mgw/store';

export interface HistoryImportDeps {
  deviceId: string;
  redis: RedisClient;
  encryption: Encryption;
  history: Pick<HistoryStore, 'record'>;
  /** WhatsApp's media CDN through the guarded outbound client (`via`: the device's proxy). */
  fetchBytes: (url: string, via?: Agent) => Promise<Buffer>;
  proxyAgent: () => Agent | undefined;
  /** A sandbox's media host (files named by `directPath` alone are fetched there); else the CDN. */
  mediaOrigin?: string;
  limits: { maxMessages: number; maxBytes: number };
  keepIdentities: (learnt: ContactIdentity[]) => void;
  /** The device's NCT salt, which a chunk may carry (whatsmeow 82d579d5: first-contact.ts). */
  salts: Pick<FirstContacts, 'hasSalt' | 'rememberSalt'>;
  metrics: Metrics;
  logger: Logger;
}

/**
 * WhatsApp's history sync, kept when the device's `historySync` setting is on (off by default):
 * each chunk the account's phone sends is fetched through the guarded client, read within
 * HISTORY_SYNC_MAX_BYTES, and its newest messages (at most HISTORY_SYNC_MAX_MESSAGES per device,
 * over every chunk) recorded in their chats (history-store.ts). Chunks are read one after the
 * other, so one device holds at most one in memory. A chunk that fails is logged and counted;
 * nothing else depends on it.
 *
 * Whatever the setting, a chunk may carry the account's NCT salt (field 19), which first contacts
 * need (first-contact.ts in @mgw/messenger): a device that keeps no history still fetches its
 * chunks, for the salt only, until it has one.
 */
export function wireHistoryImport(conn: Pick<DeviceSocket, 'on'>, deps: HistoryImportDeps): void {
  let queue = Promise.resolve();
  conn.on('history', (notices) => {
    queue = queue
      .then(() => importNotices(deps, notices))
      .catch((err: unknown) => {
        deps.logger.warn('history sync not kept', { err: serializeError(err) });
      });
  });
}

async function importNotices(deps: HistoryImportDeps, notices: HistoryNotice[]): Promise<void> {
  const { metrics, logger, deviceId } = deps;
  let wanted: boolean;
  try {
    wanted = (await readAccountSettings(deps.redis, deps.encryption, deviceId)).historySync;
  } catch (err) {
    metrics.historyChunks.inc({ outcome: 'failed' }, notices.length);
    logger.warn('history sync not kept: settings unread', { err: serializeError(err) });
    return;
  }
  if (!wanted) {
    metrics.historyChunks.inc({ outcome: 'declined' }, notices.length);
    for (const notice of notices) if (!(await takeSaltOnly(deps, notice))) break;
    return;
  }
  for (const notice of notices) await importOne(deps, notice);
}

/** Reads a declined chunk for its NCT salt while the device has none; false once it has one. */
async function takeSaltOnly(deps: HistoryImportDeps, notice: HistoryNotice): Promise<boolean> {
  try {
    if (await deps.salts.hasSalt()) return false;
    const via = deps.proxyAgent();
    const salt = await readHistorySalt(
      notice,
      (url) => deps.fetchBytes(url, via),
      deps.limits,
      deps.mediaOrigin,
    );
    return !(salt && (await deps.salts.rememberSalt(salt, 'history_sync')));
  } catch (err) {
    deps.logger.warn('history sync chunk not read for its NCT salt', {
      notice: notice.id,
      err: serializeError(err),
    });
    return true;
  }
}

async function importOne(deps: HistoryImportDeps, notice: HistoryNotice): Promise<void> {
  const { metrics, logger } = deps;
  try {
    const via = deps.proxyAgent();
    const chunk = await readHistory(
      notice,
      (url) => deps.fetchBytes(url, via),
      deps.limits,
      deps.mediaOrigin,
    );
    if (chunk.identities.length) deps.keepIdentities(chunk.identities);
    if (chunk.nctSalt)
      await deps.salts
        .rememberSalt(chunk.nctSalt, 'history_sync')
        .catch((err: unknown) => logger.warn('NCT salt not kept', { err: serializeError(err) }));
    // Newest first: past the device's bound, the older ones are left out.
    const outcome = await deps.history.record(deps.deviceId, [...chunk.messages].reverse());
    metrics.historyChunks.inc({ outcome: 'read' });
    metrics.historyMessages.inc({ outcome: 'recorded' }, outcome.recorded);
    metrics.historyMessages.inc({ outcome: 'seen' }, outcome.seen);
    metrics.historyMessages.inc({ outcome: 'refused' }, outcome.refused + chunk.skipped);
    logger.info('history sync chunk kept', {
      syncType: chunk.syncType,
      chunkOrder: chunk.chunkOrder,
      progress: chunk.progress,
      conversations: chunk.conversations,
      ...outcome,
      refused: outcome.refused + chunk.skipped,
    });
  } catch (err) {
    const tooLarge = err instanceof HistoryTooLargeError;
    metrics.historyChunks.inc({ outcome: tooLarge ? 'too_large' : 'failed' });
    logger.warn('history sync chunk not kept', { notice: notice.id, err: serializeError(err) });
  }
}
