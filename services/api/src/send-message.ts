import {
  ERRORS,
  PRIORITY,
  newMessageId,
  newPlatformMessageId,
  type JobAttachment,
  type SendBody,
  type SendJobData,
} from '@mgw/contracts';
import type { MediaStore, SessionStore } from '@mgw/store';
import { ApiError } from './api-error.js';
import type { Outcome } from './idempotency.js';
import { assertAttachmentSize, decodeAttachment } from './attachment-size.js';
import type { SendQueues } from './send-queue.js';

export interface SendDeps {
  sessions: SessionStore;
  media: MediaStore;
  mediaBlobTtlSeconds: number;
  sendQueues: SendQueues;
}

export async function requireConnected(sessions: SessionStore, deviceId: string): Promise<void> {
  if (!(await sessions.acceptsMessages(deviceId))) throw new ApiError(409, ERRORS.noDevice);
}

/**
 * POST /send: one job per recipient, accepted at once (202). A single `to` answers with its
 * messageId; a list (even of one) with a batch id plus the messageIds in `to` order.
 */
export async function sendMessage(deps: SendDeps, deviceId: string, body: SendBody): Promise<Outcome> {
  if (body.attachment?.base64 !== undefined) assertAttachmentSize(body.attachment.base64);
  await requireConnected(deps.sessions, deviceId);

  let attachment: JobAttachment | undefined;
  if (body.attachment) {
    const { type, url, base64, filename, caption, mimeType } = body.attachment;
    const source =
      base64 !== undefined
        ? await deps.media.put(deviceId, decodeAttachment(base64), deps.mediaBlobTtlSeconds)
        : { url: url! };
    attachment = {
      type,
      source,
      ...(filename !== undefined ? { filename } : {}),
      ...(caption !== undefined ? { caption } : {}),
      ...(mimeType !== undefined ? { mimeType } : {}),
    };
  }

  const isList = Array.isArray(body.to);
  const recipients = isList ? (body.to as string[]) : [body.to as string];
  const batchId = isList ? newMessageId() : undefined;
  const enqueuedAt = Date.now();
  const jobs: SendJobData[] = recipients.map((to) => ({
    kind: 'send',
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to,
    ...(body.text !== undefined ? { text: body.text } : {}),
    ...(attachment ? { attachment } : {}),
    ...(body.existingMessageId !== undefined ? { existingMessageId: body.existingMessageId } : {}),
    ...(batchId ? { batchId } : {}),
    enqueuedAt,
  }));

  await deps.sendQueues.enqueue(deviceId, jobs, PRIORITY.send);

  const messageIds = jobs.map((j) => j.messageId);
  return {
    status: 202,
    body: isList
      ? { success: true, messageId: batchId, messageIds }
      : { success: true, messageId: messageIds[0] },
  };
}
