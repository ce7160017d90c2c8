import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import { sendReadReceipts, type DeviceSocket, type InboundMessage } from '@mgw/messenger';
import { readAccountSettings, type ChatIndex, type Encryption } from '@mgw/store';

export interface AutoReadDeps {
  redis: RedisClient;
  encryption: Encryption;
  deviceId: string;
  conn: Pick<DeviceSocket, 'socket'>;
  chats: ChatIndex;
  metrics: Metrics;
  logger: Logger;
}

/** A recorded message and the id the store gave it. */
export type RecordedInbound = InboundMessage & { messageId: string };

/**
 * The device's `autoMarkRead` setting (off by default): every message recorded now is marked read
 * as it arrives — read receipts as the account's privacy allows, and out of its chat's unread
 * count. Messages recorded before (a redelivery) are not read again.
 */
export async function autoRead(deps: AutoReadDeps, recorded: readonly RecordedInbound[]): Promise<void> {
  const withKeys = recorded.filter((m) => m.waKey);
  if (!withKeys.length) return;
  const { redis, encryption, deviceId, chats, metrics, logger } = deps;
  try {
    if (!(await readAccountSettings(redis, encryption, deviceId)).autoMarkRead) return;
    const sock = deps.conn.socket;
    if (!sock) return;
    const shown = await sendReadReceipts(
      sock,
      withKeys.map((m) => ({ ...m.waKey!, id: m.platformMessageId })),
    );
    const byChat = new Map<string, string[]>();
    for (const m of withKeys) {
      const chat = m.chat?.id ?? m.from ?? m.contact.phone ?? m.contact.lid;
      if (chat) byChat.set(chat, [...(byChat.get(chat) ?? []), m.messageId]);
    }
    for (const [chat, ids] of byChat) await chats.markRead(deviceId, chat, ids);
    metrics.readReceipts.inc({ how: 'auto', shown: shown ? 'shown' : 'self' }, withKeys.length);
  } catch (err) {
    logger.warn('incoming messages not marked read', { err: serializeError(err) });
  }
}
