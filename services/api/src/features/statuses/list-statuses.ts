import {
  STATUS_LIMITS,
  type ContactIdentity,
  type StatusSummary,
  isLidAddress,
  phoneOfJid,
} from '@mgw/contracts';
import type { MessageStore, StatusStore } from '@mgw/store';

/** A viewer's JID as the API names contacts. */
const identityOf = (jid: string): ContactIdentity =>
  isLidAddress(jid) ? { lid: jid } : { phone: phoneOfJid(jid) ?? jid };

/**
 * The device's statuses of the last day (GET /statuses), newest first as the status store keeps
 * them: each with its message's state, when it was sent and when it expires, and who viewed it. A
 * status whose message record is gone (past the retention) is left out.
 */
export async function listStatuses(
  s: { statuses: Pick<StatusStore, 'list'>; messages: Pick<MessageStore, 'get'> },
  deviceId: string,
): Promise<StatusSummary[]> {
  const stored = await s.statuses.list(deviceId, Date.now() - STATUS_LIMITS.liveMs);
  const records = await Promise.all(stored.map((st) => s.messages.get(deviceId, st.messageId)));
  const statuses: StatusSummary[] = [];
  stored.forEach((st, i) => {
    const record = records[i];
    if (!record) return;
    const sentAt = record.sentAt;
    statuses.push({
      messageId: st.messageId,
      ...(record.batchId ? { batchId: record.batchId } : {}),
      status: record.status,
      kind: st.kind,
      audienceSize: st.audienceSize,
      ...(record.sendAt ? { sendAt: record.sendAt } : {}),
      ...(sentAt
        ? { sentAt, expiresAt: new Date(Date.parse(sentAt) + STATUS_LIMITS.liveMs).toISOString() }
        : {}),
      ...(record.error ? { error: record.error } : {}),
      views: st.viewers.length,
      viewers: st.viewers.map((v) => ({ viewer: identityOf(v.jid), viewedAt: v.viewedAt })),
    });
  });
  return statuses;
}
