import { DelayedError, type Job } from 'bullmq';
import { observeTraced, serializeError, type Logger } from '@mgw/common';
import {
  FAILURE_REASONS,
  type FailureReason,
  type MessageRecord,
  type Metrics,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import type {
  ContactIdentities,
  ContentStore,
  InboundStore,
  MessageKindStore,
  MessageRevisions,
  MessageStore,
} from '@mgw/store';
import type { AttachmentFetcher } from './media-source.js';
import type { Pacer } from './pacing.js';
import type { DeviceRestriction } from '../device/device-restriction.js';
import type { SendGate, Ticket } from './send-gate.js';
import { sendableContent, type SendContentDeps } from './send-content.js';
import { PermanentSendError, toPermanent } from './send-errors.js';
import { failedAttempt } from './send-failure.js';
import { holdMessage } from './hold-message.js';
import type { LinkPreviewer } from './link-preview.js';
import {
  capsWithClaim,
  passGate,
  readJobState,
  refuseKnownOffWhatsApp,
  refuseUnsendable,
  stopForBatch,
  waitForSocket,
} from './send-job-checks.js';
import { MovedAway, sendHoldingTicket } from './claim-and-send.js';
import { attemptTraceparent, traceAttempt } from './send-spans.js';
import type { JobConnection, JobSender, SendEngine } from './send-engine.js';

export interface SendJobDeps {
  deviceId: string;
  messages: MessageStore;
  /** A contact's message a reply quotes (claim-and-send's replyTarget). */
  inbound: Pick<InboundStore, 'quoteFromFields'>;
  contents: ContentStore;
  revisions: MessageRevisions;
  /** A text's link preview (link-preview.ts); none when absent. */
  linkPreview?: LinkPreviewer;
  /** The device's proxy now, for link previews and attachment URLs (docs/proxies.md). */
  proxyAgent?: SendContentDeps['proxyAgent'];
  /** The message kinds on records (reaction, location, contact cards, polls). */
  kinds: MessageKindStore;
  conn: JobConnection;
  sender: JobSender;
  /** The engine's rules around the claim (a cloud device's); none for a linked device. */
  engine?: SendEngine;
  pacer: Pacer;
  /** Caps, warm-up, quiet hours and the device's pause: held messages wait in the queue. */
  gate: SendGate;
  /** Turns WhatsApp's push-back (ack 463/429, failures in a row) into a pause of the device. */
  restriction: Pick<DeviceRestriction, 'onSendFailed' | 'onSent'>;
  /** Whether the number is on the device's suppression list (it opted out). */
  /** Whether the number opted out of the device (of any device of the pool, for a pooled message). */
  optedOut: (phone: string, poolId?: string) => Promise<boolean>;
  /** Whether the account blocked the recipient (its blocklist as the device's holder keeps it). */
  blocked?: (address: string) => Promise<boolean>;
  /** The device's phone <-> LID map: a send to a LID goes only to one the device has met. */
  identities: Pick<ContactIdentities, 'knowsLid'>;
  fetchAttachment: AttachmentFetcher;
  /** Uploaded media read for sends by `mediaId`. */
  media: SendContentDeps['media'];
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
  unrecorded: Map<string, SentAt>;
}

/** When a message was sent, and the id the platform gave it when that is not the enqueued one. */
export interface SentAt {
  at: Date;
  platformMessageId?: string;
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
  traceAttempt(job);
  const sentEarlier = deps.unrecorded.get(data.messageId);
  if (sentEarlier) return recordSent(data, sentEarlier, deps);
  // A pooled message moved to another device of its pool while it waited: that device sends it.
  if (data.poolId && (await deps.messages.movedTo(data))) return movedAway(data);
  const reads = readJobState(data, deps);
  const record = await reads.record;
  if (record?.sentAt && record.status !== 'failed')
    return result(data, record.sentAt, record.platformMessageId);
  try {
    await waitForPoolMove(job, record, deps, token);
    refuseUnsendable(data, record, deps);
    if (await reads.optedOut) throw new PermanentSendError(FAILURE_REASONS.optedOut, 'the number opted out');
    if (await reads.blocked)
      throw new PermanentSendError(FAILURE_REASONS.recipientBlocked, 'the account blocked the recipient');
    // Before the content is read: a paused batch's messages wait without loading it each time.
    await stopForBatch(job, await reads.batchStop, deps, token);
    const stored = await sendableContent(job, deps, token, reads.content);
    const known = await refuseKnownOffWhatsApp(data, await reads.known, deps);
    await waitForSocket(job, deps, token);
    // The gate decides after the socket wait, on what it read with the job's state; the caps are
    // taken then, or with the claim when nothing runs between the two.
    const pass = await passGate(job, deps, token, reads.gate, await capsWithClaim(data, known, deps));
    const sent = await sendHoldingTicket(job, stored.content, pass, deps, token, known);
    if ('alreadySentAt' in sent) return result(data, sent.alreadySentAt, sent.platformMessageId);
    const { sentAt, counted } = countSent(data, sent.ticket, deps);
    try {
      return await recordSent(data, { at: sentAt, platformMessageId: sent.platformMessageId }, deps);
    } finally {
      await counted;
    }
  } catch (err) {
    if (err instanceof MovedAway) return movedAway(data);
    // Logged out while it waited for its turn, or its attempt failed under the logout (after it,
    // every failure is the logout's): a pooled message waits for its pool instead.
    if (data.poolId && !(err instanceof DelayedError) && loggedOutBy(err, deps))
      await waitForPoolMove(job, record, deps, token).catch((e: unknown) => {
        throw e instanceof DelayedError ? e : err;
      });
    throw await failedAttempt(job, err, deps);
  }
}

/** Whether `err` ends the attempt as the device's logout: what failedAttempt would fail it with. */
function loggedOutBy(err: unknown, deps: SendJobDeps): boolean {
  return toPermanent(err, deps.retiredReason())?.reason === FAILURE_REASONS.loggedOut;
}

/** A moved message's job ends here with nothing sent and nothing recorded (`sentAt` empty). */
function movedAway(data: SendJobData): SendJobResult {
  return { messageId: data.messageId, platformMessageId: data.platformMessageId, phone: data.to, sentAt: '' };
}

/** How long a pooled message of a logged-out device waits for its pool to move it before it fails. */
export const POOL_MOVE_WAIT_MS = 10 * 60_000;

/**
 * A pooled message whose device was logged out (retired, or an earlier link's message) is not
 * failed at once: it waits (held `device_logged_out`) for its pool's mover to give it to another
 * device of the pool. Still here when that wait is over (no device of the pool could take it), it
 * fails `logged_out` as any other message of the device would; so does one whose send began here.
 */
async function waitForPoolMove(
  job: Job<SendJobData, SendJobResult>,
  record: MessageRecord | undefined,
  deps: SendJobDeps,
  token: string | undefined,
): Promise<void> {
  const data = job.data;
  if (!data.poolId || (!deps.retiredReason() && data.linkGeneration === deps.linkGeneration())) return;
  if (record?.held?.reason === 'device_logged_out') return;
  // Its send began here (it may have reached WhatsApp): it never moves, so it fails now. An attempt
  // that ended before the socket did not begin it (docs/architecture.md, "When a send began").
  if (await deps.messages.sendBegan(data)) return;
  await holdMessage(job, 'device_logged_out', Date.now() + POOL_MOVE_WAIT_MS, deps, token);
}

/**
 * The message went out: the failure run ends, the recipient is a chat now, the latency counts.
 * `counted` (never rejects) settles when the chat is remembered; the caller records "sent" in the
 * same tick, so both writes leave in one round trip.
 */
function countSent(
  data: SendJobData,
  ticket: Ticket,
  deps: SendJobDeps,
): { sentAt: Date; counted: Promise<void> } {
  deps.restriction.onSent();
  const counted = ticket.sent().catch((err: unknown) => {
    deps.logger.warn('sent message not counted as a chat', { err: serializeError(err) });
  });
  const sentAt = new Date();
  observeTraced(
    deps.metrics.sendLatency,
    { kind: data.kind },
    // A scheduled send's wait starts when it is due.
    Math.max(0, (sentAt.getTime() - Math.max(data.enqueuedAt, data.sendAt ?? 0)) / 1000),
  );
  return { sentAt, counted };
}

/**
 * Records "sent". When that fails (Redis away) the message is remembered, so the retry of this job
 * on this process records it instead of sending it again (another process could only re-send it
 * with the same WhatsApp id, which WhatsApp and the phone de-duplicate).
 */
async function recordSent(data: SendJobData, sent: SentAt, deps: SendJobDeps): Promise<SendJobResult> {
  try {
    await deps.messages.markSent(data, sent.at, attemptTraceparent(), sent.platformMessageId);
  } catch (err) {
    if (deps.unrecorded.size < MAX_UNRECORDED) deps.unrecorded.set(data.messageId, sent);
    throw err;
  }
  deps.unrecorded.delete(data.messageId);
  deps.metrics.messages.inc({ status: 'sent' });
  return result(data, sent.at.toISOString(), sent.platformMessageId);
}

/** The job's result; `platformMessageId`: the platform's own id of the message, when it gave one. */
function result(data: SendJobData, sentAt: string, platformMessageId?: string): SendJobResult {
  return {
    messageId: data.messageId,
    platformMessageId: platformMessageId ?? data.platformMessageId,
    phone: data.to,
    sentAt,
  };
}
