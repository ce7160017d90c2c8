import { DeviceCommandResponder, confirmLinked, markUnlinked, type SenderRoster } from '@mgw/store';
import { keys, type DeviceCommand, type DeviceCommandReply } from '@mgw/contracts';
import { createPhotoFetcher, type PhotoFetcher } from '../commands/account-commands.js';
import { runDeviceCommand } from '../commands/command-table.js';
import { Subscription, serializeError, type Logger, type RedisClient } from '@mgw/common';
import {
  hasLinkedCredentials,
  type AcquiredLease,
  type LeaseManager,
  type LeaseRenewer,
  type RenewRound,
} from '@mgw/messenger';
import { DeviceRuntime, type RuntimeEnd } from '../device/device-runtime.js';
import { CloudRuntime } from '../cloud/cloud-runtime.js';
import type { RuntimeDeps } from '../device/device-setup.js';
import { fairShare, planHandovers } from './fair-share.js';

/** A device this process holds: a linked one's socket and worker, or a cloud one's worker. */
export type HeldRuntime = DeviceRuntime | CloudRuntime;

/** After giving a device up, wait this long before claiming it again (no ping-pong). */
const COOLDOWN_MS = 30_000;
/** Devices started (sockets opened) or handed over at once, so a big claim does not stall the loop. */
const PARALLEL = 10;

/**
 * An `unknown` renewal (Redis did not answer) still leaves the device ours only while the TTL of
 * the last confirmed renewal (sent at `lastConfirmedAt`) has not run out.
 */
export function leaseMayStillBeOurs(lastConfirmedAt: number, ttlMs: number, now = Date.now()): boolean {
  return now - lastConfirmedAt < ttlMs;
}

/**
 * Claims linked devices through their leases and runs a DeviceRuntime for each one held (a
 * CloudRuntime for a device whose engine is `cloud`: it has a cloud configuration):
 * a jittered scan of `keys.linkedDevices()` (and at once when a link is announced) that claims
 * up to this sender's fair share and hands the excess over to senders below theirs, a renewer
 * thread that renews every lease in one round trip per round, and the reactions the lease
 * outcomes call for.
 */
export class DeviceFleet {
  private readonly owned = new Map<string, HeldRuntime>();
  /**
   * Devices no longer ours (replaced, fenced) whose runtime is still stopping and releasing: out
   * of `owned` at once, never claimed again meanwhile, and waited for by `stop()`.
   */
  private readonly ending = new Map<string, { rt: HeldRuntime | undefined; done: Promise<void> }>();
  private readonly cooldown = new Map<string, number>();
  private scanTimer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private stopping = false;
  private rescan = false;
  /** No hand-over round before this time (cool-down after the last one). */
  private nextRebalanceAt = 0;
  private rebalancing: Promise<void> | undefined;
  /** Senders whose liveness expired (from the renewer thread): their devices are taken over. */
  private deadOwners: string[] = [];
  /** Fresh links (`keys.devicesChannel()`) and device commands, both on `subscriber`. */
  private links?: Subscription;
  private readonly commands: DeviceCommandResponder;
  /** Profile photos from a URL (device command `account-photo-set`). */
  private readonly fetchPhoto: PhotoFetcher;

  constructor(
    private readonly leases: LeaseManager,
    private readonly renewer: LeaseRenewer,
    private readonly roster: SenderRoster,
    private readonly deps: RuntimeDeps,
    private readonly subscriber: RedisClient,
    private readonly logger: Logger,
  ) {
    this.commands = new DeviceCommandResponder(subscriber, deps.redis, logger, deps.metrics.redisSubscribed);
    this.fetchPhoto = createPhotoFetcher({
      outbound: deps.config.outbound,
      timeoutMs: deps.config.mediaFetchTimeoutMs,
    });
  }

  /** Why this sender does not hear fresh links or device commands now (undefined while it does). */
  get subscriptionProblem(): string | undefined {
    return (this.links ? this.links.problem : 'not listening') ?? this.commands.problem;
  }

  get size(): number {
    return this.owned.size;
  }

  runtimes(): HeldRuntime[] {
    return [...this.owned.values()];
  }

  async start(): Promise<void> {
    this.links = new Subscription({
      client: this.subscriber,
      channels: [keys.devicesChannel()],
      onMessage: (_channel, deviceId) => {
        // A cloud device held here: a /connect or a new configuration (its token, its throughput).
        const held = this.owned.get(deviceId);
        if (held instanceof CloudRuntime) void held.refresh();
        // A fresh link of this device: new credentials, nothing to ping-pong over.
        this.cooldown.delete(deviceId);
        void this.scan();
      },
      logger: this.logger,
      gauge: this.deps.metrics.redisSubscribed,
    });
    await this.links.start();
    await this.commands.listen(
      (cmd, reply) => this.onCommand(cmd, reply),
      (err) => this.logger.error('device command failed', { err: serializeError(err) }),
    );
    // Back from an outage: claim what lapsed meanwhile now, not at the next scan.
    this.deps.redis.on('ready', () => void this.scan());
    this.renewer.on('round', (round) => this.onRenewRound(round));
    this.renewer.on('dead', (owners) => this.onDeadOwners(owners));
    this.renewer.on('stalled', (silentMs) =>
      this.logger.error('event loop silent too long: leases left to lapse', { silentMs }),
    );
    this.renewer.on('error', (err: Error) =>
      this.logger.error('lease renewer failed', { err: serializeError(err) }),
    );
    const { leaseScanMs } = this.deps.config;
    const scheduleScan = () => {
      if (this.stopping) return;
      // Jitter spreads the replicas' scans so they do not all race for a free device at once.
      this.scanTimer = setTimeout(
        () => void this.scan().finally(scheduleScan),
        leaseScanMs * (0.5 + Math.random()),
      );
    };
    scheduleScan();
    await this.scan();
  }

  /** SIGTERM: stop claiming, hand every device over (no logout), release the leases. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.scanTimer);
    await this.scanning;
    await this.rebalancing;
    await this.roster.leave().catch(() => undefined);
    // The leases keep being renewed while the active sends finish: a lapsed lease would let
    // another sender open a second socket for a device this process still has open.
    await Promise.all([
      ...[...this.owned.values()].map(async (rt) => {
        await rt.stop();
        await this.release(rt);
      }),
      ...[...this.ending.values()].map((e) => e.done),
    ]);
    this.deps.connectGate?.close();
    await this.renewer.stop();
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
      const view = await this.roster.beat(this.owned.size);
      // A dead sender may linger in the roster until its roster entry expires: no share for it.
      const dead = this.deadOwners;
      for (const owner of dead) view.loads.delete(owner);
      const share = fairShare(linked.length, view.loads.size, this.deps.config.maxDevices);
      this.deps.metrics.sendersLive.set(view.loads.size);
      this.deps.metrics.senderFairShare.set(share);
      const free = linked.filter(
        (id) => !this.owned.has(id) && !this.ending.has(id) && (this.cooldown.get(id) ?? 0) <= Date.now(),
      );
      // Every device this scan claims is in line for its socket before the first is admitted: the
      // connect gate admits by priority (an OTP queued first), not by the order of the claims.
      const release = free.length > 0 ? this.deps.connectGate?.hold() : undefined;
      try {
        // Up to the share, a pipeline of acquires per batch (most are held by others: one round trip).
        for (let i = 0; i < free.length && this.owned.size < share && !this.stopping;) {
          const batch = free.slice(i, (i += Math.max(PARALLEL, share - this.owned.size)));
          const got = (await this.leases.acquireMany(batch, dead)).filter((l): l is AcquiredLease => !!l);
          const keep = got.slice(0, Math.max(0, share - this.owned.size));
          for (const extra of got.slice(keep.length)) await this.leases.release(extra).catch(() => undefined);
          for (let j = 0; j < keep.length; j += PARALLEL)
            await Promise.all(keep.slice(j, j + PARALLEL).map((lease) => this.claim(lease)));
        }
      } finally {
        release?.();
      }
      if (this.owned.size > share && Date.now() >= this.nextRebalanceAt && !this.stopping) {
        const plan = planHandovers(this.leases.owner, [...this.owned.keys()], view, share);
        if (plan.length > 0) {
          this.nextRebalanceAt = Date.now() + this.deps.config.rebalanceCooldownMs;
          // In the background: a scan must not wait for sends to finish; stop() waits for it.
          this.rebalancing = this.handOver(plan).finally(() => (this.rebalancing = undefined));
        }
      }
    } catch (err) {
      this.logger.warn('device scan failed', { err: serializeError(err) });
    }
  }

  private async claim(lease: AcquiredLease): Promise<void> {
    const { deviceId } = lease;
    // The engine first: a cloud device never gets a Baileys socket, whatever else it holds.
    const cloud = !this.stopping && (await this.deps.cloud.devices.engineOf(deviceId)) === 'cloud';
    if (
      this.stopping ||
      (!cloud && !(await hasLinkedCredentials(this.deps.redis, deviceId, this.deps.encryption)))
    ) {
      // Listed but without credentials (a logout raced the scan): a socket would start a QR
      // pairing nobody is looking at. Drop it from the set; a new link adds it back.
      if (!this.stopping) await markUnlinked(this.deps.redis, deviceId);
      await this.leases.release(lease);
      return;
    }
    await confirmLinked(this.deps.redis, deviceId);
    const onEnd = (r: HeldRuntime, why: RuntimeEnd) => {
      this.onRuntimeEnd(r, why).catch((err: unknown) =>
        this.logger.error('device runtime end not handled', { deviceId, why, err: serializeError(err) }),
      );
    };
    const rt: HeldRuntime = cloud
      ? new CloudRuntime(deviceId, lease, this.deps, onEnd)
      : new DeviceRuntime(deviceId, lease, this.deps, onEnd);
    this.owned.set(deviceId, rt);
    this.renewer.hold(lease);
    this.deps.metrics.leasesHeld.set(this.owned.size);
    if (lease.handedOverAt !== undefined) {
      this.deps.metrics.deviceHandovers.inc({ direction: 'taken' });
      this.deps.metrics.deviceClaimSeconds.observe(Math.max(0, Date.now() - lease.handedOverAt) / 1000);
    }
    if (lease.takenFrom !== undefined) this.deps.metrics.deviceTakeovers.inc();
    this.logger.info('device claimed', {
      deviceId,
      engine: cloud ? 'cloud' : 'linked',
      epoch: lease.epoch,
      handedOver: lease.handedOverAt !== undefined,
      ...(lease.takenFrom !== undefined ? { takenOverFrom: lease.takenFrom } : {}),
    });
    await rt.start().catch(async (err: unknown) => {
      this.logger.error('device start failed', { deviceId, err: serializeError(err) });
      // Its queue and worker connections, socket and state gauge go too, not just the lease.
      await rt.stop({ force: true }).catch(() => undefined);
      await this.giveUp(rt);
    });
  }

  /**
   * Fair share: gives devices to senders below their share, each by the SIGTERM hand-over (stop
   * taking jobs, finish the active one, close without logout) and a release that reserves the
   * device for its taker, who is told to scan at once. Nothing is lost (the queue stays in Redis)
   * and nothing is sent twice (the giver's worker is closed before the lease is released).
   */
  private async handOver(plan: { deviceId: string; to: string }[]): Promise<void> {
    const holdMs = 4 * this.deps.config.messenger.lease.ttlMs;
    this.logger.info('handing devices over (fair share)', { count: plan.length });
    for (let i = 0; i < plan.length && !this.stopping; i += PARALLEL) {
      await Promise.all(
        plan.slice(i, i + PARALLEL).map(async ({ deviceId, to }) => {
          const rt = this.owned.get(deviceId);
          if (!rt) return;
          await rt.stop();
          if (this.owned.get(deviceId) !== rt) return;
          this.owned.delete(deviceId);
          this.renewer.drop(deviceId);
          this.cooldown.set(deviceId, Date.now() + COOLDOWN_MS);
          this.deps.metrics.leasesHeld.set(this.owned.size);
          const lease = { deviceId, owner: this.leases.owner, epoch: rt.epoch };
          if (await this.leases.releaseTo(lease, to, holdMs).catch(() => false)) {
            this.deps.metrics.deviceHandovers.inc({ direction: 'given' });
            this.logger.info('device handed over', { deviceId, to });
            await this.deps.redis.publish(keys.devicesChannel(), deviceId).catch(() => undefined);
          }
        }),
      );
    }
  }

  /**
   * The renewer thread judged these senders dead (their liveness expired while this one kept
   * beating): scan at once when one is new, taking over the devices they hold.
   */
  private onDeadOwners(owners: string[]): void {
    const fresh = owners.filter((o) => !this.deadOwners.includes(o));
    this.deadOwners = owners;
    if (fresh.length === 0 || this.stopping) return;
    this.logger.warn('senders stopped beating their liveness: taking their devices over', {
      owners: fresh,
    });
    void this.scan();
  }

  /** A renewal round's outcomes (from the renewer thread): close what is no longer ours. */
  private onRenewRound(round: RenewRound): void {
    const { metrics, config } = this.deps;
    metrics.leaseRenewRounds.observe(round.durationMs / 1000);
    for (const { deviceId, epoch, outcome } of round.outcomes) {
      metrics.leaseRenewals.inc({ outcome });
      // A runtime still stopping (replaced, fenced) is forced to once its lease is known gone.
      const rt = this.owned.get(deviceId) ?? this.ending.get(deviceId)?.rt;
      // Released (or given up) since the round was sent: nothing to do.
      if (!rt || rt.epoch !== epoch) continue;
      if (outcome === 'renewed' || outcome === 'restored') {
        rt.leaseConfirmedAt = round.sentAt;
        if (outcome === 'restored')
          this.logger.warn('lease lapsed and was restored (nobody took it meanwhile)', { deviceId, epoch });
        continue;
      }
      // Redis did not answer: keep the socket, but only while the last confirmed renewal's TTL has
      // not run out; after that another replica may already own the device.
      if (outcome === 'unknown' && leaseMayStillBeOurs(rt.leaseConfirmedAt, config.messenger.lease.ttlMs))
        continue;
      this.logger.warn('lease lost; closing the device socket', { deviceId, outcome });
      this.owned.delete(deviceId);
      const end = this.ending.get(deviceId);
      if (end) end.rt = undefined; // forced once: a round still in flight finds nothing to do
      this.renewer.drop(deviceId);
      metrics.leasesHeld.set(this.owned.size);
      // Another process holds (or held) the device: back off, never fight over it. A lease that
      // lapsed only because Redis was away is claimed again as soon as Redis answers.
      if (outcome !== 'unknown') this.cooldown.set(deviceId, Date.now() + COOLDOWN_MS);
      rt.markLeaseGone();
      void rt
        .stop({ force: true })
        .catch((err: unknown) =>
          this.logger.warn('device stop failed', { deviceId, err: serializeError(err) }),
        );
    }
  }

  private async onRuntimeEnd(rt: HeldRuntime, why: RuntimeEnd): Promise<void> {
    if (this.owned.get(rt.deviceId) !== rt) return;
    this.logger.warn('device runtime ended', { deviceId: rt.deviceId, why });
    if (why === 'logged-out') {
      await rt.drainRetired();
      await this.giveUp(rt, false);
      return;
    }
    // replaced / fenced: someone else holds the device; back off, never fight over it. It stops
    // counting as ours now, not once its stop and release are done: both wait on Redis, which may
    // be out of reach (why another sender could take the device over). Its lease stays in the
    // renewal rounds until the release, and a round that finds it lost (or unconfirmed for a whole
    // TTL) forces the stop, as it did while the device was in `owned`.
    this.owned.delete(rt.deviceId);
    this.cooldown.set(rt.deviceId, Date.now() + COOLDOWN_MS);
    this.deps.metrics.leasesHeld.set(this.owned.size);
    const done = rt
      .stop({ force: why === 'fenced' })
      .catch((err: unknown) =>
        this.logger.warn('device stop failed', { deviceId: rt.deviceId, err: serializeError(err) }),
      )
      .then(() => this.release(rt));
    this.ending.set(rt.deviceId, { rt, done });
    await done.finally(() => this.ending.delete(rt.deviceId));
  }

  private async giveUp(rt: HeldRuntime, cooldown = true): Promise<void> {
    if (this.owned.get(rt.deviceId) === rt) this.owned.delete(rt.deviceId);
    if (cooldown) this.cooldown.set(rt.deviceId, Date.now() + COOLDOWN_MS);
    this.deps.metrics.leasesHeld.set(this.owned.size);
    await this.release(rt);
  }

  private async release(rt: HeldRuntime): Promise<void> {
    // Out of the renewal set, then release: the release moves the epoch counter on, so a renewal
    // round already in flight cannot restore the lease.
    if (this.owned.get(rt.deviceId) === rt) this.owned.delete(rt.deviceId);
    this.renewer.drop(rt.deviceId);
    await this.leases
      .release({ deviceId: rt.deviceId, owner: this.leases.owner, epoch: rt.epoch })
      .catch((err: unknown) =>
        this.logger.warn('lease release failed', { deviceId: rt.deviceId, err: serializeError(err) }),
      );
    this.deps.metrics.leasesHeld.set(this.owned.size);
  }

  /**
   * Commands for the owner of a device (the connection service asks it to log the device out, the
   * API to download an inbound attachment, look numbers up, …): answered by the one sender that
   * holds the device, through the command table (commands/command-table.ts).
   */
  private async onCommand(
    cmd: DeviceCommand,
    reply: (answer: DeviceCommandReply) => Promise<void>,
  ): Promise<void> {
    const rt = this.owned.get(cmd.deviceId);
    if (!rt) return;
    if (rt instanceof CloudRuntime) return rt.onCommand(cmd, reply);
    await runDeviceCommand(cmd, {
      device: rt,
      reply,
      giveUp: () => this.giveUp(rt, false),
      deps: this.deps,
      logger: this.logger,
      fetchPhoto: this.fetchPhoto,
    });
  }
}
