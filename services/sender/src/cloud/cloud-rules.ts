/**
 * The Cloud API's rules a cloud device keeps before Meta enforces them (docs/cloud-api.md), as
 * the send path's engine (send-engine.ts): recipients are phone numbers only; a free-form message
 * goes only inside the contact's 24-hour window (a template goes anyway); the pair rate to one
 * contact holds a message until its slot; the number's throughput paces the sends; the messaging
 * tier's unique contacts outside a window (per moving 24 hours) are counted at the send
 * (CloudSender, with `reach`), and a new one past the tier fails without a Graph call. And a
 * message whose earlier attempt may have reached Meta is never written again (`once`).
 */
import type { Job } from 'bullmq';
import type { RedisClient } from '@mgw/common';
import {
  CLOUD_WINDOW_MS,
  FAILURE_REASONS,
  isAudienceJid,
  isLid,
  keys,
  type MessageContent,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import { PermanentSendError } from '../send/send-errors.js';
import { holdMessage, type HoldDeps } from '../send/hold-message.js';
import type { SendEngine } from '../send/send-engine.js';
import { CloudReach, type Reached } from './cloud-reach.js';
import { PairRate, ThroughputBucket, TIER_LIMITS } from './cloud-limits.js';

/** Meta's limit names; absent or unknown (Meta said none): the tier is not counted here, Meta's 131048 still maps. */
export function tierLimit(tier: string | undefined): number {
  return (tier && TIER_LIMITS[tier]) || Infinity;
}

export class CloudRules implements SendEngine {
  readonly name = 'cloud' as const;
  readonly once = true;
  private readonly throughput: ThroughputBucket;
  private readonly pairs = new PairRate();
  private readonly reached: CloudReach;
  /** The messaging tier's limit (the number's profile, read by the runtime). */
  private limit = Infinity;

  constructor(
    private readonly redis: RedisClient,
    private readonly deviceId: string,
    throughputPerSecond: number,
    private readonly holds: HoldDeps,
  ) {
    this.throughput = new ThroughputBucket(throughputPerSecond);
    this.reached = new CloudReach(redis, deviceId);
  }

  /** The number's configuration or profile changed (runtime refresh). */
  update(throughputPerSecond: number, messagingLimitTier: string | undefined): void {
    this.throughput.setRate(throughputPerSecond);
    this.limit = tierLimit(messagingLimitTier);
  }

  unreachable(to: string): string | undefined {
    return isLid(to) || isAudienceJid(to) ? 'the Cloud API sends to phone numbers only' : undefined;
  }

  async beforeClaim(
    job: Job<SendJobData, SendJobResult>,
    content: MessageContent,
    token: string | undefined,
  ): Promise<void> {
    if (content.edit || content.delete)
      throw new PermanentSendError(
        FAILURE_REASONS.revisionRefused,
        'the Cloud API cannot edit or delete a sent message',
      );
    const waId = job.data.to.replace(/\D/g, '');
    // Aged out while it waited in the queue (the API checked it at accept time): no Graph call.
    if (!content.template && !(await this.windowOpen(waId)))
      throw new PermanentSendError(
        FAILURE_REASONS.windowClosed,
        "the contact's 24-hour window is closed: send a template",
      );
    const slot = this.pairs.take(waId, Date.now());
    if (slot !== undefined) await holdMessage(job, 'pair_rate', slot, this.holds, token);
    await this.throughput.take();
  }

  /**
   * A template's contact counted against the messaging tier when it has no open window (a contact
   * already counted in the last 24 hours goes again freely); a new one past the tier fails
   * `messaging_limit_reached`. Undefined: nothing counted (an open window).
   */
  async reach(waId: string): Promise<Reached | undefined> {
    if (this.limit === Infinity || (await this.windowOpen(waId))) return undefined;
    const taken = await this.reached.take(waId, this.limit);
    if (!taken)
      throw new PermanentSendError(
        FAILURE_REASONS.messagingLimitReached,
        `the number's messaging tier allows ${this.limit} contacts outside a window per 24 hours`,
      );
    return taken;
  }

  /** Whether the contact wrote within the last 24 hours (keys.cloudWindows, kept by the webhook). */
  private async windowOpen(waId: string): Promise<boolean> {
    const at = await this.redis.zscore(keys.cloudWindows(this.deviceId), waId);
    return at !== null && Date.now() - Number(at) < CLOUD_WINDOW_MS;
  }
}
