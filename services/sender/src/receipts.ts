import type { Metrics } from '@mgw/contracts';
import type { ReceiptUpdate } from '@mgw/messenger';
import type { MessageStore } from '@mgw/store';

/** Moves our records forward on delivery/read receipts (unknown ids — e.g. follow-up texts — are skipped). */
export async function applyReceipts(
  messages: MessageStore,
  deviceId: string,
  receipts: ReceiptUpdate[],
  metrics: Metrics,
): Promise<void> {
  for (const r of receipts) {
    const messageId = await messages.findByPlatformId(deviceId, r.platformMessageId);
    if (!messageId) continue;
    if (await messages.markReceipt(deviceId, messageId, r.status, r.at))
      metrics.messages.inc({ status: r.status });
  }
}
