import { newMessageId, newPlatformMessageId, type MessageRecord, type SendJobData } from '@mgw/contracts';
import type { ExpireOutcome, MessageStore } from '@mgw/store';
import type { Accepted, SendRequest } from '../../enqueue/job-writer.js';
import type { MessageAcceptor } from '../../enqueue/message-acceptor.js';
import type { Refusal } from '../../enqueue/refusal.js';

/**
 * TEST SUPPORT, not used by the API: the send pipeline's two ends a use case talks to, in memory,
 * for the fast tests of the use cases that queue messages (a send, an edit or delete, a status, a
 * channel post, an OTP, a pooled batch): the acceptor that takes requests (one job per recipient,
 * or a refusal the test chose) and the message records its jobs leave, which a test then moves
 * on as the sender would (`sent`, `failed`).
 */

/** The message records, as libs/store's MessageStore answers them. */
export class MemoryMessages implements Pick<
  MessageStore,
  'get' | 'job' | 'markDeleted' | 'findByPlatformId'
> {
  readonly records = new Map<string, MessageRecord>();
  readonly jobs = new Map<string, SendJobData>();
  /** platformMessageId -> messageId, per device (what a sent message's receipts name). */
  readonly platformIds = new Map<string, string>();

  private key = (deviceId: string, messageId: string) => `${deviceId}\n${messageId}`;

  /** A job's record as the accept writes it: queued, or scheduled until its `sendAt`. */
  queued(job: SendJobData): void {
    this.jobs.set(this.key(job.deviceId, job.messageId), job);
    this.records.set(this.key(job.deviceId, job.messageId), {
      messageId: job.messageId,
      deviceId: job.deviceId,
      to: job.to,
      status: job.sendAt !== undefined ? 'scheduled' : 'queued',
      kind: job.kind,
      platformMessageId: job.platformMessageId,
      ...(job.batchId !== undefined ? { batchId: job.batchId } : {}),
      createdAt: new Date(job.enqueuedAt).toISOString(),
      ...(job.sendAt !== undefined ? { sendAt: new Date(job.sendAt).toISOString() } : {}),
      direction: 'outbound',
    });
  }

  /** Any record (an inbound one, one of another device…), as a test needs it. */
  put(record: MessageRecord): void {
    this.records.set(this.key(record.deviceId, record.messageId), record);
  }

  /** The message was sent at `at` (as the sender marks it). */
  sent(deviceId: string, messageId: string, at = new Date()): void {
    const r = this.records.get(this.key(deviceId, messageId))!;
    Object.assign(r, { status: 'sent', sentAt: at.toISOString() });
    this.jobs.delete(this.key(deviceId, messageId));
    this.platformIds.set(this.key(deviceId, r.platformMessageId), messageId);
  }

  /** The message failed with `error` (as the sender marks it). */
  failed(deviceId: string, messageId: string, error: string): void {
    Object.assign(this.records.get(this.key(deviceId, messageId))!, { status: 'failed', error });
    this.jobs.delete(this.key(deviceId, messageId));
  }

  async get(deviceId: string, messageId: string): Promise<MessageRecord | undefined> {
    const r = this.records.get(this.key(deviceId, messageId));
    return r && { ...r };
  }

  async job(deviceId: string, messageId: string): Promise<SendJobData | undefined> {
    return this.jobs.get(this.key(deviceId, messageId));
  }

  async findByPlatformId(deviceId: string, platformMessageId: string): Promise<string | undefined> {
    return this.platformIds.get(this.key(deviceId, platformMessageId));
  }

  /** As the store's script: a message still queued is deleted unless its send began (`claimed`). */
  async markDeleted(job: SendJobData, at: Date, unsent: boolean): Promise<ExpireOutcome> {
    const r = this.records.get(this.key(job.deviceId, job.messageId));
    if (!r || r.status === 'deleted' || r.status === 'failed') return 'final';
    if (unsent && r.status !== 'queued' && r.status !== 'scheduled') return 'claimed';
    if (unsent && r.sendBegan) return 'claimed';
    Object.assign(r, { status: 'deleted', deletedAt: at.toISOString() });
    this.jobs.delete(this.key(job.deviceId, job.messageId));
    return 'expired';
  }
}

/**
 * The acceptor: each request kept (`requests`), answered with one job per recipient in order (the
 * ids the request gave, or new ones), its records written to `messages` when given — or with the
 * next of `refusals`, when the test queued one.
 */
export class MemoryAcceptor implements Pick<MessageAcceptor, 'accept'> {
  readonly requests: SendRequest[] = [];
  readonly refusals: Refusal[] = [];

  constructor(readonly messages?: MemoryMessages) {}

  async accept(req: SendRequest): Promise<Accepted | Refusal> {
    this.requests.push(req);
    const refusal = this.refusals.shift();
    if (refusal) return refusal;
    const contentId = req.contentId ?? newMessageId();
    const jobs = req.recipients.map((to, i): SendJobData => ({
      kind: req.kind,
      messageId: req.messageIds?.[i] ?? newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId: req.deviceId,
      to,
      contentId,
      linkGeneration: 0,
      enqueuedAt: Date.now(),
      ...(req.batchId !== undefined ? { batchId: req.batchId } : {}),
      ...(req.sendAt !== undefined ? { sendAt: req.sendAt } : {}),
      ...(req.expiresAt !== undefined ? { expiresAt: req.expiresAt } : {}),
      ...(req.poolId !== undefined ? { poolId: req.poolId } : {}),
    }));
    jobs.forEach((job) => this.messages?.queued(job));
    return { kind: 'accepted', jobs };
  }
}
