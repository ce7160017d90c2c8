import type { Redis } from 'ioredis';
import { keys, type DeviceCommand, type DeviceCommandReply } from '@mgw/contracts';
import { serializeError, type Logger } from '@mgw/common';
import { hasLinkedCredentials, type LeaseManager } from '@mgw/messenger';
import { DeviceRuntime, type RuntimeDeps, type RuntimeEnd } from './device-runtime.js';

/** After giving a device up, wait this long before claiming it again (no ping-pong). */
const COOLDOWN_MS = 30_000;
const REPLY_TTL_SECONDS = 60;

/**
 * An `unknown` renewal (Redis did not answer) still leaves the device ours only while the TTL of
 * the last confirmed renewal (sent at `lastConfirmedAt`) has not run out.
 */
export function leaseMayStillBeOurs(lastConfirmedAt: number, ttlMs: number, now = Date.now()): boolean {
  return now - lastConfirmedAt < ttlMs;
}

/**
 * Claims linked devices through their leases and runs a DeviceRuntime for each one held:
 * a jittered scan of `keys.linkedDevices()` (and at once when a link is announced), a heartbeat
 * that renews every lease, and the reactions the lease outcomes call for.
 */
export class DeviceFleet {
  private readonly owned = new Map<string, DeviceRuntime>();
  private readonly cooldown = new Map<string, number>();
  private scanTimer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private stopping = false;
  private rescan = false;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly leases: LeaseManager,
    private readonly deps: RuntimeDeps,
    private readonly subscriber: Redis,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.owned.size;
  }

  runtimes(): DeviceRuntime[] {
    return [...this.owned.values()];
  }

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === keys.devicesChannel()) {
        // A fresh link of this device: new credentials, nothing to ping-pong over.
        this.cooldown.delete(message);
        void this.scan();
      }
      if (channel === keys.deviceCommands()) {
        this.onCommand(message).catch((err: unknown) =>
          this.logger.error('device command failed', { err: serializeError(err) }),
        );
      }
    });
    await this.subscriber.subscribe(keys.devicesChannel(), keys.deviceCommands());
    // Back from an outage: claim what lapsed meanwhile now, not at the next scan.
    this.deps.redis.on('ready', () => void this.scan());
    const { leaseScanMs } = this.deps.config;
    const leaseRenewMs = this.deps.config.messenger.lease.renewMs;
    const scheduleScan = () => {
      if (this.stopping) return;
      // Jitter spreads the replicas' scans so they do not all race for a free device at once.
      this.scanTimer = setTimeout(
        () => void this.scan().finally(scheduleScan),
        leaseScanMs * (0.5 + Math.random()),
      );
    };
    scheduleScan();
    this.renewTimer = setInterval(() => {
      // A slow Redis must not stack heartbeats: one renewal round at a time.
      if (this.renewing) return;
      this.renewing = this.renewAll()
        .catch((err: unknown) => {
          this.logger.error('lease renewal round failed', { err: serializeError(err) });
        })
        .finally(() => (this.renewing = undefined));
    }, leaseRenewMs);
    await this.scan();
  }

  /** SIGTERM: stop claiming, hand every device over (no logout), release the leases. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.scanTimer);
    await this.scanning;
    // The leases keep being renewed while the active sends finish: a lapsed lease would let
    // another sender open a second socket for a device this process still has open.
    await Promise.all(
      [...this.owned.values()].map(async (rt) => {
        await rt.stop();
        await this.release(rt);
      }),
    );
    clearInterval(this.renewTimer);
    await this.renewing;
  }

  scan(): Promise<void> {
    if (this.scanning) {
      // A link announced mid-scan may have missed this scan's SMEMBERS: scan once more after it.
      this.rescan = true;
      return this.scanning;
    }
    this.scanning = this.scanOnce().finally(() => {
      this.scanning = undefined;
      if (this.rescan) {
        this.rescan = false;
        void this.scan();
      }
    });
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    if (this.stopping) return;
    try {
      const now = Date.now();
      for (const [deviceId, until] of this.cooldown) if (until <= now) this.cooldown.delete(deviceId);
      const linked = await this.deps.redis.smembers(keys.linkedDevices());
      this.deps.metrics.devicesLinked.set(linked.length);
      for (const deviceId of linked) {
        if (this.stopping) return;
        if (this.owned.has(deviceId) || (this.cooldown.get(deviceId) ?? 0) > Date.now()) continue;
        const lease = await this.leases.acquire(deviceId);
        if (!lease) continue;
        if (!(await hasLinkedCredentials(this.deps.redis, deviceId, this.deps.encryption))) {
          // Listed but without credentials (a logout raced the scan): a socket would start a QR
          // pairing nobody is looking at. Drop it from the set; a new link adds it back.
          await this.deps.redis.srem(keys.linkedDevices(), deviceId);
          await this.leases.release(lease);
          continue;
        }
        const rt = new DeviceRuntime(deviceId, lease, this.deps, (r, why) => {
          this.onRuntimeEnd(r, why).catch((err: unknown) =>
            this.logger.error('device runtime end not handled', { deviceId, why, err: serializeError(err) }),
          );
        });
        this.owned.set(deviceId, rt);
        this.deps.metrics.leasesHeld.set(this.owned.size);
        this.logger.info('device claimed', { deviceId, epoch: lease.epoch });
        await rt.start().catch(async (err: unknown) => {
          this.logger.error('device start failed', { deviceId, err: serializeError(err) });
          // Its queue and worker connections, socket and state gauge go too, not just the lease.
          await rt.stop({ force: true }).catch(() => undefined);
          await this.giveUp(rt);
        });
      }
    } catch (err) {
      this.logger.warn('device scan failed', { err: serializeError(err) });
    }
  }

  private async renewAll(): Promise<void> {
    for (const rt of [...this.owned.values()]) {
      // Released (or given up) since this round started: never renew or re-acquire it.
      if (this.owned.get(rt.deviceId) !== rt) continue;
      const lease = { deviceId: rt.deviceId, owner: this.leases.owner, epoch: rt.epoch };
      const sentAt = Date.now();
      const outcome = await this.leases.renew(lease);
      if (outcome === 'renewed') {
        rt.leaseConfirmedAt = sentAt;
        continue;
      }
      // Redis did not answer: keep the socket, but only while the last confirmed renewal's TTL has
      // not run out; after that another replica may already own the device.
      if (
        outcome === 'unknown' &&
        leaseMayStillBeOurs(rt.leaseConfirmedAt, this.deps.config.messenger.lease.ttlMs)
      )
        continue;
      if (outcome === 'missing') {
        const again = await this.leases.acquire(rt.deviceId).catch(() => undefined);
        // Epoch+1 proves nobody held the device in between, so our cached keys are still current.
        if (again && again.epoch === rt.epoch + 1) {
          rt.setLease(again, sentAt);
          this.logger.warn('lease expired and was re-acquired', {
            deviceId: rt.deviceId,
            epoch: again.epoch,
          });
          continue;
        }
        if (again)
          await this.leases
            .release(again)
            .catch((err: unknown) =>
              this.logger.warn('lease release failed', { deviceId: rt.deviceId, err: serializeError(err) }),
            );
      }
      this.logger.warn('lease lost; closing the device socket', { deviceId: rt.deviceId, outcome });
      this.owned.delete(rt.deviceId);
      this.deps.metrics.leasesHeld.set(this.owned.size);
      // Another process holds (or held) the device: back off, never fight over it. A lease that
      // lapsed only because Redis was away is claimed again as soon as Redis answers.
      if (outcome !== 'unknown') this.cooldown.set(rt.deviceId, Date.now() + COOLDOWN_MS);
      rt.markLeaseGone();
      await rt.stop({ force: true });
    }
  }

  private async onRuntimeEnd(rt: DeviceRuntime, why: RuntimeEnd): Promise<void> {
    if (this.owned.get(rt.deviceId) !== rt) return;
    this.logger.warn('device runtime ended', { deviceId: rt.deviceId, why });
    if (why === 'logged-out') {
      await rt.drainRetired();
      await this.giveUp(rt, false);
      return;
    }
    // replaced / fenced: someone else holds the device; back off, never fight over it.
    await rt.stop({ force: why === 'fenced' });
    await this.giveUp(rt);
  }

  private async giveUp(rt: DeviceRuntime, cooldown = true): Promise<void> {
    this.owned.delete(rt.deviceId);
    if (cooldown) this.cooldown.set(rt.deviceId, Date.now() + COOLDOWN_MS);
    this.deps.metrics.leasesHeld.set(this.owned.size);
    await this.release(rt);
  }

  private async release(rt: DeviceRuntime): Promise<void> {
    // Out of the renewal set first, then let a round in flight finish (it may have re-acquired the
    // lease with a new epoch, which setLease recorded): only then release, so nothing renews or
    // re-acquires the lease after it was released.
    if (this.owned.get(rt.deviceId) === rt) this.owned.delete(rt.deviceId);
    await this.renewing;
    await this.leases
      .release({ deviceId: rt.deviceId, owner: this.leases.owner, epoch: rt.epoch })
      .catch((err: unknown) =>
        this.logger.warn('lease release failed', { deviceId: rt.deviceId, err: serializeError(err) }),
      );
    this.deps.metrics.leasesHeld.set(this.owned.size);
  }

  /** The connection service asks the owner of a device to log it out (only the owner has the socket). */
  private async onCommand(raw: string): Promise<void> {
    let cmd: DeviceCommand;
    try {
      cmd = JSON.parse(raw) as DeviceCommand;
    } catch {
      return;
    }
    const rt = this.owned.get(cmd.deviceId);
    if (!rt || cmd.type !== 'logout') return;
    let reply: DeviceCommandReply;
    try {
      await rt.logout();
      reply = { ok: true };
    } catch (err) {
      this.logger.error('logout failed', { deviceId: cmd.deviceId, err: serializeError(err) });
      reply = { ok: false, error: (err as Error).message };
    }
    const key = keys.commandReply(cmd.requestId);
    await this.deps.redis.multi().rpush(key, JSON.stringify(reply)).expire(key, REPLY_TTL_SECONDS).exec();
    if (reply.ok) {
      await rt.drainRetired();
      await this.giveUp(rt, false);
    }
  }
}
