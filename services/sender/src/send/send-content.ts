import type { Agent } from 'node:http';
/**
 * A send job's content: read from the request's content record (stored once per request) when the
 * request is wholly accepted, and put on the socket as the job's WhatsApp message(s).
 */
import { DelayedError, type Job } from 'bullmq';
import {
  derivedPlatformMessageId,
  FAILURE_REASONS,
  personaliseContent,
  type MessageContent,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import { supportsCaption, type MediaInput, type QuoteTarget, type SendAttempt } from '@mgw/messenger';
import type {
  ContentCacheOptions,
  ContentStore,
  MediaStore,
  MessageRevisions,
  MessageStore,
  StoredContent,
} from '@mgw/store';
import type { AttachmentFetcher } from './media-source.js';
import { PermanentSendError, reasonOf } from './send-errors.js';
import { sendRevision } from './send-revision.js';
import type { LinkPreviewer } from './link-preview.js';
import { isKindContent, sendKind, type SendKindDeps } from './send-kinds.js';
import { statusToSend, type StatusDeps } from './send-status.js';
import type { JobSender } from './send-engine.js';

/**
 * The sender's copies of the contents it read (ContentStore's cache): a batch's messages share one
 * content, read and opened once instead of once per message. 4 MiB holds hundreds of batches' texts;
 * a copy is read again after a minute.
 */
export const CONTENT_CACHE: ContentCacheOptions = { maxBytes: 4 * 1024 * 1024, ttlMs: 60_000 };

/** An OTP's stored proto serves Baileys' retry receipts; a code older than this is worthless. */
export const OTP_PROTO_SECONDS = 15 * 60;

export interface SendContentDeps extends SendKindDeps, StatusDeps {
  sender: JobSender;
  contents: ContentStore;
  /** Uploaded media (`attachment.mediaId`): read once per device and batch (the upload cache). */
  media: Pick<MediaStore, 'bytes'>;
  fetchAttachment: AttachmentFetcher;
  /** Aborted when the device is retired: a message of a batch still being accepted steps aside. */
  retired: AbortSignal;
  messages: MessageStore;
  /** Edits and deletes of our messages (send-revision.ts). */
  revisions: MessageRevisions;
  /** A text's link preview, fetched through the outbound guard (link-preview.ts). */
  linkPreview?: LinkPreviewer;
  /** The device's proxy now: link previews and attachment URLs are fetched through it (docs/proxies.md). */
  proxyAgent?: () => Agent | undefined;
}

/**
 * The request's content, once wholly accepted; gone or with a failed attachment, the message fails.
 * A personalised batch's content comes rendered with this message's variables (its own text and
 * caption), right before it is sent: they are never logged.
 */
export async function sendableContent(
  job: Job<SendJobData, SendJobResult>,
  deps: SendContentDeps,
  token: string | undefined,
  /** The content's read when it was started with the job's state (readJobState). */
  read?: Promise<StoredContent | undefined>,
): Promise<StoredContent> {
  const stored = await acceptedContent(job, deps, token, read);
  if (!stored)
    throw new PermanentSendError(FAILURE_REASONS.contentExpired, 'the content of the request is gone');
  if (stored.attachmentError) {
    throw new PermanentSendError(reasonOf(stored.attachmentError), 'the attachment failed for this request');
  }
  if (!stored.content.personalised) return stored;
  const { deviceId, contentId, messageId } = job.data;
  const vars = await deps.contents.vars(deviceId, contentId, messageId);
  if (!vars) throw new PermanentSendError(FAILURE_REASONS.contentExpired, "the message's variables are gone");
  return { ...stored, content: personaliseContent(stored.content, vars) };
}

/** How long a message of a batch still being accepted waits in place before it steps aside. */
const HELD_WAIT_MS = 2000;
const HELD_POLL_MS = 50;

/**
 * The request's content once the request is wholly accepted. A long batch is accepted in pieces
 * and held (`heldUntil`) until its last piece commits, so none of it goes out if a later piece
 * fails: its message waits here a moment (that usually takes well under a second), then goes back
 * to the queue for a second without using an attempt; a hold that outlives its time means the API
 * never finished the batch, and the message fails `enqueue_failed` (it was never acknowledged).
 */
async function acceptedContent(
  job: Job<SendJobData, SendJobResult>,
  deps: SendContentDeps,
  token: string | undefined,
  read: Promise<StoredContent | undefined> | undefined,
): Promise<StoredContent | undefined> {
  const { deviceId, contentId } = job.data;
  const waitUntil = Date.now() + HELD_WAIT_MS;
  for (let first = read; ; first = undefined) {
    const stored = await (first ?? deps.contents.get(deviceId, contentId));
    if (stored?.heldUntil === undefined) return stored;
    if (Date.now() >= stored.heldUntil)
      throw new PermanentSendError(FAILURE_REASONS.enqueueFailed, 'its batch was never wholly accepted');
    if (deps.retired.aborted || Date.now() >= waitUntil) {
      await job.moveToDelayed(Date.now() + 1000, token);
      throw new DelayedError();
    }
    await new Promise((resolve) => setTimeout(resolve, HELD_POLL_MS));
  }
}

/**
 * Puts a request's content on the socket as the job's WhatsApp message. Text with an attachment:
 * the text becomes the caption when the attachment has none and its type has captions; otherwise
 * it follows the media as a second message, whose WhatsApp id is derived from the job's so that a
 * retry re-sends that one too instead of a new one.
 */
export async function sendContent(
  data: SendJobData,
  content: MessageContent,
  jid: string,
  quoted: QuoteTarget | undefined,
  deps: SendContentDeps,
  attempt?: SendAttempt,
): Promise<void> {
  if (content.edit || content.delete) return sendRevision(data, content, jid, deps, attempt);
  if (content.template) {
    // Accepted for cloud devices only; one that reached another engine (it changed meanwhile) fails.
    if (!deps.sender.sendsTemplates)
      throw new PermanentSendError(
        FAILURE_REASONS.rejectedByServer,
        'a template goes only through a Cloud API device',
      );
    // The record shows the template's name and language (kindFieldsOf: never an OTP's code).
    await deps.kinds.keep(data.deviceId, data.messageId, content);
    return deps.sender.send(
      { jid, platformMessageId: data.platformMessageId, template: content.template, quoted },
      attempt,
    );
  }
  // A template is a message kind too, but the Cloud API's: it is sent above, never as the others.
  if (isKindContent(content)) return sendKind(data, content, jid, quoted, deps, attempt);
  // Whom a text or caption mentions stays on its record (sealed, with the kind fields).
  if (content.mentions?.length)
    await deps.kinds.keep(data.deviceId, data.messageId, { mentions: content.mentions });
  const keepProtoSeconds = data.kind === 'otp' ? OTP_PROTO_SECONDS : undefined;
  // A status update goes to its viewers (less those who opted out since), once for all.
  const status = content.status ? { status: await statusToSend(content.status, deps) } : {};
  const att = content.attachment;
  if (!att) {
    // No preview for an OTP (nothing to preview, and it must not wait), a status, or when the request said no.
    const wantPreview =
      data.kind !== 'otp' && !content.status && content.linkPreview !== false && content.text;
    const linkPreview = wantPreview
      ? await deps.linkPreview?.(content.text!, data.deviceId, deps.proxyAgent?.())
      : undefined;
    await deps.sender.send(
      {
        jid,
        platformMessageId: data.platformMessageId,
        text: content.text,
        quoted,
        keepProtoSeconds,
        previewWanted: Boolean(wantPreview),
        ...(linkPreview ? { linkPreview } : {}),
        ...(content.mentions ? { mentions: content.mentions } : {}),
        ...status,
      },
      attempt,
    );
    return;
  }
  const captionCapable = supportsCaption(att.type);
  const textAsCaption = content.text !== undefined && !att.caption && captionCapable;
  const source = att.source;
  const media: MediaInput = {
    type: att.type,
    // The bytes of one request (or one uploaded object) are uploaded to WhatsApp once per device,
    // whatever the number of recipients.
    cacheKey:
      'url' in source
        ? `url:${source.url}`
        : 'mediaId' in source
          ? `media:${source.mediaId}`
          : `content:${data.contentId}`,
    load: () =>
      'url' in source
        ? deps.fetchAttachment(source.url, deps.proxyAgent?.())
        : 'mediaId' in source
          ? uploadedMedia(deps, data.deviceId, source.mediaId)
          : storedMedia(deps, data.deviceId, data.contentId),
    fileName: att.filename,
    mimeType: att.mimeType,
    caption: captionCapable ? (att.caption ?? content.text) : undefined,
    // A status's audio is a voice note, as the apps post it.
    ...(content.status && att.type === 'audio' ? { voice: true } : {}),
  };
  await deps.sender.send(
    {
      jid,
      platformMessageId: data.platformMessageId,
      media,
      quoted,
      ...(content.mentions && captionCapable ? { mentions: content.mentions } : {}),
      ...status,
    },
    attempt,
  );
  // Audio and stickers have no caption: their caption and text follow as one text message.
  const leftovers = [captionCapable ? undefined : att.caption, textAsCaption ? undefined : content.text];
  const followUp = leftovers.filter((t): t is string => Boolean(t)).join('\n\n');
  if (followUp) {
    await deps.sender.send(
      {
        jid,
        platformMessageId: followUpId(data.platformMessageId),
        text: followUp,
        // No caption to carry the mentions: the text that follows does.
        ...(content.mentions && !captionCapable ? { mentions: content.mentions } : {}),
      },
      attempt,
    );
  }
}

async function storedMedia(deps: SendContentDeps, deviceId: string, contentId: string): Promise<Buffer> {
  const media = await deps.contents.media(deviceId, contentId);
  if (!media) throw new PermanentSendError(FAILURE_REASONS.contentExpired, 'the stored attachment is gone');
  return media;
}

/**
 * An object uploaded with POST /media. Gone (deleted, expired): the message fails `media_gone`. A
 * store that does not answer (S3 down) throws `MediaStoreUnavailableError`: the job is retried like
 * any passing failure and, on its last attempt, fails `media_store_unavailable`.
 */
async function uploadedMedia(deps: SendContentDeps, deviceId: string, mediaId: string): Promise<Buffer> {
  const bytes = await deps.media.bytes(deviceId, mediaId);
  if (!bytes) throw new PermanentSendError(FAILURE_REASONS.mediaGone, 'the uploaded media is gone');
  return bytes;
}

/** The WhatsApp id of the text that follows a media message: stable across retries. */
export function followUpId(platformMessageId: string): string {
  return derivedPlatformMessageId(platformMessageId, 'text');
}
