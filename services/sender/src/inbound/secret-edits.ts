import { serializeError, type Logger } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import { openSecretEdit, type InboundRevision, type SecretEncryptedEdit } from '@mgw/messenger';
import type { MessageRevisions } from '@mgw/store';

/**
 * Contacts' edits sent secret-encrypted (whatsmeow fcbcaad5; secret-edit.ts of @mgw/messenger):
 * each is opened with the messageSecret its original's inbound record keeps (sealed) and answered
 * as the plain edit it carries, for recordInboundRevisions to apply as any other. One naming a
 * message we do not keep is counted `edited_unknown`; one we keep but cannot open (no secret kept,
 * or none of the sender pairs opens it) `edited_undecryptable`, and logged with our id only (never
 * its content). Poll edits and added options are not opened (docs/whatsapp-2026.md, fcbcaad5).
 */
export async function openSecretEdits(
  revisions: Pick<MessageRevisions, 'inboundId' | 'inboundSecret'>,
  deviceId: string,
  received: SecretEncryptedEdit[],
  metrics: Metrics,
  logger: Logger,
): Promise<InboundRevision[]> {
  const opened: InboundRevision[] = [];
  for (const edit of received) {
    if (edit.kind !== 'message_edit') {
      metrics.messages.inc({ status: 'edited_unsupported' });
      continue;
    }
    try {
      const messageId = await revisions.inboundId(deviceId, edit.targetPlatformMessageId);
      if (!messageId) {
        metrics.messages.inc({ status: 'edited_unknown' });
        continue;
      }
      const kept = await revisions.inboundSecret(deviceId, messageId);
      const revision = kept && openSecretEdit(edit, kept.secret, kept.senderJids);
      if (revision) {
        opened.push(revision);
        continue;
      }
      metrics.messages.inc({ status: 'edited_undecryptable' });
      logger.warn('secret-encrypted edit not decrypted', {
        deviceId,
        messageId,
        reason: kept ? 'no_sender_pair_opens_it' : 'no_secret_kept',
      });
    } catch (err) {
      metrics.messages.inc({ status: 'edited_undecryptable' });
      logger.warn('secret-encrypted edit not decrypted', { deviceId, err: serializeError(err) });
    }
  }
  return opened;
}
