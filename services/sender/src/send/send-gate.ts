import type { RedisClient } from '@mgw/common';
import { isAudienceJid, type HeldReason, type Metrics, type SendJobData } from '@mgw/contracts';
import {
  admitMessage,
  batchStop,
  capOf,
  capWindow,
  capWithoutReserve,
  effectivePolicy,
  getRestriction,
  quietUntil,
  rememberChats,
  releaseMessage,
  type CapName,
  type CapTake,
  type SendPolicyConfig,
  type SuspendedWorkspaces,
} from '@mgw/store';

/** Held messages wake spread over this, so a window's start is not one burst of queue moves. */
const WAKE_SPREAD_MS = 2000;

export type HoldReason =
  'daily_cap' | 'first_contact_cap' | 'quiet_hours' | 'restricted' | 'workspace_suspended';

/** A suspended workspace's messages are looked at again this often (a resume sends them then). */
export const SUSPENDED_RECHECK_MS = 30_000;

/** A message the policy let through: it holds one unit of the window's caps until it is sent. */
export interface Ticket {
  /** The message went out: the account has a chat with the recipient now. */
  sent(): Promise<void>;
  /** The message did not go out: the unit goes back to the window. */
  release(): Promise<void>;
}

/** A hold: until when (ms), the policy's reason (metrics), and the reason a record shows (`held`). */
export interface Hold {
  holdUntil: number;
  reason: HoldReason;
  held: HeldReason;
}
export type Verdict = { go: Ticket } | Hold;

/** The caps' check a message still has to pass once the gate found no reason to hold it. */
export interface Caps {
  /** What the caps' script takes. */
  take: CapTake;
  /** The hold when `used` is used up. */
  capped(used: CapName): Hold;
  /** The ticket once taken (`first`: the recipient is a first contact). */
  taken(first: boolean): Ticket;
}

/** What the gate decides on: the device's pause and its policy, read from Redis (see `read`). */
export interface GateReads {
  /** The device's workspace is suspended (docs/workspaces.md). */
  suspended: boolean;
  restriction: { until: number } | undefined;
  policy: Awaited<ReturnType<typeof effectivePolicy>>;
}

/**
 * The gate each message of one device passes right before it is sent: a suspended workspace's
 * device holds everything (docs/workspaces.md); a paused (restricted)
 * device holds everything; quiet hours hold everything but OTPs; then the window's cap (warm-up
 * step or daily cap) and the first-contact cap, each minus the OTP reserve for other messages.
 * A held message goes back to its queue, delayed until the hold ends, without using an attempt.
 */
export class SendGate {
  constructor(
    private readonly redis: RedisClient,
    private readonly deviceId: string,
    private readonly config: SendPolicyConfig,
    private readonly metrics: Metrics,
    private readonly now: () => number = Date.now,
    /** Which workspaces are suspended (none given: the device's never is). */
    private readonly workspaces?: Pick<SuspendedWorkspaces, 'deviceSuspended'>,
  ) {}

  /**
   * Starts the reads `admit` decides on: the device's pause and its policy, both in this tick, so
   * a caller that starts them beside its own reads sends them all in one auto-pipelined write
   * (one round trip). The policy is read per message (one HGETALL): an admin override applies to
   * the very next message.
   */
  read(): Promise<GateReads> {
    const reads = Promise.all([
      getRestriction(this.redis, this.deviceId, this.now()),
      effectivePolicy(this.redis, this.deviceId, this.config),
      this.workspaces?.deviceSuspended(this.deviceId) ?? false,
    ]).then(([restriction, policy, suspended]) => ({ restriction, policy, suspended }));
    // Not awaited when an earlier step ends the job: no unhandled rejection (awaiting still throws).
    reads.catch(() => undefined);
    return reads;
  }

  /** The verdict on one message, from `reads` (started with `read`, by default now). */
  async admit(
    data: Pick<SendJobData, 'to' | 'kind'>,
    reads: Promise<GateReads> = this.read(),
  ): Promise<Verdict> {
    const decided = await this.decide(data, reads);
    if (!('caps' in decided)) return decided;
    const { take } = decided.caps;
    const verdict = await admitMessage(
      this.redis,
      this.deviceId,
      take.phone,
      take.windowStart,
      take.windowMs,
      take.cap,
      take.firstContactCap,
      take.group,
    );
    return verdict.ok ? { go: decided.caps.taken(verdict.first) } : decided.caps.capped(verdict.cap);
  }

  /**
   * The verdict on one message, from `reads`, but for its caps: a hold (the workspace suspended,
   * the device paused, quiet hours), or the caps' take it still has to pass — by `admit`'s script
   * or with its claim (MessageStore.claimAdmitted), where nothing runs between the two.
   */
  async decide(
    data: Pick<SendJobData, 'to' | 'kind'>,
    reads: Promise<GateReads>,
  ): Promise<{ caps: Caps } | Hold> {
    const {
      suspended,
      restriction,
      policy: { policy, warmupFrom },
    } = await reads;
    const now = this.now();
    // Before everything, OTPs too: a suspended workspace sends nothing, and keeps its queue.
    if (suspended) return this.hold(now + SUSPENDED_RECHECK_MS, 'workspace_suspended', 'workspace_suspended');
    if (restriction && restriction.until > now)
      return this.hold(restriction.until, 'restricted', 'device_paused');
    const otp = data.kind === 'otp';
    // OTPs are sent in quiet hours: someone is waiting for the code right now.
    const quiet = otp ? undefined : quietUntil(now, policy);
    if (quiet !== undefined) return this.hold(quiet, 'quiet_hours', 'quiet_hours');
    const win = capWindow(now, this.config.windowMs, policy.timeZone);
    const { cap, warmupDay } = capOf(policy, win.start, this.config.windowMs, warmupFrom);
    // The window's cap is the warm-up step's while the ladder lasts and it is below the daily cap.
    const warmup = warmupDay !== undefined && cap < (policy.dailyCap === 0 ? Infinity : policy.dailyCap);
    const firstCap = policy.firstContactCap === 0 ? Infinity : policy.firstContactCap;
    const share = otp ? 0 : policy.otpReserve;
    return {
      caps: {
        take: {
          phone: data.to,
          windowStart: win.start,
          windowMs: this.config.windowMs,
          cap: capWithoutReserve(cap, share),
          firstContactCap: capWithoutReserve(firstCap, share),
          // A group message, a status or a channel post counts once, whatever its audience, and is
          // no first contact.
          group: isAudienceJid(data.to),
        },
        capped: (used) => this.hold(win.end, used, used === 'daily_cap' && warmup ? 'warmup_cap' : used),
        taken: (first) => this.ticket(data.to, win.start, first),
      },
    };
  }

  /** The ticket of a message the caps took (`first`: as a first contact). */
  private ticket(to: string, windowStart: number, first: boolean): Ticket {
    let settled = false;
    return {
      sent: async () => {
        settled = true;
        // A number the admission found among the chats is there already (only a logout empties
        // the set, and the next account must not inherit it): one SADD per first contact only.
        if (first) await rememberChats(this.redis, this.deviceId, [to]);
      },
      release: async () => {
        if (settled) return;
        settled = true;
        await releaseMessage(this.redis, this.deviceId, windowStart, first);
      },
    };
  }

  /** Until when the device is paused (restricted), or undefined. */
  async restrictedUntil(): Promise<number | undefined> {
    return (await getRestriction(this.redis, this.deviceId, this.now()))?.until;
  }

  /** Whether the message's batch stops it now: cancelled, paused, or undefined (not of a batch, or sending). */
  async batchStop(batchId: string | undefined): Promise<'cancelled' | 'paused' | undefined> {
    return batchId ? batchStop(this.redis, this.deviceId, batchId) : undefined;
  }

  private hold(until: number, reason: HoldReason, held: HeldReason): Hold {
    this.metrics.sendsHeld.inc({ reason });
    return { holdUntil: until + Math.floor(Math.random() * WAKE_SPREAD_MS), reason, held };
  }
}
