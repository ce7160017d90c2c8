import { PRIORITY, newMessageId, type MessageContent, type SendBody } from '@mgw/contracts';
import { assertAttachmentSize, decodeAttachment } from './attachment-size.js';
import type { Outcome } from '../http/idempotency.js';
import type { MessageAcceptor } from './message-acceptor.js';

export interface SendDeps {
  acceptor: MessageAcceptor;
}

/** The request's shared content, once, plus the attachment's bytes when it came as base64. */
export function contentOf(body: SendBody): { content: MessageContent; media?: Buffer } {
  const content: MessageContent = {
    ...(body.text !== undefined ? { text: body.text } : {}),
    ...(body.existingMessageId !== undefined ? { existingMessageId: body.existingMessageId } : {}),
  };
  if (!body.attachment) return { content };
  const { type, url, base64, filename, caption, mimeType } = body.attachment;
  const media = base64 !== undefined ? decodeAttachment(base64) : undefined;
  content.attachment = {
    type,
    source: media ? { stored: true, size: media.length } : { url: url! },
    ...(filename !== undefined ? { filename } : {}),
    ...(caption !== undefined ? { caption } : {}),
    ...(mimeType !== undefined ? { mimeType } : {}),
  };
  return { content, media };
}

/**
 * POST /send: one job per recipient, accepted at once (202). A single `to` answers with its
 * messageId; a list (even of one) with a batch id plus the messageIds in `to` order.
 */
export async function sendMessage(deps: SendDeps, deviceId: string, body: SendBody): Promise<Outcome> {
  if (body.attachment?.base64 !== undefined) assertAttachmentSize(body.attachment.base64);
  const isList = Array.isArray(body.to);
  const recipients = isList ? (body.to as string[]) : [body.to as string];
  const batchId = isList ? newMessageId() : undefined;
  const jobs = await deps.acceptor.accept({
    deviceId,
    kind: 'send',
    recipients,
    ...contentOf(body),
    ...(batchId ? { batchId } : {}),
    priority: PRIORITY.send,
  });
  const messageIds = jobs.map((j) => j.messageId);
  return {
    status: 202,
    body: isList
      ? { success: true, messageId: batchId, messageIds }
      : { success: true, messageId: messageIds[0] },
  };
}
