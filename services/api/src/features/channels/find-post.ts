import type { MessageRecord } from '@mgw/contracts';
import type { MessageStore } from '@mgw/store';

/**
 * A post sent through this device to this channel: its message record, or `post_not_found` for
 * any other id (unknown, inbound, another channel's or another device's). A post is named under
 * its channel's id, never its invite: an invite would need WhatsApp to say whose it is, and a
 * scheduled post must be found while the device is offline.
 */
export async function findPost(
  s: { messages: Pick<MessageStore, 'get'> },
  deviceId: string,
  channelId: string,
  messageId: string,
): Promise<{ ok: true; data: MessageRecord } | { ok: false; reason: 'post_not_found' }> {
  const record = await s.messages.get(deviceId, messageId);
  if (!record || record.direction === 'inbound' || record.to !== channelId)
    return { ok: false, reason: 'post_not_found' };
  return { ok: true, data: record };
}
