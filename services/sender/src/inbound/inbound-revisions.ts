import { serializeError, type Logger } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import type { InboundRevision } from '@mgw/messenger';
import type { MessageRevisions } from '@mgw/store';

/**
 * A contact edited or deleted for everyone messages it sent us: the inbound records they name
 * take the edit (sealed, with its history) or read `deleted` (text dropped), and `message.edited` /
 * `message.deleted` are emitted — each once, however often WhatsApp delivers it. One naming a
 * message we do not have (older than the retention, or sent before the device was linked) is
 * counted and skipped.
 */
export async function recordInboundRevisions(
  revisions: MessageRevisions,
  deviceId: string,
  received: InboundRevision[],
  metrics: Metrics,
  logger: Logger,
): Promise<void> {
  for (const r of received) {
    try {
      const messageId = await revisions.inboundId(deviceId, r.targetPlatformMessageId);
      const kind = r.text === undefined ? 'deleted' : 'edited';
      if (!messageId) {
        metrics.messages.inc({ status: `${kind}_unknown` });
        continue;
      }
      const applied =
        r.text === undefined
          ? await revisions.recordInboundDelete(
              deviceId,
              messageId,
              r.targetPlatformMessageId,
              r.contact,
              r.at,
            )
          : await revisions.recordEdit({
              deviceId,
              messageId,
              platformMessageId: r.targetPlatformMessageId,
              direction: 'inbound',
              phone: r.from,
              lid: r.contact.lid,
              editId: r.platformMessageId,
              text: r.text,
              at: r.at,
            });
      if (applied) metrics.messages.inc({ status: kind });
    } catch (err) {
      logger.warn('inbound edit or delete not recorded', { err: serializeError(err) });
    }
  }
}
