import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import {
  FAILURE_REASONS,
  PHONE_PATTERN,
  derivedPlatformMessageId,
  type FailureReason,
  type SendJobData,
  type SendJobResult,
  type Metrics,
} from '@mgw/contracts';
import { serializeError, type Logger } from '@mgw/common';
import {
  NotConnectedError,
  ReplyTargetMissingError,
  ServerRejectedError,
  supportsCaption,
  type DeviceSocket,
  type MediaInput,
  type MessageSender,
} from '@mgw/messenger';
import type { MediaStore, MessageStore } from '@mgw/store';
import { loadAttachment } from './media-source.js';
import type { Pacer } from './pacing.js';
import { PermanentSendError } from './send-errors.js';

export interface SendJobDeps {
  deviceId: string;
  /** Attachments stored once by the API (base64 in the request). */
  media: MediaStore;
  messages: MessageStore;
  conn: DeviceSocket;
  sender: MessageSender;
  pacer: Pacer;
  metrics: Metrics;
  logger: Logger;
  mediaFetchTimeoutMs: number;
  /** How long a job waits for a dropped socket to come back before it is retried. */
  openWaitMs: number;
  /** Set once the device was logged out: every job left fails with this reason. */
  retiredReason: () => FailureReason | undefined;
  /** True while this process hands the device over (SIGTERM): jobs not yet sent go back. */
  handingOver: () => boolean;
}

/**
 * One send job: exactly one WhatsApp message (two when text comes with an attachment that has its
 * own caption), with the id fixed at enqueue time, so a retry re-sends the same message instead of
 * a second one. A record already `sent` (crash after the send, before the job completed) is not
 * sent again.
 */
export async function processSendJob(
  job: Job<SendJobData, SendJobResult>,
  deps: SendJobDeps,
  token?: string,
): Promise<SendJobResult> {
  const data = job.data;
  const record = await deps.messages.get(data.deviceId, data.messageId);
  if (record && record.status !== 'queued' && record.status !== 'failed' && record.sentAt) {
    return result(data, record.sentAt);
  }
  try {
    if (record?.status === 'failed')
      throw new PermanentSendError(
        (record.error as FailureReason) ?? FAILURE_REASONS.sendFailed,
        'already failed',
      );
    const retired = deps.retiredReason();
    if (retired) throw new PermanentSendError(retired, 'the device was logged out');
    if (!PHONE_PATTERN.test(data.to))
      throw new PermanentSendError(FAILURE_REASONS.invalidNumber, 'not a phone number');
    if (!(await deps.conn.waitForOpen(deps.openWaitMs))) {
      const retiredNow = deps.retiredReason();
      if (retiredNow) throw new PermanentSendError(retiredNow, 'the device was logged out');
      if (deps.handingOver()) await handBack(job, token);
      throw new NotConnectedError('the device socket did not open in time');
    }
    const jid = await deps.sender.lookup(data.to);
    if (!jid) throw new PermanentSendError(FAILURE_REASONS.notOnWhatsApp, 'number is not on WhatsApp');
    const quoted = data.existingMessageId ? await replyTarget(data, deps) : undefined;

    await deps.pacer.wait();
    const retiredAfterWait = deps.retiredReason();
    if (retiredAfterWait) throw new PermanentSendError(retiredAfterWait, 'the device was logged out');
    if (deps.handingOver()) await handBack(job, token);
    await sendContent(data, jid, quoted, deps);
    const sentAt = new Date();
    await deps.messages.markSent(data.deviceId, data.messageId, sentAt);
    deps.metrics.messages.inc({ status: 'sent' });
    deps.metrics.sendLatency.observe(
      { kind: data.kind },
      Math.max(0, (sentAt.getTime() - data.enqueuedAt) / 1000),
    );
    return result(data, sentAt.toISOString());
  } catch (err) {
    if (err instanceof DelayedError) throw err;
    const permanent = toPermanent(err);
    if (permanent) {
      if (await deps.messages.markFailed(data.deviceId, data.messageId, permanent.reason))
        deps.metrics.messages.inc({ status: 'failed' });
      throw new UnrecoverableError(permanent.reason);
    }
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (last) {
      // Marked here, before BullMQ moves the job, so a crash in between cannot leave it `queued`.
      if (await deps.messages.markFailed(data.deviceId, data.messageId, FAILURE_REASONS.sendFailed)) {
        deps.metrics.messages.inc({ status: 'failed' });
      }
    }
    deps.logger.warn(last ? 'send failed on its last attempt' : 'send attempt failed; will retry', {
      messageId: data.messageId,
      attempt: job.attemptsMade + 1,
      err: serializeError(err),
    });
    throw err;
  }
}

/**
 * The worker's `failed` handler. A job that will not run again must leave its record `failed`:
 * the processor marks it on its last attempt, but a job that stalled more than `maxStalledCount`
 * is failed by BullMQ without the processor running (UnrecoverableError "job stalled more than
 * allowable limit"), so it is marked here too. `markFailed` only moves `queued` on: idempotent.
 */
export async function onSendJobFailed(
  job: Job<SendJobData, SendJobResult> | undefined,
  err: Error,
  deps: Pick<SendJobDeps, 'messages' | 'metrics' | 'logger'>,
): Promise<void> {
  if (!job) return;
  const unrecoverable = err.name === 'UnrecoverableError';
  if (!unrecoverable && job.attemptsMade < (job.opts.attempts ?? 1)) {
    deps.metrics.jobsRetried.inc({ queue_type: 'send' });
    return;
  }
  const reason = unrecoverable && isFailureReason(err.message) ? err.message : FAILURE_REASONS.sendFailed;
  deps.metrics.jobsFailed.inc({ queue_type: 'send', reason });
  if (await deps.messages.markFailed(job.data.deviceId, job.data.messageId, reason)) {
    deps.metrics.messages.inc({ status: 'failed' });
    deps.logger.warn('send job failed without its processor marking the record', {
      messageId: job.data.messageId,
      reason,
      err: serializeError(err),
    });
  }
}

const FAILURE_REASON_VALUES = new Set<string>(Object.values(FAILURE_REASONS));
function isFailureReason(s: string): s is FailureReason {
  return FAILURE_REASON_VALUES.has(s);
}

/** Not sent yet: give the job back without spending an attempt; the next owner sends it. */
async function handBack(job: Job<SendJobData, SendJobResult>, token: string | undefined): Promise<never> {
  await job.moveToDelayed(Date.now() + 100, token);
  throw new DelayedError();
}

function result(data: SendJobData, sentAt: string): SendJobResult {
  return { messageId: data.messageId, platformMessageId: data.platformMessageId, phone: data.to, sentAt };
}

async function replyTarget(data: SendJobData, deps: SendJobDeps): Promise<string> {
  const target = await deps.messages.get(deps.deviceId, data.existingMessageId!);
  if (!target || target.deviceId !== deps.deviceId || !target.sentAt) {
    throw new PermanentSendError(FAILURE_REASONS.replyTargetNotFound, 'reply target not found or not sent');
  }
  return target.platformMessageId;
}

/**
 * Text with an attachment: the text becomes the caption when the attachment has none and its type
 * has captions; otherwise it follows the media as a second message, whose WhatsApp id is derived
 * from the job's so that a retry re-sends that one too instead of a new one.
 */
async function sendContent(
  data: SendJobData,
  jid: string,
  quoted: string | undefined,
  deps: SendJobDeps,
): Promise<void> {
  const att = data.attachment;
  if (!att) {
    await deps.sender.send({
      jid,
      platformMessageId: data.platformMessageId,
      text: data.text,
      quotedPlatformMessageId: quoted,
    });
    return;
  }
  const captionCapable = supportsCaption(att.type);
  const textAsCaption = data.text !== undefined && !att.caption && captionCapable;
  const cacheKey = 'blobId' in att.source ? `blob:${att.source.blobId}` : `url:${att.source.url}`;
  const media: MediaInput = {
    type: att.type,
    cacheKey,
    load: () => loadAttachment(deps.media, data.deviceId, att.source, deps.mediaFetchTimeoutMs),
    fileName: att.filename,
    mimeType: att.mimeType,
    caption: captionCapable ? (att.caption ?? data.text) : undefined,
  };
  await deps.sender.send({
    jid,
    platformMessageId: data.platformMessageId,
    media,
    quotedPlatformMessageId: quoted,
  });
  // Audio and stickers have no caption: their caption and text follow as one text message.
  const leftovers = [captionCapable ? undefined : att.caption, textAsCaption ? undefined : data.text];
  const followUp = leftovers.filter((t): t is string => Boolean(t)).join('\n\n');
  if (followUp) {
    await deps.sender.send({ jid, platformMessageId: followUpId(data.platformMessageId), text: followUp });
  }
}

/** The WhatsApp id of the text that follows a media message: stable across retries. */
export function followUpId(platformMessageId: string): string {
  return derivedPlatformMessageId(platformMessageId, 'text');
}

function toPermanent(err: unknown): PermanentSendError | undefined {
  if (err instanceof PermanentSendError) return err;
  if (err instanceof ServerRejectedError) {
    return new PermanentSendError(FAILURE_REASONS.rejectedByServer, err.message);
  }
  if (err instanceof ReplyTargetMissingError) {
    return new PermanentSendError(FAILURE_REASONS.replyTargetNotFound, err.message);
  }
  return undefined;
}
