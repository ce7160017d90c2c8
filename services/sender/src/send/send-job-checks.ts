/**
 * Before a send job's send: what it reads with its state, what it refuses at once, and what it
 * waits for (its batch, the socket, the policy's gate). See processSendJob (send-job.ts).
 */
import { DelayedError, type Job } from 'bullmq';
import {
  FAILURE_REASONS,
  isAudienceJid,
  isChannelJid,
  isGroupJid,
  isLid,
  isStatusJid,
  isSendAddress,
  type MessageRecord,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import { NotConnectedError } from '@mgw/messenger';
import type { ContactAnswer } from '@mgw/store';
import type { Caps, GateReads, Ticket } from './send-gate.js';
import { PermanentSendError, reasonOf } from './send-errors.js';
import { holdForPausedBatch, holdMessage } from './hold-message.js';
import type { SendJobDeps } from './send-job.js';

/** Fails at once what must never go: a message already failed, or one the device can no longer send. */
export function refuseUnsendable(
  data: SendJobData,
  record: MessageRecord | undefined,
  deps: SendJobDeps,
): void {
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
  const unreachable = deps.engine?.unreachable(data.to);
  if (unreachable) throw new PermanentSendError(FAILURE_REASONS.invalidNumber, unreachable);
}

/**
 * What a job reads before it decides anything — its record, whether the number opted out, its
 * batch's state, the contact cache's answer, the gate's reads (the device's pause and policy), a
 * lone message's content —
 * asked in one tick, so the general connection's auto-pipelining sends them in one write (one
 * round trip instead of several in a row; the content, read next, is usually the sender's copy).
 * Each is awaited where it was read before, so a failed read fails the job where it did.
 *
 * A number on the suppression list gets nothing, and WhatsApp is asked nothing about it (not even
 * the lookup). OTPs go (the person asked for one), as does the confirmation of the opt-out itself.
 */
export function readJobState(data: SendJobData, deps: SendJobDeps) {
  const reads = {
    record: deps.messages.getRecord(data.deviceId, data.messageId),
    // A status's viewers who opted out are left out of its audience (send-content.ts).
    optedOut:
      data.kind === 'otp' || data.optOutNotice || isStatusJid(data.to) || isChannelJid(data.to)
        ? Promise.resolve(false)
        : deps.optedOut(data.to, data.poolId),
    // A batch's blocked recipients fail here, each on its own (a single send was refused by the API).
    blocked: deps.blocked && !isAudienceJid(data.to) ? deps.blocked(data.to) : Promise.resolve(false),
    batchStop: deps.gate.batchStop(data.batchId),
    // A LID or a group is not a number: the contact cache has nothing on it.
    known:
      isSendAddress(data.to) && !isLid(data.to) ? deps.sender.known(data.to) : Promise.resolve(undefined),
    gate: deps.gate.read(),
    // A message of no batch reads its content here too (a lone send's content is never cached
    // yet); a batch's messages share one content, which the sender keeps once read, and a paused
    // batch's messages wait without loading it.
    content: data.batchId ? undefined : deps.contents.get(data.deviceId, data.contentId),
  };
  // A read that is not awaited (an earlier one failed or ended the job) must not be an unhandled
  // rejection; awaiting it still throws.
  for (const read of Object.values(reads)) read?.catch(() => undefined);
  prefetch(data, reads.known, deps);
  return reads;
}

/**
 * What the send itself reads after the claim, read beside the job's own reads instead of one
 * after another once the send began: the pacer's settings (kept 5 s) in this tick, and the
 * recipient's Signal keys (its LID map entry, tctoken, session) once the contact cache answered.
 */
function prefetch(data: SendJobData, known: Promise<ContactAnswer | undefined>, deps: SendJobDeps): void {
  void deps.pacer.gapMs();
  if (isLid(data.to)) return deps.sender.prefetchKeys(data.to);
  void known.then(
    (answer) => answer?.onWhatsApp && answer.jid && deps.sender.prefetchKeys(answer.jid, answer.lid),
    () => undefined,
  );
}

/**
 * A number the device's contact cache knows is not on WhatsApp (a number check or an earlier send
 * found it) fails at once: no lookup, no wait for the socket or the caps.
 */
export async function refuseKnownOffWhatsApp(
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

export function refuseIfRetired(deps: SendJobDeps): void {
  const retired = deps.retiredReason();
  if (retired) throw new PermanentSendError(retired, 'the device was logged out');
}

/** Waits a moment for a dropped socket; then the attempt fails (or goes back when handing over). */
export async function waitForSocket(
  job: Job<SendJobData, SendJobResult>,
  deps: SendJobDeps,
  token: string | undefined,
): Promise<void> {
  if (await deps.conn.waitForOpen(deps.openWaitMs)) return;
  refuseIfRetired(deps);
  if (deps.handingOver()) await handBack(job, token);
  const down = deps.conn.downHold?.();
  if (down) await holdMessage(job, down.reason, down.until, deps, token);
  throw new NotConnectedError('the device socket did not open in time');
}

/**
 * The policy's gate. Over a cap, in quiet hours or while WhatsApp pushes back: wait in the queue,
 * no attempt used (and nothing asked of WhatsApp, not even the number lookup). `capsWithClaim`:
 * the caps are left to the claim (claim-and-send.ts), which takes them in the same step: answers
 * what it must take then, instead of a ticket.
 */
export async function passGate(
  job: Job<SendJobData, SendJobResult>,
  deps: SendJobDeps,
  token: string | undefined,
  reads: Promise<GateReads>,
  capsWithClaim: boolean,
): Promise<Ticket | Caps> {
  const verdict = capsWithClaim
    ? await deps.gate.decide(job.data, reads)
    : await deps.gate.admit(job.data, reads);
  if ('holdUntil' in verdict) await holdMessage(job, verdict.held, verdict.holdUntil, deps, token);
  return 'caps' in verdict ? verdict.caps : (verdict as { go: Ticket }).go;
}

/**
 * Whether the message's caps are taken with its claim (MessageStore.claimAdmitted: one round trip
 * instead of the admission's and then the claim's): only when nothing would run between the two
 * but reads of Redis. Not when its recipient is asked of WhatsApp first (a number the contact
 * cache does not know, a group's metadata): a message the caps hold is held before any question
 * to WhatsApp. Not when the device paces its sends: a message the caps hold must neither show
 * "typing…" nor spend the device's turn. The gap is the one read with the job's state.
 */
export async function capsWithClaim(
  data: SendJobData,
  known: ContactAnswer | undefined,
  deps: SendJobDeps,
): Promise<boolean> {
  const jidKnown = isStatusJid(data.to) || isChannelJid(data.to) || Boolean(known?.jid);
  return jidKnown && !isGroupJid(data.to) && (await deps.pacer.gapMs()) === 0;
}

/** A message of a cancelled batch fails now; one of a paused batch waits (held) until it resumes. */
export async function stopForBatch(
  job: Job<SendJobData, SendJobResult>,
  stop: 'cancelled' | 'paused' | undefined,
  deps: SendJobDeps,
  token: string | undefined,
): Promise<void> {
  if (stop === 'cancelled')
    throw new PermanentSendError(FAILURE_REASONS.cancelled, 'its batch was cancelled');
  if (stop === 'paused') await holdForPausedBatch(job, deps, token);
}

/** Not sent yet: give the job back without spending an attempt; the next owner sends it. */
export async function handBack(
  job: Job<SendJobData, SendJobResult>,
  token: string | undefined,
): Promise<never> {
  await job.moveToDelayed(Date.now() + 100, token);
  throw new DelayedError();
}
