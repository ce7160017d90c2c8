import type { MarkReadResult, ReadKey, ReadOutcome } from '@mgw/contracts';
import type { ChatIndex, InboundStore } from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import { askHolder, type DeviceHolder, type HolderFailure } from '../holder/index.js';

/** How long the API waits for the device's holder to send the read receipts. */
export const READ_RECEIPTS_WAIT_SECONDS = 15;

/**
 * What marking read needs: the chat index (the unread sets), the inbound store (each message's
 * WhatsApp key), the metrics, and the device's holder (only it has the socket the receipts go on),
 * asked with the session check.
 */
export type ReadDeps = Pick<ApiServices, 'metrics'> & {
  chats: Pick<ChatIndex, 'get' | 'unread' | 'markRead'>;
  inbound: Pick<InboundStore, 'readTarget'>;
  holder: DeviceHolder;
};

/** How an ask of the holder failed (the receipts did not go). */
export type { HolderFailure };

/**
 * Sends read receipts for `ids` (unread inbound messages of the chat) and `extra` (keys of
 * messages read already) through the holder, then takes `ids` out of the chat's unread set.
 * Nothing is marked when the receipts did not go.
 */
export async function markRead(
  deps: ReadDeps,
  deviceId: string,
  chat: string,
  ids: string[],
  extra: ReadKey[] = [],
): Promise<{ ok: true; data: ReadOutcome } | HolderFailure> {
  const targets = await Promise.all(ids.map((id) => deps.inbound.readTarget(deviceId, id)));
  const readKeys = [...targets.flatMap((t) => (t ? [t.key] : [])), ...extra];
  let receiptsShown = true;
  if (readKeys.length) {
    const asked = await askHolder<MarkReadResult | undefined>(
      deps.holder,
      deviceId,
      { type: 'mark-read', keys: readKeys },
      { wait: READ_RECEIPTS_WAIT_SECONDS, okWithoutData: true },
    );
    if (!asked.ok) return asked;
    // A reply that does not say whether the receipts were shown counts as shown.
    receiptsShown = asked.data?.receiptsShown ?? true;
  }
  const { marked, unread } = await deps.chats.markRead(deviceId, chat, ids);
  deps.metrics.readReceipts.inc({ how: 'request', shown: receiptsShown ? 'shown' : 'self' }, marked);
  return { ok: true, data: { marked, receiptsShown, unreadCount: unread } };
}
