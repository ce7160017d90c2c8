/**
 * A send job's send, holding the gate's ticket: the recipient's JID, the device's turn, the claim
 * of the message and the socket write. See processSendJob (send-job.ts).
 */
import type { Job } from 'bullmq';
import {
  FAILURE_REASONS,
  isChannelJid,
  isGroupJid,
  isStatusJid,
  type MessageContent,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import { NotAllowedInGroupError, ServerRejectedError, type QuoteTarget } from '@mgw/messenger';
import type { AdmittedClaim, ContactAnswer } from '@mgw/store';
import { readySince, type Lead } from './pacing.js';
import type { Caps, Ticket } from './send-gate.js';
import { sendContent } from './send-content.js';
import { PermanentSendError, reasonOf } from './send-errors.js';
import { holdForPausedBatch, holdMessage } from './hold-message.js';
import { abortable, endAttempt } from './send-attempt.js';
import { typingLead } from './typing.js';
import { handBack, refuseIfRetired } from './send-job-checks.js';
import type { SendJobDeps } from './send-job.js';
import { attemptTraceparent, inAttemptSpan, timedWait } from './send-spans.js';
import { HoldError, type EngineAttempt } from './send-engine.js';

/**
 * Looks the recipient up, waits for the device's turn, claims the message and sends it, holding
 * the gate's ticket: whatever stops it on the way gives the ticket's unit back. `pass` is the
 * ticket, or the caps the claim takes in the same step (passGate, capsWithClaim), which makes the
 * ticket. Answers the `sentAt` of an earlier send when the claim finds the message already sent,
 * else the ticket of the message just sent; with either, the platform's own id of the message when
 * it gave one (a cloud device's wamid).
 */
export async function sendHoldingTicket(
  job: Job<SendJobData, SendJobResult>,
  content: MessageContent,
  pass: Ticket | Caps,
  deps: SendJobDeps,
  token: string | undefined,
  known: ContactAnswer | undefined,
): Promise<({ alreadySentAt: string } | { ticket: Ticket }) & { platformMessageId?: string | undefined }> {
  const caps = 'take' in pass ? pass : undefined;
  let ticket = caps ? undefined : (pass as Ticket);
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
    // The engine's own rules last (a cloud device's window, pair rate, tier and throughput): a
    // message it passes is claimed and written at once.
    await deps.engine?.beforeClaim(job, content, token);
    const claimed = await claim(job, deps, token, caps);
    if ('alreadySentAt' in claimed) {
      await ticket?.release(); // counted when it was sent
      return claimed;
    }
    ticket ??= claimed.ticket!;
    const platformMessageId = await sendOrPause(job, content, jid, quoted, deps, token, claimed.claimedAt);
    return { ticket, platformMessageId };
  } catch (err) {
    await ticket?.release().catch(() => undefined);
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
  await timedWait('message.pace', () => deps.pacer.wait(typing, readySince(job)));
  refuseIfRetired(deps);
  if (deps.handingOver()) await handBack(job, token);
}

/** The claim found the message moved to another device of its pool (libs/store/src/pools/). */
export class MovedAway extends Error {}

/**
 * Claims the message right before the socket write. Answers when it was claimed (send it now: the
 * attempt's end is recorded against that time), or the `sentAt` of an earlier send of it; a
 * message past its expiry, of a cancelled batch or already failed fails; one of a batch paused
 * meanwhile waits, as does every message of a device paused meanwhile (the claim reads the batch
 * and the device's pause atomically). With `caps`, the claim takes the message's unit of the caps
 * in the same step and answers its ticket; caps used up hold the message unclaimed, a refused
 * claim takes nothing.
 */
async function claim(
  job: Job<SendJobData, SendJobResult>,
  deps: SendJobDeps,
  token: string | undefined,
  caps: Caps | undefined,
): Promise<{ claimedAt: number; ticket?: Ticket } | { alreadySentAt: string; platformMessageId?: string }> {
  const data = job.data;
  const claimedAt = Date.now();
  const once = { once: deps.engine?.once ?? false, engine: deps.engine?.name };
  let ticket: Ticket | undefined;
  let claimed: AdmittedClaim;
  if (caps) {
    const admitted = await deps.messages.claimAdmitted(
      data,
      caps.take,
      claimedAt,
      attemptTraceparent(),
      once,
    );
    claimed = admitted.outcome;
    if (claimed === 'claimed') ticket = caps.taken(admitted.first);
    if (claimed === 'daily_cap' || claimed === 'first_contact_cap') {
      const hold = caps.capped(claimed);
      await holdMessage(job, hold.held, hold.holdUntil, deps, token);
    }
  } else claimed = await deps.messages.claim(data, claimedAt, attemptTraceparent(), once);
  if (claimed === 'moved') throw new MovedAway('moved to another device of its pool');
  // An earlier attempt may have reached an engine with no idempotency key (its answer was lost, or
  // its process died mid-way): a second write could deliver the message twice.
  if (claimed === 'unknown')
    throw new PermanentSendError(
      FAILURE_REASONS.sendOutcomeUnknown,
      'an earlier attempt may have been sent; it is not sent blind again',
    );
  if (claimed === 'expired') throw new PermanentSendError(FAILURE_REASONS.otpExpired, 'past its expiry');
  if (claimed === 'deleted') throw new PermanentSendError(FAILURE_REASONS.deleted, 'deleted while queued');
  if (claimed === 'cancelled')
    throw new PermanentSendError(FAILURE_REASONS.cancelled, 'its batch was cancelled');
  if (claimed === 'paused') {
    await holdForPausedBatch(job, deps, token);
    // Resumed in the meantime: claim again.
    return claim(job, deps, token, caps);
  }
  if (claimed === 'restricted') {
    const pausedUntil = await deps.gate.restrictedUntil();
    if (pausedUntil !== undefined) await holdMessage(job, 'device_paused', pausedUntil, deps, token);
    // The pause ended in the meantime: claim again.
    return claim(job, deps, token, caps);
  }
  if (claimed !== 'failed' && claimed !== 'sent') return { claimedAt, ...(ticket ? { ticket } : {}) };
  const now = await deps.messages.getRecord(data.deviceId, data.messageId);
  if (now?.sentAt && now.status !== 'failed')
    return { alreadySentAt: now.sentAt, platformMessageId: now.platformMessageId };
  throw new PermanentSendError(reasonOf(now?.error), 'already failed');
}

/**
 * The socket write. A failed attempt first records whether its send began (endAttempt): one that
 * ended before the socket leaves the message as movable as one never claimed. When the server
 * refused it because of the account, not the message, it waits (same WhatsApp id, never
 * delivered) until the device's pause ends — or, of a pooled batch, moves meanwhile to another
 * device of its pool (a refused attempt did not begin its send). A device found down (a cloud
 * device whose token failed) holds the message until it is connected again. Answers the platform's
 * own id of the message when the engine gave one.
 */
async function sendOrPause(
  job: Job<SendJobData, SendJobResult>,
  content: MessageContent,
  jid: string,
  quoted: QuoteTarget | undefined,
  deps: SendJobDeps,
  token: string | undefined,
  claimedAt: number,
): Promise<string | undefined> {
  const attempt: EngineAttempt = { began: false, messageId: job.data.messageId };
  try {
    await inAttemptSpan('message.send', () =>
      abortable(sendContent(job.data, content, jid, quoted, deps, attempt), attempt, deps.retired),
    );
    return attempt.platformMessageId;
  } catch (err) {
    await endAttempt(job.data, claimedAt, attempt, deps);
    if (err instanceof HoldError) await holdMessage(job, err.held, err.until, deps, token);
    // WhatsApp refuses a group message of an account that may not write there (the cache was stale).
    if (isGroupJid(jid) && err instanceof ServerRejectedError && err.code === '403')
      throw new PermanentSendError(FAILURE_REASONS.notAllowedInGroup, err.message);
    const until = await deps.restriction.onSendFailed(err);
    if (until !== undefined) await holdMessage(job, 'device_paused', until, deps, token);
    throw err;
  }
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

/**
 * The message a reply quotes (`existingMessageId`, our id of it): one the device sent (once it
 * was sent), or one a contact sent it (as recorded). Another device's, an unknown or expired id,
 * or one of ours not sent: `reply_target_not_found`.
 */
async function replyTarget(messageId: string, deps: SendJobDeps): Promise<QuoteTarget> {
  const fields = await deps.messages.fields(deps.deviceId, messageId);
  const inbound = deps.inbound.quoteFromFields(deps.deviceId, messageId, fields);
  if (inbound) return { fromMe: false, ...inbound };
  const ours =
    fields.direction === 'inbound'
      ? undefined
      : await deps.messages.fromFields(deps.deviceId, messageId, fields);
  if (ours?.sentAt) return { fromMe: true, platformMessageId: ours.platformMessageId };
  throw new PermanentSendError(FAILURE_REASONS.replyTargetNotFound, 'reply target not found or not sent');
}
