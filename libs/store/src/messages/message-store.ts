import type { RedisClient } from '@mgw/common';
import {
  BULL_PREFIX,
  MESSAGE_STATUS_RANK,
  type DeviceEngine,
  type HeldReason,
  keys,
  sendQueueName,
  type MessageRecord,
  type MessageStatus,
  type SendJobData,
} from '@mgw/contracts';
import { DEVICE_ACTIVITY_TTL_SECONDS } from '../devices/device-activity.js';
import { USAGE_TTL_SECONDS } from '../workspaces/usage.js';
import { capTakeCall, type CapTake } from '../policy/admission.js';
import { publicRecord, recordBase } from './message-record.js';
import {
  ATTEMPT_END,
  CLAIM,
  CLAIM_ADMIT,
  HOLD,
  RECEIPT,
  TRANSITION,
  type AdmittedClaim,
  type ClaimOutcome,
} from './message-scripts.js';

/**
 * How long the device's last claim (`keys.devicePace`) is kept: longer than any gap a device paces
 * by (a sender taking the device over waits out the rest of the gap from it), short enough that an
 * idle device leaves nothing behind.
 */
const PACE_TTL_SECONDS = 3600;

/** A delivery or read receipt for one of the device's messages, by its WhatsApp id. */
export interface ReceiptInput {
  platformMessageId: string;
  status: 'delivered' | 'read';
  at: Date;
}

/** A receipt that moved its message forward (MessageStore.markReceipts). */
export interface AppliedReceipt extends ReceiptInput {
  /**
   * A read receipt that also made the message delivered: its delivery receipt had not come (or
   * came merged into the read one), so the message's `message.delivered` event went out with it.
   */
  impliedDelivery?: true;
  /** The message's trace (asked for and kept). */
  traceparent?: string;
}

export type ExpireOutcome = 'expired' | 'claimed' | 'final';

/**
 * What a transition must respect besides moving forward: `true`, no send attempt has started
 * (refused as claimed otherwise); `'sent'`, a failure may follow `sent` (markFailedAfterSent).
 */
type TransitionGuard = boolean | 'sent';

export interface ClaimOptions {
  /**
   * The engine has no idempotency key (the Cloud API): a message an earlier attempt may have
   * handed to it is refused ('unknown') instead of claimed for a second write. Without it, a
   * linked device's retry re-sends the same WhatsApp id, which WhatsApp de-duplicates.
   */
  once?: boolean;
  /**
   * The engine the attempt goes through, kept on the record (`engine`) when it is not the default:
   * a record without one was attempted by a linked device (docs/cloud-api.md "Records").
   */
  engine?: DeviceEngine;
}
export type { AdmittedClaim, ClaimOutcome } from './message-scripts.js';
export { recordBase } from './message-record.js';

/**
 * Message records (`keys.message`, per device). A queued message has no record: its job is its
 * record until something happens to it, so accepting a batch writes one job per recipient and
 * nothing else. Every later change goes through one script (message-scripts.ts) that moves the
 * status only forward (`failed` only from `queued`, nothing out of `failed`), creates the record
 * from the job's fields when needed, and settles the message exactly once: the device's queue
 * quota is given back and the request's content is released with its last message.
 */
export class MessageStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly retentionSeconds: number,
  ) {}

  /** A message of the device: its record, or — while it is queued — what its job says. */
  async get(deviceId: string, messageId: string): Promise<MessageRecord | undefined> {
    return this.fromFields(deviceId, messageId, await this.fields(deviceId, messageId));
  }

  /**
   * The message's record as stored (`{}` when there is none), for a reader that opens an inbound
   * one itself (`InboundStore.fromFields`) without reading it twice; else `fromFields`.
   */
  fields(deviceId: string, messageId: string): Promise<Record<string, string>> {
    return this.redis.hgetall(keys.message(deviceId, messageId));
  }

  /** What `get` answers, from the record's fields read by `fields`. */
  async fromFields(
    deviceId: string,
    messageId: string,
    h: Record<string, string>,
  ): Promise<MessageRecord | undefined> {
    if (h.messageId) return publicRecord(h);
    // No record yet: the message is queued and its job holds its fields.
    const job = await this.job(deviceId, messageId);
    if (!job) return undefined;
    return publicRecord({ ...recordBase(job), ...h });
  }

  /** The message's send job while it is in its queue (undefined once removed, or another device's). */
  async job(deviceId: string, messageId: string): Promise<SendJobData | undefined> {
    const raw = await this.redis.hget(`${BULL_PREFIX}:${sendQueueName(deviceId)}:${messageId}`, 'data');
    const job = raw ? (JSON.parse(raw) as SendJobData) : undefined;
    return job && job.messageId === messageId && job.deviceId === deviceId ? job : undefined;
  }

  /**
   * The content an outbound message was sent from (its record's `contentId`, or its job's while it
   * is queued): undefined for an OTP (its code is never shown) and for an inbound message.
   */
  async contentIdOf(
    deviceId: string,
    messageId: string,
    record?: Record<string, string>,
  ): Promise<string | undefined> {
    const [contentId, kind, direction] = record
      ? [record.contentId, record.kind, record.direction]
      : await this.redis.hmget(keys.message(deviceId, messageId), 'contentId', 'kind', 'direction');
    if (direction === 'inbound') return undefined;
    if (contentId) return kind === 'otp' ? undefined : contentId;
    const job = await this.job(deviceId, messageId);
    return job && job.kind !== 'otp' ? job.contentId : undefined;
  }

  /** The message's record, without looking at its job: undefined while it is queued and untouched. */
  async getRecord(deviceId: string, messageId: string): Promise<MessageRecord | undefined> {
    const h = await this.redis.hgetall(keys.message(deviceId, messageId));
    return h.messageId ? publicRecord(h) : undefined;
  }

  /**
   * Whether the message's send began on its device — an attempt may have handed it to the socket,
   * or one is under way — so that it never moves to another device of its pool and a logout fails
   * it (docs/architecture.md, "When a send began"). An attempt that ended before the socket
   * (`endAttempt` with `reachedSocket: false`) leaves none of this.
   */
  async sendBegan(job: SendJobData): Promise<boolean> {
    const [claimed, began] = await this.redis.hmget(
      keys.message(job.deviceId, job.messageId),
      'sendingAt',
      'sendBegan',
    );
    return claimed !== null || began !== null;
  }

  /** The device a pooled message moved to (its record here says so), if it moved. */
  async movedTo(job: SendJobData): Promise<string | undefined> {
    return (await this.redis.hget(keys.message(job.deviceId, job.messageId), 'movedTo')) ?? undefined;
  }

  async findByPlatformId(deviceId: string, platformMessageId: string): Promise<string | undefined> {
    return (await this.redis.get(keys.messageByPlatformId(deviceId, platformMessageId))) ?? undefined;
  }

  /**
   * Called right before the message is written to the socket: records that an attempt started
   * (so an OTP can no longer be expired under it) and maps the WhatsApp id back to ours for
   * receipts. Refuses a message that is already failed or, for an OTP, past its expiry, and
   * claims nothing while the device is paused (`restricted`: the sender holds the message).
   */
  async claim(
    job: SendJobData,
    now = Date.now(),
    traceparent?: string,
    opts: ClaimOptions = {},
  ): Promise<ClaimOutcome> {
    const call = this.claimCall(job, now, traceparent, opts.engine);
    return CLAIM.run(this.redis, call.keys, [...call.args, opts.once ? '1' : '0']);
  }

  /**
   * `claim`, taking the message's unit of the device's caps (`take`, see admitMessage) in the same
   * atomic step, for a message with nothing to do between its admission and its claim: the reasons
   * not to claim come first (nothing taken), then the caps (a held message is not claimed).
   * `first`: the recipient is a first contact (of a claimed message).
   */
  async claimAdmitted(
    job: SendJobData,
    take: CapTake,
    now = Date.now(),
    traceparent?: string,
    opts: ClaimOptions = {},
  ): Promise<{ outcome: AdmittedClaim; first: boolean }> {
    const call = this.claimCall(job, now, traceparent, opts.engine);
    const caps = capTakeCall(job.deviceId, take);
    const [outcome, first] = await CLAIM_ADMIT.run(
      this.redis,
      [...call.keys, ...caps.keys],
      [...call.args, ...caps.args, opts.once ? '1' : '0'],
    );
    return { outcome, first: first === 1 };
  }

  private claimCall(
    job: SendJobData,
    now: number,
    traceparent: string | undefined,
    engine: DeviceEngine | undefined,
  ) {
    const [batch, held] = batchKeys(job);
    return {
      keys: [
        keys.message(job.deviceId, job.messageId),
        keys.messageByPlatformId(job.deviceId, job.platformMessageId),
        batch,
        held,
        keys.deviceRestriction(job.deviceId),
        keys.devicePace(job.deviceId),
      ],
      args: [
        job.messageId,
        this.retentionSeconds,
        now,
        job.expiresAt === undefined ? '' : job.expiresAt,
        // Its trace from the claim on (tracing on): a receipt can overtake the record of "sent".
        JSON.stringify({
          ...recordBase(job),
          ...traced(traceparent),
          ...(engine && engine !== 'linked' ? { engine } : {}),
        }),
        job.batchId ? '1' : '0',
        PACE_TTL_SECONDS,
      ],
    };
  }

  /**
   * Records that the sender holds the queued message until `until` (ms) for `reason` (shown as
   * `held` on its record, counted in its batch's `counts.held`) until it is claimed or leaves
   * `queued`. False when it was not held: it is no longer queued, or (`batch_paused`) its batch
   * is no longer paused.
   */
  async hold(job: SendJobData, reason: HeldReason, until: number): Promise<boolean> {
    const [batch, held] = batchKeys(job);
    const args = [
      job.messageId,
      reason,
      new Date(until).toISOString(),
      this.retentionSeconds,
      job.batchId ? '1' : '0',
    ];
    return (await HOLD.run(this.redis, [keys.message(job.deviceId, job.messageId), batch, held], args)) === 1;
  }

  /**
   * Records how an attempt claimed at `claimedAt` (the `now` given to `claim`) ended when the
   * message was not sent: `reachedSocket` — a frame of it may have been handed to the socket
   * (its send began, for good: it never moves, a logout fails it); else nothing of it reached
   * WhatsApp, or WhatsApp refused it with an error ack, and the attempt's claim goes (the message
   * is as movable as one never claimed; `unsentAttempts` counts it). False when nothing was
   * recorded: the record is gone, or its claim is another attempt's.
   */
  async endAttempt(job: SendJobData, claimedAt: number, reachedSocket: boolean): Promise<boolean> {
    const args = [claimedAt, reachedSocket ? '1' : '0'];
    return (await ATTEMPT_END.run(this.redis, [keys.message(job.deviceId, job.messageId)], args)) === 1;
  }

  /**
   * Records "sent". `platformMessageId`: the id the platform gave the message when it is not the
   * one fixed at enqueue time (the Cloud API answers its `wamid.…`): the record takes it, and it
   * maps back to the message as the claim's mapping does, so statuses and replies find it.
   */
  async markSent(
    job: SendJobData,
    sentAt: Date,
    traceparent?: string,
    platformMessageId?: string,
  ): Promise<boolean> {
    const given = platformMessageId !== undefined && platformMessageId !== job.platformMessageId;
    const fields = {
      sentAt: sentAt.toISOString(),
      ...(given ? { platformMessageId } : {}),
      ...traced(traceparent),
    };
    // Issued in one tick with the transition (one write): the mapping first, so a status that
    // follows the record's "sent" finds the message.
    const mapped = given
      ? this.redis.set(
          keys.messageByPlatformId(job.deviceId, platformMessageId),
          job.messageId,
          'EX',
          this.retentionSeconds,
        )
      : undefined;
    const changed = this.transition(job, 'sent', fields, true);
    await mapped;
    return (await changed) === 1;
  }

  /** Fails a queued message for good and settles it; false when it was already further along. */
  async markFailed(job: SendJobData, error: string, at = new Date(), traceparent?: string): Promise<boolean> {
    const fields = { failedAt: at.toISOString(), error, ...traced(traceparent) };
    return (await this.transition(job, 'failed', fields, true)) === 1;
  }

  /**
   * Fails the message only if no attempt to send it has started (used when the API gives up
   * waiting for an OTP: the answer says it will not be sent, so it must not be).
   */
  async expireUnclaimed(job: SendJobData, error: string, at = new Date()): Promise<ExpireOutcome> {
    const r = await this.transition(job, 'failed', { failedAt: at.toISOString(), error }, true, true);
    return r === 1 ? 'expired' : r === -1 ? 'claimed' : 'final';
  }

  /**
   * Marks the message `deleted` (final) and announces `message.deleted`. `unsent`: it is still
   * queued — deleted only if no send attempt started (answers 'claimed' otherwise), and settled
   * (quota and content released); its job finds it deleted and sends nothing (the claim refuses it).
   */
  async markDeleted(job: SendJobData, at: Date, unsent: boolean): Promise<ExpireOutcome> {
    const r = await this.transition(job, 'deleted', { deletedAt: at.toISOString() }, unsent, unsent);
    return r === 1 ? 'expired' : r === -1 ? 'claimed' : 'final';
  }

  /**
   * Fails a message its engine accepted and reported failed later: the Cloud API answers a send
   * with its wamid (the record turns `sent`) and tells by status webhook that it could not be
   * delivered. Moves `queued` or `sent` to `failed` (never delivered or read: those got there) and
   * announces `message.failed`; settles nothing (the send settled it). False when it did not move.
   */
  async markFailedAfterSent(
    deviceId: string,
    messageId: string,
    error: string,
    at = new Date(),
  ): Promise<boolean> {
    const job = { deviceId, messageId } as SendJobData;
    const fields = { failedAt: at.toISOString(), error };
    return (await this.transition(job, 'failed', fields, false, 'sent')) === 1;
  }

  /** Applies a receipt; false when the message is unknown or already further along. */
  async markReceipt(
    deviceId: string,
    messageId: string,
    status: 'delivered' | 'read',
    at = new Date(),
  ): Promise<boolean> {
    const field = status === 'delivered' ? 'deliveredAt' : 'readAt';
    const job = { deviceId, messageId } as SendJobData;
    return (await this.transition(job, status, { [field]: at.toISOString() }, false)) === 1;
  }

  /**
   * Applies many receipts of one device in one round trip: one script per receipt (it finds the
   * message by its WhatsApp id and moves it forward), all issued in one tick, so the connection's
   * auto-pipelining writes them together (with whatever else this tick sends) instead of one or
   * two round trips per receipt. Every key is the device's (one slot on a cluster). Returns the
   * receipts that moved a message forward (a receipt of an id that is not ours is skipped).
   */
  async markReceipts(
    deviceId: string,
    receipts: readonly ReceiptInput[],
    traced = false,
  ): Promise<AppliedReceipt[]> {
    const recordPrefix = keys.message(deviceId, '');
    const applied = await Promise.allSettled(
      receipts.map((r) => {
        const field = r.status === 'delivered' ? 'deliveredAt' : 'readAt';
        const [keyList, args] = this.transitionArgs(
          { deviceId, messageId: '' } as SendJobData,
          r.status,
          { [field]: r.at.toISOString() },
          false,
        );
        keyList[0] = keys.messageByPlatformId(deviceId, r.platformMessageId);
        return RECEIPT.run(this.redis, keyList, [...args, recordPrefix, traced ? '1' : '0']);
      }),
    );
    // One receipt's failure (a script error) skips it alone; when every one failed (Redis away)
    // the batch fails, as a pipeline's would.
    const failed = applied.find((a) => a.status === 'rejected');
    if (failed && applied.every((a) => a.status === 'rejected')) throw failed.reason;
    return receipts.flatMap((r, i) => {
      const a = applied[i]!;
      // Moved forward: [impliedDelivery, traceparent]; not: 0, or -2 for an id that is not ours.
      if (a.status !== 'fulfilled' || !Array.isArray(a.value)) return [];
      const [implied, traceparent] = a.value;
      return [
        {
          ...r,
          ...(implied === '1' ? { impliedDelivery: true as const } : {}),
          ...(traceparent ? { traceparent } : {}),
        },
      ];
    });
  }

  private async transition(
    job: SendJobData,
    target: MessageStatus,
    fields: Record<string, string>,
    settle: boolean,
    guard: TransitionGuard = false,
  ): Promise<number> {
    return TRANSITION.run(this.redis, ...this.transitionArgs(job, target, fields, settle, guard));
  }

  private transitionArgs(
    job: SendJobData,
    target: MessageStatus,
    fields: Record<string, string>,
    settle: boolean,
    guard: TransitionGuard = false,
  ): [string[], string[]] {
    const base = settle ? recordBase(job) : {};
    return [
      [
        keys.message(job.deviceId, job.messageId),
        job.contentId ? keys.content(job.deviceId, job.contentId) : keys.message(job.deviceId, job.messageId),
        keys.deviceQueue(job.deviceId),
        keys.webhook(job.deviceId),
        keys.eventOutbox(job.deviceId),
        keys.contactIdentities(job.deviceId),
        keys.eventLog(job.deviceId),
      ],
      [
        target,
        String(MESSAGE_STATUS_RANK[target]),
        JSON.stringify(MESSAGE_STATUS_RANK),
        String(this.retentionSeconds),
        JSON.stringify(fields),
        JSON.stringify(base),
        settle && job.contentId ? '1' : '0',
        guard === 'sent' ? 'sent' : guard ? '1' : '0',
        job.deviceId,
        keys.batch(job.deviceId, ''),
        keys.eventsChannel(),
        keys.deviceActivity(job.deviceId, ''),
        String(DEVICE_ACTIVITY_TTL_SECONDS),
        keys.content(job.deviceId, ''),
        keys.chatIndex(job.deviceId),
        keys.chat(job.deviceId, ''),
        keys.deviceDayUsage(job.deviceId, ''),
        String(USAGE_TTL_SECONDS),
      ],
    ];
  }
}

/** The batch key and its held set of a message of a batch; the record's key (unused) otherwise. */
function batchKeys(job: SendJobData): [string, string] {
  if (!job.batchId)
    return [keys.message(job.deviceId, job.messageId), keys.message(job.deviceId, job.messageId)];
  return [keys.batch(job.deviceId, job.batchId), keys.batchHeld(job.deviceId, job.batchId)];
}

/** A record's `tp`: the W3C traceparent of the message's send (tracing on), which its events carry. */
function traced(traceparent: string | undefined): { tp?: string } {
  return traceparent ? { tp: traceparent } : {};
}
