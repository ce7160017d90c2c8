import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { FAILURE_REASONS, keys, type Metrics } from '@mgw/contracts';
import {
  ACK_ACCOUNT_RESTRICTED,
  ACK_RATE_LIMITED,
  AckTimeoutError,
  ServerRejectedError,
  type DeviceSocket,
  type NewChatCap,
  type ReachoutLock,
} from '@mgw/messenger';
import {
  clearRestriction,
  getRestriction,
  markRestricted,
  publishSessionStatus,
  recordHealthSignal,
  RESTRICTION_REASONS,
  type HealthSignal,
  type Restriction,
  type RestrictionReason,
} from '@mgw/store';
import type { BackoffConfig } from '../config.js';
import { PermanentSendError } from '../send/send-errors.js';

export interface RestrictionDeps {
  redis: RedisClient;
  deviceId: string;
  conn: Pick<DeviceSocket, 'fetchReachoutLock' | 'fetchNewChatCap'>;
  backoff: BackoffConfig;
  metrics: Metrics;
  logger: Logger;
  /** Wakes the messages held in the queue (the pause ended early). */
  wakeHeld: () => Promise<void>;
  now?: () => number;
}

/** What WhatsApp says of the account after an ack 463. */
interface ReachoutWhy {
  lock?: ReachoutLock;
  cap?: NewChatCap;
}

/**
 * Whether an ack 463 is about the message rather than the account: a one-to-one message that went
 * without any privacy token (no tctoken, no cstoken) — a first contact WhatsApp wants a token on
 * (whatsmeow 82d579d5), from a device with no NCT salt yet or with one but without the contact's
 * LID (a cstoken is made of the LID: whatsmeow's generateCsToken, cstoken.go, sends none without
 * it) — while WhatsApp's own answers say the account is neither locked nor capped. Any doubt (a
 * query unanswered, a token sent) reads the 463 as before: the account is paused.
 */
function tokenMissing(err: ServerRejectedError, { lock, cap }: ReachoutWhy): boolean {
  const sent = err.sentWith;
  return !!sent && sent.token === 'none' && lock?.active === false && cap?.capped === false;
}

/**
 * Reads WhatsApp's push-back for one device and pauses its sending instead of failing message
 * after message: an ack 463 (the reach-out time lock, or the new-chat cap / a restricted account
 * when no lock is active), an ack 429 (rate-overlimit), the time lock's notification, or
 * `failureRun` failed sends in a row. The pause lives in Redis (`keys.deviceRestriction`), so
 * whichever sender holds the device honours it; the gate holds every message while it lasts, and
 * they go again by themselves when it ends (at its end, or at once when WhatsApp lifts the lock).
 *
 * Every change of the device's restriction state as this sender sees it — a pause starts or
 * is extended, WhatsApp lifts it early, it runs out — goes through `changed` (the one place to
 * hook a state-change event such as `session.status`).
 */
export class DeviceRestriction {
  private failuresInRow = 0;
  /** The restriction state last announced (undefined: none yet, '' : not restricted). */
  private announced: string | undefined;
  private readonly now: () => number;
  /** Fires when the current pause should have run out (to report its end). */
  private endTimer: NodeJS.Timeout | undefined;
  /** A pause started, moved or ended, or a signal was counted, since the gauges were last refreshed. */
  private changedSinceRefresh = true;

  constructor(private readonly deps: RestrictionDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * A send failed. When the failure is the server pushing back on the account, the device is
   * paused and the answer is until when (the message waits for that, unsent and unfailed);
   * otherwise undefined (the failure takes its usual course). Throws PermanentSendError
   * `first_contact_token_missing` for an ack 463 that is about the message, not the account
   * (see tokenMissing).
   */
  async onSendFailed(err: unknown): Promise<number | undefined> {
    const { backoff } = this.deps;
    if (err instanceof ServerRejectedError && err.code === ACK_ACCOUNT_RESTRICTED) {
      const why = await this.askWhy();
      if (tokenMissing(err, why)) {
        this.deps.logger.warn(
          'ack 463 on a first contact sent without a privacy token (no NCT salt yet, or no LID of the contact) while WhatsApp says the account is neither locked nor capped: the message fails first_contact_token_missing, the device goes on',
          { capped: false, locked: false, salt: err.sentWith?.salt ?? false },
        );
        throw new PermanentSendError(
          FAILURE_REASONS.firstContactTokenMissing,
          err.sentWith?.salt
            ? "WhatsApp refused a first contact that carried no tctoken or cstoken (the contact's LID was not resolved)"
            : 'WhatsApp refused a first contact that carried no tctoken or cstoken (the device has no NCT salt yet)',
        );
      }
      await this.countForHealth('refused463');
      return (await this.pauseForReachout(why)).until;
    }
    if (err instanceof ServerRejectedError && err.code === ACK_RATE_LIMITED) {
      await this.countForHealth('rateLimited');
      return (await this.pause(RESTRICTION_REASONS.rateLimited, this.now() + backoff.rateLimitMs)).until;
    }
    if (err instanceof ServerRejectedError || err instanceof AckTimeoutError) {
      await this.countForHealth('rejected');
      this.failuresInRow += 1;
      if (backoff.failureRun > 0 && this.failuresInRow >= backoff.failureRun) {
        this.failuresInRow = 0;
        await this.pause(RESTRICTION_REASONS.failures, this.now() + backoff.failureMs);
      }
    }
    return undefined;
  }

  /**
   * Counts WhatsApp's push-back for the device's health score. A count lost to a Redis error
   * costs the score one signal, never the pause or the message: logged, not thrown.
   */
  async countForHealth(signal: HealthSignal): Promise<void> {
    this.changedSinceRefresh = true;
    await recordHealthSignal(this.deps.redis, this.deps.deviceId, signal, this.now()).catch((err: unknown) =>
      this.deps.logger.warn('health signal not counted', { signal, err: serializeError(err) }),
    );
  }

  /** A send went through: the run of failures is over. */
  onSent(): void {
    this.failuresInRow = 0;
  }

  /** WhatsApp told the socket about the reach-out time lock (set, changed or lifted). */
  async onReachout(lock: ReachoutLock): Promise<void> {
    if (lock.active) {
      const until = lock.until?.getTime() ?? this.now() + this.deps.backoff.restrictionMs;
      if (until > this.now()) await this.pause(RESTRICTION_REASONS.reachoutTimelock, until);
      return;
    }
    const current = await getRestriction(this.deps.redis, this.deps.deviceId, this.now());
    if (current?.reason === RESTRICTION_REASONS.reachoutTimelock) await this.resume();
  }

  /** Ack 463: asks WhatsApp why — its reach-out time lock, and its new-chat cap (unanswered: undefined). */
  private async askWhy(): Promise<ReachoutWhy> {
    const { conn, logger } = this.deps;
    const lock = await conn.fetchReachoutLock().catch((err: unknown) => {
      logger.warn('reach-out lock not fetched', { err: serializeError(err) });
      return undefined;
    });
    if (lock?.active) return { lock };
    return { lock, cap: await conn.fetchNewChatCap().catch(() => undefined) };
  }

  /**
   * Ack 463 about the account: an active time lock says until when; otherwise the new-chat cap
   * may say when its cycle ends; failing both, the configured back-off.
   */
  private async pauseForReachout({ lock, cap }: ReachoutWhy): Promise<Restriction> {
    const { backoff } = this.deps;
    if (lock?.active) {
      const until = lock.until?.getTime() ?? this.now() + backoff.restrictionMs;
      return this.pause(RESTRICTION_REASONS.reachoutTimelock, until);
    }
    const cycleEnd = cap?.capped ? cap.cycleEndsAt?.getTime() : undefined;
    const until = cycleEnd && cycleEnd > this.now() ? cycleEnd : this.now() + backoff.restrictionMs;
    return this.pause(RESTRICTION_REASONS.accountRestricted, until);
  }

  /** Pauses the device's sending until `until` (ms). The one place a restriction starts. */
  async pause(reason: RestrictionReason, until: number): Promise<Restriction> {
    const { redis, deviceId, metrics, logger } = this.deps;
    const { restriction, started } = await markRestricted(redis, deviceId, reason, until, this.now());
    if (started) {
      metrics.deviceRestrictions.inc({ reason: restriction.reason });
      logger.warn('device sending paused: WhatsApp pushes back', {
        reason: restriction.reason,
        until: new Date(restriction.until).toISOString(),
      });
    }
    this.changed(restriction);
    return restriction;
  }

  /** Ends the pause now and wakes the held messages. The one place a restriction ends early. */
  async resume(): Promise<void> {
    const { redis, deviceId, logger } = this.deps;
    if (!(await clearRestriction(redis, deviceId))) return;
    logger.info('device sending resumed: WhatsApp lifted the restriction');
    this.changed(undefined);
    await this.deps.wakeHeld();
  }

  /**
   * The restriction state changed (undefined: no pause any more). The held messages need
   * nothing from here: they wake by themselves at the pause's end.
   */
  private changed(restriction: Restriction | undefined): void {
    this.changedSinceRefresh = true;
    this.gauge(restriction?.reason);
    this.announce(restriction);
    clearTimeout(this.endTimer);
    this.endTimer = undefined;
    if (restriction) this.armEnd(restriction.until);
  }

  /**
   * The device's webhook hears of it as `session.status`: `restricted` with `reason` and `until`
   * when a pause starts or moves, and the session's own status (with `reason: restriction_ended`)
   * when it ends. A repeat of the same state is not announced again.
   */
  private announce(restriction: Restriction | undefined): void {
    const state = restriction ? `${restriction.reason}:${restriction.until}` : '';
    if (state === this.announced) return;
    const first = this.announced === undefined;
    this.announced = state;
    if (!restriction && first) return;
    const { redis, deviceId, logger } = this.deps;
    const publish = restriction
      ? publishSessionStatus(redis, deviceId, 'restricted', {
          reason: restriction.reason,
          until: new Date(restriction.until).toISOString(),
        })
      : redis
          .hget(keys.session(deviceId), 'status')
          .then((status) =>
            publishSessionStatus(redis, deviceId, status ?? 'connected', { reason: 'restriction_ended' }),
          );
    publish.catch((err: unknown) =>
      logger.warn('restriction event not published', { err: serializeError(err) }),
    );
  }

  /** Reports the end of a pause that runs out (another process may have extended or ended it). */
  private armEnd(until: number): void {
    const delay = Math.min(Math.max(until - this.now(), 0) + 50, 2 ** 31 - 1);
    this.endTimer = setTimeout(() => {
      this.endTimer = undefined;
      void getRestriction(this.deps.redis, this.deps.deviceId, this.now())
        .then((r) => {
          if (r) return this.armEnd(r.until);
          this.deps.logger.info('device sending resumed: the pause ran out');
          this.changed(undefined);
        })
        .catch(() => this.armEnd(this.now() + 5000));
    }, delay);
    this.endTimer.unref();
  }

  /**
   * Refreshes the gauge from Redis (scrape time), and follows a pause this process did not start
   * (it took the device over, or an operator ended it) so its end is reported too.
   */
  async refreshGauge(): Promise<void> {
    const r = await getRestriction(this.deps.redis, this.deps.deviceId, this.now());
    this.gauge(r?.reason);
    if (r && !this.endTimer) this.armEnd(r.until);
  }

  /** Whether the health inputs changed since the last call (the gauges are then refreshed at once). */
  takeChanged(): boolean {
    const changed = this.changedSinceRefresh;
    this.changedSinceRefresh = false;
    return changed;
  }

  /** The device leaves this process: no gauge, no timer. */
  close(): void {
    clearTimeout(this.endTimer);
    this.endTimer = undefined;
    for (const reason of Object.values(RESTRICTION_REASONS))
      this.deps.metrics.deviceRestricted.remove({ device: this.deps.deviceId, reason });
  }

  private gauge(active: RestrictionReason | undefined): void {
    for (const reason of Object.values(RESTRICTION_REASONS))
      this.deps.metrics.deviceRestricted.set(
        { device: this.deps.deviceId, reason },
        reason === active ? 1 : 0,
      );
  }
}
