import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { serializeError, type Logger } from '@mgw/common';
import {
  FAILURE_REASONS,
  PHONE_PATTERN,
  derivedPlatformMessageId,
  type FailureReason,
  type MessageContent,
  type Metrics,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import {
  NotConnectedError,
  ReplyTargetMissingError,
  ServerRejectedError,
  supportsCaption,
  type DeviceSocket,
  type MediaInput,
  type MessageSender,
} from '@mgw/messenger';
import type { ContentStore, MessageStore, StoredContent } from '@mgw/store';
import type { AttachmentFetcher } from './media-source.js';
import type { Pacer } from './pacing.js';
import type { DeviceRestriction } from './restriction.js';
import type { SendGate, Ticket } from './send-policy.js';
import { PermanentSendError } from './send-errors.js';

/** An OTP's stored proto serves Baileys' retry receipts; a code older than this is worthless. */
export const OTP_PROTO_SECONDS = 15 * 60;

export interface SendJobDeps {
  deviceId: string;
  messages: MessageStore;
  contents: ContentStore;
  conn: DeviceSocket;
  sender: MessageSender;
  pacer: Pacer;
  /** Caps, warm-up, quiet hours and the device's pause: held messages wait in the queue. */
  gate: SendGate;
  /** Turns WhatsApp's push-back (ack 463/429, failures in a row) into a pause of the device. */
  restriction: Pick<DeviceRestriction, 'onSendFailed' | 'onSent'>;
  fetchAttachment: AttachmentFetcher;
  metrics: Metrics;
  logger: Logger;
  /** How long a job waits for a dropped socket to come back before it is retried. */
  openWaitMs: number;
  /** Set once the device was logged out: every job left fails with this reason. */
  retiredReason: () => FailureReason | undefined;
  /** Aborted when the device is retired: a send in flight stops waiting at once. */
  retired: AbortSignal;
  /** The device's link generation while this process holds it; older messages are never sent. */
  linkGeneration: () => number;
  /** True while this process hands the device over (SIGTERM): jobs not yet sent go back. */
  handingOver: () => boolean;
  /**
   * Messages this process sent whose "sent" could not be recorded (Redis away): a retry here
   * records them instead of sending them a second time.
   */
  unrecorded: Map<string, Date>;
}

/** Bound on the in-memory list of sent-but-unrecorded messages (only ever filled during an outage). */
const MAX_UNRECORDED = 10_000;

/**
 * One send job: exactly one WhatsApp message (two when text comes with an attachment that has its
 * own caption), with the id fixed at enqueue time, so a retry re-sends the same message instead
 * of a second one. The content is read from the request's content record (stored once); a
 * message already sent (crash after the send, before the job completed) is not sent again, and
 * the message is claimed right before the socket write (which is what lets the API expire an
 * OTP it gave up on, atomically).
 */
export async function processSendJob(
  job: Job<SendJobData, SendJobResult>,
  deps: SendJobDeps,
  token?: string,
): Promise<SendJobResult> {
  const data = job.data;
  const sentEarlier = deps.unrecorded.get(data.messageId);
  if (sentEarlier) return recordSent(data, sentEarlier, deps);
  const record = await deps.messages.getRecord(data.deviceId, data.messageId);
  if (record?.sentAt && record.status !== 'failed') return result(data, record.sentAt);
  try {
    if (record?.status === 'failed') throw new PermanentSendError(reasonOf(record.error), 'already failed');
    const retired = deps.retiredReason();
    if (retired) throw new PermanentSendError(retired, 'the device was logged out');
    if (data.linkGeneration !== deps.linkGeneration()) {
      throw new PermanentSendError(FAILURE_REASONS.loggedOut, 'accepted for an earlier link of the device');
    }
    if (!PHONE_PATTERN.test(data.to))
      throw new PermanentSendError(FAILURE_REASONS.invalidNumber, 'not a phone number');
    const stored = await acceptedContent(job, deps, token);
    if (!stored)
      throw new PermanentSendError(FAILURE_REASONS.contentExpired, 'the content of the request is gone');
    if (stored.attachmentError) {
      throw new PermanentSendError(
        reasonOf(stored.attachmentError),
        'the attachment failed for this request',
      );
    }
    if (!(await deps.conn.waitForOpen(deps.openWaitMs))) {
      const retiredNow = deps.retiredReason();
      if (retiredNow) throw new PermanentSendError(retiredNow, 'the device was logged out');
      if (deps.handingOver()) await handBack(job, token);
      throw new NotConnectedError('the device socket did not open in time');
    }
    // Over a cap, in quiet hours or while WhatsApp pushes back: wait in the queue, no attempt used
    // (and nothing asked of WhatsApp, not even the number lookup).
    const verdict = await deps.gate.admit(data);
    if ('holdUntil' in verdict) await holdBack(job, verdict.holdUntil, token);
    const ticket = (verdict as { go: Ticket }).go;
    try {
      const jid = await deps.sender.lookup(data.to);
      if (!jid) throw new PermanentSendError(FAILURE_REASONS.notOnWhatsApp, 'number is not on WhatsApp');
      const content = stored.content;
      const quoted = content.existingMessageId
        ? await replyTarget(content.existingMessageId, deps)
        : undefined;
      await deps.pacer.wait();
      const retiredAfterWait = deps.retiredReason();
      if (retiredAfterWait) throw new PermanentSendError(retiredAfterWait, 'the device was logged out');
      if (deps.handingOver()) await handBack(job, token);
      // A pause that began while this message waited for its turn holds it too.
      const pausedUntil = await deps.gate.restrictedUntil();
      if (pausedUntil !== undefined) await holdBack(job, pausedUntil, token);

      const claim = await deps.messages.claim(data);
      if (claim === 'expired') throw new PermanentSendError(FAILURE_REASONS.otpExpired, 'past its expiry');
      if (claim === 'failed' || claim === 'sent') {
        const now = await deps.messages.getRecord(data.deviceId, data.messageId);
        if (now?.sentAt && now.status !== 'failed') {
          await ticket.release(); // counted when it was sent
          return result(data, now.sentAt);
        }
        throw new PermanentSendError(reasonOf(now?.error), 'already failed');
      }
      try {
        await abortable(sendContent(data, content, jid, quoted, deps), deps.retired);
      } catch (err) {
        // The server refused it because of the account, not the message: it waits (same WhatsApp
        // id, never delivered) until the device's pause ends.
        const until = await deps.restriction.onSendFailed(err);
        if (until !== undefined) await holdBack(job, until, token);
        throw err;
      }
    } catch (err) {
      await ticket.release().catch(() => undefined);
      throw err;
    }
    deps.restriction.onSent();
    await ticket
      .sent()
      .catch((err: unknown) =>
        deps.logger.warn('sent message not counted as a chat', { err: serializeError(err) }),
      );
    const sentAt = new Date();
    deps.metrics.sendLatency.observe(
      { kind: data.kind },
      Math.max(0, (sentAt.getTime() - data.enqueuedAt) / 1000),
    );
    return await recordSent(data, sentAt, deps);
  } catch (err) {
    if (err instanceof DelayedError) throw err;
    const permanent = toPermanent(err, deps.retiredReason());
    if (permanent) {
      if (isAttachmentReason(permanent.reason)) {
        await deps.contents.rememberAttachmentError(data.deviceId, data.contentId, permanent.reason);
      }
      if (await deps.messages.markFailed(data, permanent.reason))
        deps.metrics.messages.inc({ status: 'failed' });
      throw new UnrecoverableError(permanent.reason);
    }
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    // Marked here, before BullMQ moves the job, so a crash in between cannot leave it `queued`.
    if (last && (await deps.messages.markFailed(data, FAILURE_REASONS.sendFailed))) {
      deps.metrics.messages.inc({ status: 'failed' });
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
 * Records "sent". When that fails (Redis away) the message is remembered, so the retry of this job
 * on this process records it instead of sending it again (another process could only re-send it
 * with the same WhatsApp id, which WhatsApp and the phone de-duplicate).
 */
async function recordSent(data: SendJobData, sentAt: Date, deps: SendJobDeps): Promise<SendJobResult> {
  try {
    await deps.messages.markSent(data, sentAt);
  } catch (err) {
    if (deps.unrecorded.size < MAX_UNRECORDED) deps.unrecorded.set(data.messageId, sentAt);
    throw err;
  }
  deps.unrecorded.delete(data.messageId);
  deps.metrics.messages.inc({ status: 'sent' });
  return result(data, sentAt.toISOString());
}

/**
 * The worker's `failed` handler. A job that will not run again must leave its message settled
 * as `failed`: the processor marks it on its last attempt, but a job that stalled more than
 * `maxStalledCount` is failed by BullMQ without the processor running, so it is marked here too
 * (`markFailed` settles a message once: idempotent).
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
  if (await deps.messages.markFailed(job.data, reason)) {
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
function reasonOf(error: string | undefined): FailureReason {
  return error && isFailureReason(error) ? error : FAILURE_REASONS.sendFailed;
}

const ATTACHMENT_REASONS = new Set<string>([
  FAILURE_REASONS.attachmentUnreachable,
  FAILURE_REASONS.attachmentTooLarge,
  FAILURE_REASONS.attachmentUrlNotAllowed,
]);
function isAttachmentReason(reason: string): boolean {
  return ATTACHMENT_REASONS.has(reason);
}

/** Not sent yet: give the job back without spending an attempt; the next owner sends it. */
/** How long a message of a list still being accepted waits in place before it steps aside. */
const HELD_WAIT_MS = 2000;
const HELD_POLL_MS = 50;

/**
 * The request's content once the request is wholly accepted. A long list is accepted in pieces
 * and held (`heldUntil`) until its last piece commits, so none of it goes out if a later piece
 * fails: its message waits here a moment (that usually takes well under a second), then goes back
 * to the queue for a second without using an attempt; a hold that outlives its time means the API
 * never finished the list, and the message fails `enqueue_failed` (it was never acknowledged).
 */
async function acceptedContent(
  job: Job<SendJobData, SendJobResult>,
  deps: SendJobDeps,
  token: string | undefined,
): Promise<StoredContent | undefined> {
  const { deviceId, contentId } = job.data;
  const waitUntil = Date.now() + HELD_WAIT_MS;
  for (;;) {
    const stored = await deps.contents.get(deviceId, contentId);
    if (stored?.heldUntil === undefined) return stored;
    if (Date.now() >= stored.heldUntil)
      throw new PermanentSendError(FAILURE_REASONS.enqueueFailed, 'its list was never wholly accepted');
    if (deps.retired.aborted || Date.now() >= waitUntil) {
      await job.moveToDelayed(Date.now() + 1000, token);
      throw new DelayedError();
    }
    await new Promise((resolve) => setTimeout(resolve, HELD_POLL_MS));
  }
}

/** Back to the queue until `until` (ms) without using an attempt; its record stays `queued`. */
async function holdBack(
  job: Job<SendJobData, SendJobResult>,
  until: number,
  token: string | undefined,
): Promise<never> {
  await job.moveToDelayed(Math.max(until, Date.now() + 100), token);
  throw new DelayedError();
}

async function handBack(job: Job<SendJobData, SendJobResult>, token: string | undefined): Promise<never> {
  await job.moveToDelayed(Date.now() + 100, token);
  throw new DelayedError();
}

/**
 * Stops waiting for `work` when the device is retired: a socket that was logged out can hold a
 * send for a minute before Baileys gives up, and those messages must fail with the logout's
 * reason at once instead. The abandoned send settles on its own (its rejection is swallowed).
 */
async function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    throw new PermanentSendError(FAILURE_REASONS.loggedOut, 'the device was logged out');
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(new PermanentSendError(FAILURE_REASONS.loggedOut, 'the device was logged out'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function result(data: SendJobData, sentAt: string): SendJobResult {
  return { messageId: data.messageId, platformMessageId: data.platformMessageId, phone: data.to, sentAt };
}

async function replyTarget(messageId: string, deps: SendJobDeps): Promise<string> {
  const target = await deps.messages.get(deps.deviceId, messageId);
  if (!target || !target.sentAt) {
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
  content: MessageContent,
  jid: string,
  quoted: string | undefined,
  deps: SendJobDeps,
): Promise<void> {
  const keepProtoSeconds = data.kind === 'otp' ? OTP_PROTO_SECONDS : undefined;
  const att = content.attachment;
  if (!att) {
    await deps.sender.send({
      jid,
      platformMessageId: data.platformMessageId,
      text: content.text,
      quotedPlatformMessageId: quoted,
      keepProtoSeconds,
    });
    return;
  }
  const captionCapable = supportsCaption(att.type);
  const textAsCaption = content.text !== undefined && !att.caption && captionCapable;
  const source = att.source;
  const media: MediaInput = {
    type: att.type,
    // The bytes of one request are uploaded once per device, whatever the number of recipients.
    cacheKey: 'url' in source ? `url:${source.url}` : `content:${data.contentId}`,
    load: () =>
      'url' in source ? deps.fetchAttachment(source.url) : storedMedia(deps, data.deviceId, data.contentId),
    fileName: att.filename,
    mimeType: att.mimeType,
    caption: captionCapable ? (att.caption ?? content.text) : undefined,
  };
  await deps.sender.send({
    jid,
    platformMessageId: data.platformMessageId,
    media,
    quotedPlatformMessageId: quoted,
  });
  // Audio and stickers have no caption: their caption and text follow as one text message.
  const leftovers = [captionCapable ? undefined : att.caption, textAsCaption ? undefined : content.text];
  const followUp = leftovers.filter((t): t is string => Boolean(t)).join('\n\n');
  if (followUp) {
    await deps.sender.send({ jid, platformMessageId: followUpId(data.platformMessageId), text: followUp });
  }
}

async function storedMedia(deps: SendJobDeps, deviceId: string, contentId: string): Promise<Buffer> {
  const media = await deps.contents.media(deviceId, contentId);
  if (!media) throw new PermanentSendError(FAILURE_REASONS.contentExpired, 'the stored attachment is gone');
  return media;
}

/** The WhatsApp id of the text that follows a media message: stable across retries. */
export function followUpId(platformMessageId: string): string {
  return derivedPlatformMessageId(platformMessageId, 'text');
}

function toPermanent(err: unknown, retired: FailureReason | undefined): PermanentSendError | undefined {
  if (err instanceof PermanentSendError) return err;
  if (err instanceof ServerRejectedError) {
    return new PermanentSendError(FAILURE_REASONS.rejectedByServer, err.message);
  }
  if (err instanceof ReplyTargetMissingError) {
    return new PermanentSendError(FAILURE_REASONS.replyTargetNotFound, err.message);
  }
  // After a logout every failure is the logout's: retrying would only wait for a socket that is gone.
  if (retired) return new PermanentSendError(retired, 'the device was logged out');
  return undefined;
}
