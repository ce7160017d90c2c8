import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import type { CallEndedEventData, CallReceivedEventData, Metrics } from '@mgw/contracts';
import { rejectCall, type CallUpdate, type DeviceSocket } from '@mgw/messenger';
import { publishEvent, readAccountSettings, type Encryption } from '@mgw/store';

/** Calls followed at once per device; the oldest is forgotten past it (a flood cannot grow memory). */
const MAX_CALLS = 500;
/** A call not ended within this long is forgotten (WhatsApp ends a ringing call within a minute). */
const CALL_TTL_MS = 15 * 60_000;

interface FollowedCall {
  received: CallReceivedEventData;
  answeredAt?: string;
  ended: boolean;
  seenAt: number;
}

export interface IncomingCallsDeps {
  redis: RedisClient;
  encryption: Encryption;
  deviceId: string;
  conn: Pick<DeviceSocket, 'socket'>;
  metrics: Metrics;
  logger: Logger;
  /** Queues the text a rejected caller is answered with (a message of the device); its message id. */
  reply: (to: string, text: string) => Promise<string>;
}

/**
 * A device's incoming calls: `call.received` on the offer; with the device's `rejectCalls` setting
 * the call is rejected at once (a bot cannot answer it) and the caller, when the setting has a
 * `rejectCallMessage`, is answered with it through the device's paced queue; then `call.missed`
 * (rejected here or elsewhere, timed out, or the caller hung up) or `call.ended` (answered on
 * another of the account's devices, then ended). Followed in memory only: a failover mid-call
 * reports its end without the offer's details.
 */
export class IncomingCalls {
  private readonly calls = new Map<string, FollowedCall>();

  constructor(private readonly deps: IncomingCallsDeps) {}

  async onUpdates(updates: readonly CallUpdate[]): Promise<void> {
    for (const u of updates) {
      await this.onUpdate(u).catch((err: unknown) =>
        this.deps.logger.warn('call not handled', { status: u.status, err: serializeError(err) }),
      );
    }
  }

  private async onUpdate(u: CallUpdate): Promise<void> {
    this.forgetOld(Date.now());
    const known = this.calls.get(u.callId);
    if (u.status === 'offer') {
      if (!known) await this.onOffer(u);
      return;
    }
    if (known?.ended) return;
    if (u.status === 'accept') {
      if (known) known.answeredAt = u.at.toISOString();
      return;
    }
    const reason =
      u.status === 'reject'
        ? 'rejected_elsewhere'
        : u.status === 'timeout'
          ? 'timeout'
          : known?.answeredAt
            ? 'ended'
            : 'cancelled';
    await this.end(u, known, reason);
  }

  private async onOffer(u: CallUpdate): Promise<void> {
    const { redis, encryption, deviceId, metrics, logger } = this.deps;
    const settings = await readAccountSettings(redis, encryption, deviceId);
    const received: CallReceivedEventData = {
      deviceId,
      callId: u.callId,
      ...(u.caller.phone ? { from: u.caller.phone } : {}),
      contact: u.caller,
      video: !!u.video,
      group: !!u.group,
      ...(u.groupId ? { groupId: u.groupId } : {}),
      rejecting: settings.rejectCalls,
      offeredAt: u.at.toISOString(),
    };
    const call: FollowedCall = { received, ended: false, seenAt: Date.now() };
    this.calls.set(u.callId, call);
    if (this.calls.size > MAX_CALLS) this.calls.delete(this.calls.keys().next().value!);
    metrics.calls.inc({ outcome: 'received' });
    // The reject goes first: the caller's phone stops ringing before anything is written.
    if (settings.rejectCalls) {
      const sock = this.deps.conn.socket;
      const started = Date.now();
      if (sock) {
        await rejectCall(sock, u);
        metrics.calls.inc({ outcome: 'rejected' });
        logger.info('call rejected automatically', { callId: u.callId, ms: Date.now() - started });
      }
    }
    await publishEvent(redis, deviceId, 'call.received', { ...received });
    if (!settings.rejectCalls) return;
    const to = u.caller.phone ?? u.caller.lid;
    // A group call is answered nowhere (its caller is written to one to one only for its own call).
    const replyMessageId =
      settings.rejectCallMessage && to && !u.group
        ? await this.deps.reply(to, settings.rejectCallMessage)
        : undefined;
    await this.end(u, call, 'rejected', replyMessageId);
  }

  private async end(
    u: CallUpdate,
    known: FollowedCall | undefined,
    reason: CallEndedEventData['reason'],
    replyMessageId?: string,
  ): Promise<void> {
    const { deviceId, redis, metrics } = this.deps;
    if (known) known.ended = true;
    const r = known?.received;
    const data: CallEndedEventData = {
      deviceId,
      callId: u.callId,
      ...(r?.from ? { from: r.from } : u.caller.phone ? { from: u.caller.phone } : {}),
      contact: r?.contact ?? u.caller,
      video: r?.video ?? !!u.video,
      group: r?.group ?? !!u.group,
      ...((r?.groupId ?? u.groupId) ? { groupId: r?.groupId ?? u.groupId } : {}),
      reason,
      ...(replyMessageId ? { replyMessageId } : {}),
      ...(r ? { offeredAt: r.offeredAt } : {}),
      ...(known?.answeredAt ? { answeredAt: known.answeredAt } : {}),
      endedAt: (reason === 'rejected' ? new Date() : u.at).toISOString(),
    };
    const type = reason === 'ended' ? 'call.ended' : 'call.missed';
    metrics.calls.inc({ outcome: reason === 'ended' ? 'ended' : 'missed' });
    await publishEvent(redis, deviceId, type, { ...data });
  }

  private forgetOld(now: number): void {
    for (const [id, call] of this.calls) {
      if (now - call.seenAt < CALL_TTL_MS) break;
      this.calls.delete(id);
    }
  }
}
