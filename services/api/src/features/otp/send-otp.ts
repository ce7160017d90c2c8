import { observeTraced } from '@mgw/common';
import {
  FAILURE_REASONS,
  PRIORITY,
  renderOtp,
  type Metrics,
  type OtpBody,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import type { MessageStore } from '@mgw/store';
import type { JobOutcome } from '../../clients/queue-events-pool.js';
import type { MessageAcceptor } from '../../enqueue/message-acceptor.js';
import { blocklistAddress, isRefusal, type BlocklistLookup, type Refusal } from '../../enqueue/refusal.js';
import { idsOf } from '../send/index.js';
import { acceptOrUnknown, type AcceptUnknown } from '../../enqueue/job-writer.js';
import { cloudOtpTemplate, type CloudSendDeps } from '../cloud-send/index.js';

/** How long the API keeps waiting for an OTP whose send attempt had started when time ran out. */
const IN_FLIGHT_GRACE_MS = 20_000;

export interface OtpDeps {
  /** Accepts the OTP and waits for it; after the wait, its job is removed or its attempt waited for. */
  acceptor: Pick<MessageAcceptor, 'acceptAndWait' | 'waitFor'> & {
    queue(deviceId: string): { remove(messageId: string): Promise<unknown> };
  };
  messages: Pick<MessageStore, 'expireUnclaimed' | 'get'>;
  metrics: Metrics;
  otpWaitTimeoutMs: number;
  blocklist?: BlocklistLookup;
  /** A cloud device sends its authentication template instead of the text (features/cloud-send). */
  cloudSend: CloudSendDeps;
}

/**
 * What an OTP came to: sent (with WhatsApp's message id and when), failed (the job's reason), not
 * sent in time (`timeout`: it never will be; `uncertain`: an attempt outlived the extra wait), or
 * refused before anything was written. Each but the refusal names the OTP's messageId.
 */
export type OtpOutcome =
  | { kind: 'sent'; messageId: string; platformMessageId: string; phone: string; sentAt: string }
  | { kind: 'failed'; messageId: string; reason: string }
  | { kind: 'timeout' | 'uncertain'; messageId: string }
  | AcceptUnknown
  | Refusal;

/**
 * POST /otp: an OTP job jumps the device's queue (priority), and the API waits for it (bounded)
 * because the answer carries the WhatsApp message id and the time it was sent.
 * Sent; failed; or not sent in time — and then it never will be: the message is expired
 * atomically unless an attempt already started, in which case the API waits for that attempt to
 * end (a later attempt is refused by the job's own expiry).
 */
export async function sendOtp(
  deps: OtpDeps,
  deviceId: string,
  body: OtpBody,
  /** An `Idempotency-Key`'s seed: the OTP's id is the key's, the same in every run of it. */
  seed?: string,
): Promise<OtpOutcome> {
  const started = process.hrtime.bigint();
  // A blocked number is refused by the accept call itself (no round trip of its own).
  const blocklistCheck = blocklistAddress(deps.blocklist, deviceId, body.phone);
  const ids = seed === undefined ? undefined : idsOf(seed, 1);
  // A cloud device sends the code in its authentication template (the code is sealed in the
  // content either way, and its record keeps only the template's name: kindFieldsOf).
  const template = await cloudOtpTemplate(deps.cloudSend, deviceId, body.code, body.language);
  if (template && isRefusal(template)) return template;
  const otp = { language: body.language };
  const content = template ? { template, otp } : { text: renderOtp(body.code, body.language), otp };
  const accepted = await acceptOrUnknown(ids, undefined, () =>
    deps.acceptor.acceptAndWait(
      {
        deviceId,
        kind: 'otp',
        recipients: [body.phone],
        content,
        priority: PRIORITY.otp,
        expiresAt: Date.now() + deps.otpWaitTimeoutMs,
        ...(blocklistCheck !== undefined ? { blocklistCheck } : {}),
        ...(ids ? { idempotent: true, messageIds: ids.messageIds } : {}),
      },
      deps.otpWaitTimeoutMs,
    ),
  );
  if (isRefusal(accepted) || accepted.kind === 'unknown') return accepted;
  const { job, outcome: first } = accepted;
  const outcome =
    first.kind === 'timeout' || first.kind === 'removed' ? await afterTimeout(deps, job) : first;

  if (outcome.kind === 'timeout' || outcome.kind === 'uncertain')
    return { kind: outcome.kind, messageId: job.messageId };
  if (outcome.kind === 'failed') return { kind: 'failed', messageId: job.messageId, reason: outcome.reason };
  const result = outcome.value;
  deps.metrics.otpSent.inc({ language: body.language });
  observeTraced(deps.metrics.otpLatency, {}, Number(process.hrtime.bigint() - started) / 1e9);
  return {
    kind: 'sent',
    messageId: job.messageId,
    platformMessageId: result.platformMessageId ?? job.platformMessageId,
    phone: result.phone ?? body.phone,
    sentAt: result.sentAt,
  };
}

/** The wait ran out: expire the OTP, or — if a send attempt is under way — wait for that attempt. */
async function afterTimeout(
  deps: OtpDeps,
  job: SendJobData,
): Promise<Exclude<JobOutcome<SendJobResult>, { kind: 'removed' }> | { kind: 'uncertain' }> {
  const expired = await deps.messages.expireUnclaimed(job, FAILURE_REASONS.otpExpired);
  if (expired === 'expired') {
    await deps.acceptor
      .queue(job.deviceId)
      .remove(job.messageId)
      .catch(() => 0);
    return { kind: 'timeout' };
  }
  if (expired === 'claimed') {
    const last = await deps.acceptor.waitFor(job, IN_FLIGHT_GRACE_MS);
    if (last.kind === 'completed' || last.kind === 'failed') return last;
  }
  // Settled already (or removed meanwhile): the record says how it ended.
  const record = await deps.messages.get(job.deviceId, job.messageId);
  if (record?.status === 'failed')
    return { kind: 'failed', reason: record.error ?? FAILURE_REASONS.sendFailed };
  if (record?.sentAt) {
    const value = { messageId: job.messageId, platformMessageId: job.platformMessageId, phone: job.to };
    return { kind: 'completed', value: { ...value, sentAt: record.sentAt } };
  }
  // The attempt outlived the grace (e.g. a slow upload): say so rather than promise anything.
  return { kind: 'uncertain' };
}
