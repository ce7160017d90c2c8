import { DelayedError, type Job } from 'bullmq';
import { serializeError, type Logger } from '@mgw/common';
import {
  FAILURE_REASONS,
  isAudienceJid,
  isChannelJid,
  isGroupJid,
  isLid,
  isStatusJid,
  isSendAddress,
  type FailureReason,
  type MessageContent,
  type MessageRecord,
  type Metrics,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import {
  NotAllowedInGroupError,
  NotConnectedError,
  ServerRejectedError,
  type DeviceSocket,
  type MessageSender,
  type SendAttempt,
} from '@mgw/messenger';
import type {
  ContactAnswer,
  ContactIdentities,
  ContentStore,
  MessageKindStore,
  MessageRevisions,
  MessageStore,
} from '@mgw/store';
import type { AttachmentFetcher } from './media-source.js';
import { readySince, type Lead, type Pacer } from './pacing.js';
import type { DeviceRestriction } from '../device/device-restriction.js';
import type { GateReads, SendGate, Ticket } from './send-gate.js';
import { sendableContent, sendContent, type SendContentDeps } from './send-content.js';
import { PermanentSendError, reasonOf, toPermanent } from './send-errors.js';
import { failedAttempt } from './send-failure.js';
import { holdForPausedList, holdMessage } from './hold-message.js';
import { abortable, endAttempt } from './send-attempt.js';
import { typingLead } from './typing.js';
import type { LinkPreviewer } from './link-preview.js';

export interface SendJobDeps {
  deviceId: string;
  messages: MessageStore;
  contents: ContentStore;
  revisions: MessageRevisions;
  /** A text's link preview (link-preview.ts); none when absent. */
  linkPreview?: LinkPreviewer;
  /** The device's proxy now, for link previews and attachment URLs (docs/proxies.md). */
  proxyAgent?: SendContentDeps['proxyAgent'];
  /** The message kinds on records (reaction, location, contact cards, polls). */
  kinds: MessageKindStore;
  conn: DeviceSocket;
  sender: MessageSender;
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
  // A pooled message moved to another device of its pool while it waited: that device sends it.
  if (data.poolId && (await deps.messages.movedTo(data))) return movedAway(data);
  const reads = readJobState(data, deps);
  const record = await reads.record;
  if (record?.sentAt && record.status !== 'failed') return result(data, record.sentAt);
  try {
    await waitForPoolMove(job, record, deps, token);
    refuseUnsendable(data, record, deps);
    if (await reads.optedOut) throw new PermanentSendError(FAILURE_REASONS.optedOut, 'the number opted out');
    if (await reads.blocked)
      throw new PermanentSendError(FAILURE_REASONS.recipientBlocked, 'the account blocked the recipient');
    // Before the content is read: a paused list's messages wait without loading it each time.
    await stopForList(job, await reads.listStop, deps, token);
    const stored = await sendableContent(job, deps, token);
    const known = await refuseKnownOffWhatsApp(data, await reads.known, deps);
    await waitForSocket(job, deps, token);
    // The gate decides after the socket wait, on what it read with the job's state.
    const ticket = await passGate(job, deps, token, reads.gate);
    const alreadySentAt = await sendHoldingTicket(job, stored.content, ticket, deps, token, known);
    if (alreadySentAt) return result(data, alreadySentAt);
    const { sentAt, counted } = countSent(data, ticket, deps);
    try {
      return await recordSent(data, sentAt, deps);
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

/** The claim found the message moved to another device of its pool (libs/store/src/pools/). */
class MovedAway extends Error {}

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

/** Fails at once what must never go: a message already failed, or one the device can no longer send. */
function refuseUnsendable(data: SendJobData, record: MessageRecord | undefined, deps: SendJobDeps): void {
  if (record?.status === 'failed') throw new PermanentSendError(reasonOf(record.error), 'already failed');
  if (record?.status === 'deleted')
    throw new PermanentSendError(FAILURE_REASONS.deleted, 'deleted while queued');
  refuseIfRetired(deps);
  if (data.linkGeneration !== deps.linkGeneration()) {
    throw new PermanentSendError(FAILURE_REASONS.loggedOut, 'accepted for an earlier link of the device');
  }
  if (!isSendAddress(data.to) && !isAudienceJid(data.to))
    throw new PermanentSendError(
      FAILURE_REASONS.invalidNumber,
      'not a phone number, a LID, a group, a status or a channel',
    );
}

/**
 * What a job reads before it decides anything — its record, whether the number opted out, its
 * list's state, the contact cache's answer, the gate's reads (the device's pause and policy) —
 * asked in one tick, so the general connection's auto-pipelining sends them in one write (one
 * round trip instead of several in a row; the content, read next, is usually the sender's copy).
 * Each is awaited where it was read before, so a failed read fails the job where it did.
 *
 * A number on the suppression list gets nothing, and WhatsApp is asked nothing about it (not even
 * the lookup). OTPs go (the person asked for one), as does the confirmation of the opt-out itself.
 */
function readJobState(data: SendJobData, deps: SendJobDeps) {
  const reads = {
    record: deps.messages.getRecord(data.deviceId, data.messageId),
    // A status's viewers who opted out are left out of its audience (send-content.ts).
    optedOut:
      data.kind === 'otp' || data.optOutNotice || isStatusJid(data.to) || isChannelJid(data.to)
        ? Promise.resolve(false)
        : deps.optedOut(data.to, data.poolId),
    // A list's blocked recipients fail here, each on its own (a single send was refused by the API).
    blocked: deps.blocked && !isAudienceJid(data.to) ? deps.blocked(data.to) : Promise.resolve(false),
    listStop: deps.gate.listStop(data.batchId),
    // A LID or a group is not a number: the contact cache has nothing on it.
    known:
      isSendAddress(data.to) && !isLid(data.to) ? deps.sender.known(data.to) : Promise.resolve(undefined),
    gate: deps.gate.read(),
  };
  // A read that is not awaited (an earlier one failed or ended the job) must not be an unhandled
  // rejection; awaiting it still throws.
  for (const read of Object.values(reads)) read.catch(() => undefined);
  return reads;
}

/**
 * A number the device's contact cache knows is not on WhatsApp (a number check or an earlier send
 * found it) fails at once: no lookup, no wait for the socket or the caps.
 */
async function refuseKnownOffWhatsApp(
  data: SendJobData,
  known: ContactAnswer | undefined,
  deps: SendJobDeps,
): Promise<ContactAnswer | undefined> {
  if (isLid(data.to)) {
    // A LID is its own JID. **Choice:** only one the device met (the contact wrote, or a lookup
    // or notification named it) is sent to; WhatsApp offers no lookup of a LID, and a message to
    // a stranger's LID would be a first contact nobody can check.
    if (!(await deps.identities.knowsLid(deps.deviceId, data.to)))
      throw new PermanentSendError(FAILURE_REASONS.unknownContact, 'a LID the device does not know');
    return { onWhatsApp: true, jid: data.to };
  }
  if (isAudienceJid(data.to)) return undefined;
  if (known && !known.onWhatsApp)
    throw new PermanentSendError(FAILURE_REASONS.notOnWhatsApp, 'number is not on WhatsApp (cached)');
  return known;
}

function refuseIfRetired(deps: SendJobDeps): void {
  const retired = deps.retiredReason();
  if (retired) throw new PermanentSendError(retired, 'the device was logged out');
}

/** Waits a moment for a dropped socket; then the attempt fails (or goes back when handing over). */
async function waitForSocket(
  job: Job<SendJobData, SendJobResult>,
  deps: SendJobDeps,
  token: string | undefined,
): Promise<void> {
  if (await deps.conn.waitForOpen(deps.openWaitMs)) return;
  refuseIfRetired(deps);
  if (deps.handingOver()) await handBack(job, token);
  throw new NotConnectedError('the device socket did not open in time');
}

/**
 * The policy's gate. Over a cap, in quiet hours or while WhatsApp pushes back: wait in the queue,
 * no attempt used (and nothing asked of WhatsApp, not even the number lookup).
 */
async function passGate(
  job: Job<SendJobData, SendJobResult>,
  deps: SendJobDeps,
  token: string | undefined,
  reads: Promise<GateReads>,
): Promise<Ticket> {
  const verdict = await deps.gate.admit(job.data, reads);
  if ('holdUntil' in verdict) await holdMessage(job, verdict.held, verdict.holdUntil, deps, token);
  return (verdict as { go: Ticket }).go;
}

/** A message of a cancelled list fails now; one of a paused list waits (held) until it resumes. */
async function stopForList(
  job: Job<SendJobData, SendJobResult>,
  stop: 'cancelled' | 'paused' | undefined,
  deps: SendJobDeps,
  token: string | undefined,
): Promise<void> {
  if (stop === 'cancelled') throw new PermanentSendError(FAILURE_REASONS.cancelled, 'its list was cancelled');
  if (stop === 'paused') await holdForPausedList(job, deps, token);
}

/**
 * Looks the recipient up, waits for the device's turn, claims the message and sends it, holding
 * the gate's ticket: whatever stops it on the way gives the ticket's unit back. Answers the
 * `sentAt` of an earlier send when the claim finds the message already sent, else undefined.
 */
async function sendHoldingTicket(
  job: Job<SendJobData, SendJobResult>,
  content: MessageContent,
  ticket: Ticket,
  deps: SendJobDeps,
  token: string | undefined,
  known: ContactAnswer | undefined,
): Promise<string | undefined> {
  try {
    // The cache was read with the job's state (refuseKnownOffWhatsApp): it is not read again —
    // a known JID is used, an unknown number is asked of WhatsApp.
    const jid =
      isStatusJid(job.data.to) || isChannelJid(job.data.to)
        ? job.data.to
        : isGroupJid(job.data.to)
          ? await groupTarget(job.data.to, deps)
          : (known?.jid ?? (await deps.sender.lookup(job.data.to, false)));
    if (!jid) throw new PermanentSendError(FAILURE_REASONS.notOnWhatsApp, 'number is not on WhatsApp');
    const quoted = content.existingMessageId ? await replyTarget(content.existingMessageId, deps) : undefined;
    await waitForTurn(job, deps, token, await typingLead(job.data, content, jid, deps));
    const claimed = await claim(job, deps, token);
    if ('alreadySentAt' in claimed) {
      await ticket.release(); // counted when it was sent
      return claimed.alreadySentAt;
    }
    await sendOrPause(job, content, jid, quoted, deps, token, claimed.claimedAt);
    return undefined;
  } catch (err) {
    await ticket.release().catch(() => undefined);
    throw err;
  }
}

/**
 * The pacer's wait for the device's next send. Whatever happened meanwhile is looked at again:
 * the device was logged out or is being handed over (a pause that began meanwhile is the claim's
 * to see: it reads the device's pause atomically with the claim).
 */
async function waitForTurn(
  job: Job<SendJobData, SendJobResult>,
  deps: SendJobDeps,
  token: string | undefined,
  typing?: Lead,
): Promise<void> {
  await deps.pacer.wait(typing, readySince(job));
  refuseIfRetired(deps);
  if (deps.handingOver()) await handBack(job, token);
}

/**
 * Claims the message right before the socket write. Answers when it was claimed (send it now: the
 * attempt's end is recorded against that time), or the `sentAt` of an earlier send of it; a
 * message past its expiry, of a cancelled list or already failed fails; one of a list paused
 * meanwhile waits, as does every message of a device paused meanwhile (the claim reads the list
 * and the device's pause atomically).
 */
async function claim(
  job: Job<SendJobData, SendJobResult>,
  deps: SendJobDeps,
  token: string | undefined,
): Promise<{ claimedAt: number } | { alreadySentAt: string }> {
  const data = job.data;
  const claimedAt = Date.now();
  const claimed = await deps.messages.claim(data, claimedAt);
  if (claimed === 'moved') throw new MovedAway('moved to another device of its pool');
  if (claimed === 'expired') throw new PermanentSendError(FAILURE_REASONS.otpExpired, 'past its expiry');
  if (claimed === 'deleted') throw new PermanentSendError(FAILURE_REASONS.deleted, 'deleted while queued');
  if (claimed === 'cancelled')
    throw new PermanentSendError(FAILURE_REASONS.cancelled, 'its list was cancelled');
  if (claimed === 'paused') {
    await holdForPausedList(job, deps, token);
    // Resumed in the meantime: claim again.
    return claim(job, deps, token);
  }
  if (claimed === 'restricted') {
    const pausedUntil = await deps.gate.restrictedUntil();
    if (pausedUntil !== undefined) await holdMessage(job, 'device_paused', pausedUntil, deps, token);
    // The pause ended in the meantime: claim again.
    return claim(job, deps, token);
  }
  if (claimed !== 'failed' && claimed !== 'sent') return { claimedAt };
  const now = await deps.messages.getRecord(data.deviceId, data.messageId);
  if (now?.sentAt && now.status !== 'failed') return { alreadySentAt: now.sentAt };
  throw new PermanentSendError(reasonOf(now?.error), 'already failed');
}

/**
 * The socket write. A failed attempt first records whether its send began (endAttempt): one that
 * ended before the socket leaves the message as movable as one never claimed. When the server
 * refused it because of the account, not the message, it waits (same WhatsApp id, never
 * delivered) until the device's pause ends — or, of a pooled list, moves meanwhile to another
 * device of its pool (a refused attempt did not begin its send).
 */
async function sendOrPause(
  job: Job<SendJobData, SendJobResult>,
  content: MessageContent,
  jid: string,
  quoted: string | undefined,
  deps: SendJobDeps,
  token: string | undefined,
  claimedAt: number,
): Promise<void> {
  const attempt: SendAttempt = { began: false };
  try {
    await abortable(sendContent(job.data, content, jid, quoted, deps, attempt), attempt, deps.retired);
  } catch (err) {
    await endAttempt(job.data, claimedAt, attempt, deps);
    // WhatsApp refuses a group message of an account that may not write there (the cache was stale).
    if (isGroupJid(jid) && err instanceof ServerRejectedError && err.code === '403')
      throw new PermanentSendError(FAILURE_REASONS.notAllowedInGroup, err.message);
    const until = await deps.restriction.onSendFailed(err);
    if (until !== undefined) await holdMessage(job, 'device_paused', until, deps, token);
    throw err;
  }
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
  deps.metrics.sendLatency.observe(
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

/** Not sent yet: give the job back without spending an attempt; the next owner sends it. */
async function handBack(job: Job<SendJobData, SendJobResult>, token: string | undefined): Promise<never> {
  await job.moveToDelayed(Date.now() + 100, token);
  throw new DelayedError();
}

function result(data: SendJobData, sentAt: string): SendJobResult {
  return { messageId: data.messageId, platformMessageId: data.platformMessageId, phone: data.to, sentAt };
}

/**
 * A group's JID once the account may write there (from the group cache: no query per send); a
 * group it is not in, or one where only admins write and it is not one, fails the message.
 */
async function groupTarget(jid: string, deps: SendJobDeps): Promise<string> {
  try {
    await deps.conn.groups.assertMaySend(jid);
  } catch (err) {
    if (err instanceof NotAllowedInGroupError)
      throw new PermanentSendError(FAILURE_REASONS.notAllowedInGroup, err.message);
    throw err;
  }
  return jid;
}

async function replyTarget(messageId: string, deps: SendJobDeps): Promise<string> {
  const target = await deps.messages.get(deps.deviceId, messageId);
  if (!target || !target.sentAt) {
    throw new PermanentSendError(FAILURE_REASONS.replyTargetNotFound, 'reply target not found or not sent');
  }
  return target.platformMessageId;
}
