/**
 * What this process runs for a cloud device it holds the lease of (docs/cloud-api.md): no socket,
 * the device's send queue worker running the same processSendJob as a linked device's, with the
 * Graph API sender (cloud-sender.ts) and the Cloud API's rules (cloud-rules.ts). Its lifecycle:
 * start (configuration, profile, state), refresh (a `/connect` or a new configuration, announced
 * on keys.devicesChannel(), and a slow poll), hand-over, and retirement when its configuration is
 * gone (`/disconnect`): dropped like a logged-out linked device.
 */
import { Worker } from 'bullmq';
import { serializeError, type Logger } from '@mgw/common';
import type { GraphNumber } from '@mgw/cloud';
import {
  CONNECTION_STATUSES,
  FAILURE_REASONS,
  type CloudDeviceConfig,
  type DeviceCommand,
  type DeviceCommandReply,
  type FailureReason,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import type { Lease } from '@mgw/messenger';
import {
  ContactIdentities,
  forgetAccount,
  getDeviceState,
  isOptedOut,
  isOptedOutInPool,
  markUnlinked,
  MessageKindStore,
  openSendQueue,
  purgeDeviceMessages,
  reclaimActiveJobs,
  waitUntilNoActiveJob,
  type SendQueue,
} from '@mgw/store';
import type { RuntimeDeps } from '../device/device-setup.js';
import { openSendWorker } from '../device/device-setup.js';
import type { RuntimeEnd } from '../device/device-runtime.js';
import { Pacer } from '../send/pacing.js';
import { SendGate } from '../send/send-gate.js';
import { CloudRules } from './cloud-rules.js';
import { CloudSender } from './cloud-sender.js';

/** How often a held cloud device reads its configuration and state again (a missed announcement). */
export const CLOUD_REFRESH_MS = 30_000;
/** Sends in flight at most, whatever the throughput (each waits on a Graph API answer). */
const MAX_CONCURRENCY = 200;

/**
 * Jobs at once: enough to keep the number's throughput while each send waits on Meta's answer
 * (a rate × a Graph round trip of up to half a second), at least 8 like an unpaced linked device.
 */
export function cloudConcurrency(throughputPerSecond: number): number {
  return Math.min(MAX_CONCURRENCY, Math.max(8, Math.ceil(throughputPerSecond / 2)));
}

export class CloudRuntime {
  /** When the lease was last confirmed ours (acquired or renewed). */
  leaseConfirmedAt = Date.now();
  private readonly log: Logger;
  private readonly queue: SendQueue;
  private readonly worker: Worker<SendJobData, SendJobResult>;
  private readonly rules: CloudRules;
  private config: CloudDeviceConfig | undefined;
  private connected = true;
  private retired: FailureReason | undefined;
  private readonly retiredSignal = new AbortController();
  private linkGeneration = 0;
  private handingOver = false;
  private leaseGone = false;
  private started = false;
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    readonly deviceId: string,
    private readonly lease: Lease,
    private readonly deps: RuntimeDeps,
    private readonly onEnd: (runtime: CloudRuntime, why: RuntimeEnd) => void,
  ) {
    this.log = deps.logger.child({ deviceId, engine: 'cloud' });
    const { redis, metrics, stores, config } = deps;
    const retention = config.store.messageRetentionSeconds;
    this.queue = openSendQueue(deps.bullConnection, deviceId);
    this.queue.on('error', (err) => this.log.warn('send queue error', { err: serializeError(err) }));
    // A cloud number's limits are Meta's (its tier, counted by the rules): the linked protocol's
    // account-safety caps are off by default, though a device's own overrides still apply.
    const gate = new SendGate(
      redis,
      deviceId,
      {
        ...config.sendPolicy,
        defaults: { ...config.sendPolicy.defaults, dailyCap: 0, warmupCaps: [], firstContactCap: 0 },
      },
      metrics,
      Date.now,
      deps.workspaces,
    );
    const holds = { messages: stores.messages, gate, metrics, logger: this.log };
    this.rules = new CloudRules(redis, deviceId, 1, holds);
    const sender = new CloudSender(
      {
        deviceId,
        number: () => this.number(),
        connected: () => this.connected && !this.retired,
        tokenFailed: () => this.tokenFailed(),
      },
      deps.cloud.graph,
      this.rules,
      redis,
      this.log,
    );
    this.worker = openSendWorker(
      deviceId,
      deps,
      this.log,
      {
        deviceId,
        messages: stores.messages,
        inbound: stores.inbound,
        contents: stores.contents,
        revisions: stores.revisions,
        // Meta renders a text's preview itself (preview_url): none is fetched here.
        fetchAttachment: deps.fetchers.fetchAttachment,
        media: stores.media,
        kinds: new MessageKindStore(redis, deps.encryption, retention),
        conn: sender,
        sender,
        engine: this.rules,
        // Paced by the number's throughput (the rules), not by the linked protocol's gaps; a
        // device's own `sendGapMs` still applies.
        pacer: new Pacer(redis, deviceId, 0, 0),
        gate,
        restriction: { onSent: () => undefined, onSendFailed: () => Promise.resolve(undefined) },
        optedOut: (phone, poolId) =>
          poolId ? isOptedOutInPool(redis, deviceId, poolId, phone) : isOptedOut(redis, deviceId, phone),
        identities: new ContactIdentities(redis),
        metrics,
        logger: this.log,
        openWaitMs: 0,
        retiredReason: () => this.retired,
        retired: this.retiredSignal.signal,
        linkGeneration: () => this.linkGeneration,
        handingOver: () => this.handingOver,
        unrecorded: new Map(),
      },
      cloudConcurrency(1),
    );
  }

  get epoch(): number {
    return this.lease.epoch;
  }

  markLeaseGone(): void {
    this.leaseGone = true;
  }

  /**
   * Reads the configuration, profile and state, takes back the jobs an earlier holder left active,
   * and runs the worker; a device whose configuration is gone already is retired instead.
   */
  async start(): Promise<void> {
    this.setState('connecting');
    const [state, reclaimed] = await Promise.all([
      getDeviceState(this.deps.redis, this.deviceId),
      reclaimActiveJobs(this.deps.redis, this.queue),
    ]);
    this.linkGeneration = state.linkGeneration;
    if (reclaimed > 0) this.log.info('jobs an earlier holder left active taken back', { count: reclaimed });
    await this.refresh();
    if (this.retired) return;
    this.started = true;
    void this.worker
      .run()
      .catch((err: unknown) => this.log.error('worker stopped', { err: serializeError(err) }));
    const poll = () => {
      this.refreshTimer = setTimeout(() => void this.refresh().finally(poll), CLOUD_REFRESH_MS);
      this.refreshTimer.unref();
    };
    poll();
  }

  /**
   * Reads the device's configuration and state again (its id announced on keys.devicesChannel():
   * a `/connect`, a new token or throughput; else the slow poll). Gone: the device is retired.
   * Connected again after its token failed: its held messages go at once.
   */
  refresh(): Promise<void> {
    const reading =
      this.refreshing ??
      this.readNow()
        .catch((err: unknown) => {
          this.log.warn('cloud device configuration not read', { err: serializeError(err) });
        })
        .finally(() => (this.refreshing = undefined));
    this.refreshing = reading;
    return reading;
  }

  private async readNow(): Promise<void> {
    if (this.retired || this.leaseGone) return;
    const { devices } = this.deps.cloud;
    const [config, profile, state] = await Promise.all([
      devices.get(this.deviceId),
      devices.profile(this.deviceId),
      devices.state(this.deviceId),
    ]);
    if (!config) {
      await this.retire('disconnected');
      return;
    }
    if (
      this.config?.throughputPerSecond !== config.throughputPerSecond ||
      this.config.updatedAt !== config.updatedAt
    )
      this.log.info('cloud device configuration read', {
        throughputPerSecond: config.throughputPerSecond,
        messagingLimitTier: profile?.messagingLimitTier,
      });
    this.config = config;
    this.rules.update(config.throughputPerSecond, profile?.messagingLimitTier);
    this.worker.concurrency = cloudConcurrency(config.throughputPerSecond);
    // Never connected yet counts as connected: it is listed because a /connect added it.
    const connected = state?.status !== 'disconnected';
    const back = connected && !this.connected;
    this.connected = connected;
    this.setState(connected ? 'connected' : 'disconnected');
    if (back && this.started) {
      this.log.info('cloud device connected again: its held messages go');
      await this.queue.promoteJobs().catch(() => undefined);
    }
  }

  private number(): GraphNumber {
    const c = this.config;
    if (!c) throw new Error('the cloud device has no configuration');
    return {
      phoneNumberId: c.phoneNumberId,
      wabaId: c.wabaId,
      accessToken: c.accessToken,
      graphVersion: c.graphVersion,
    };
  }

  /** The Graph API refused the token: the device turns disconnected; its messages wait for /connect. */
  private async tokenFailed(): Promise<void> {
    if (!this.connected) return;
    this.connected = false;
    this.setState('disconnected');
    this.log.warn('cloud device disconnected: its access token no longer works');
    // The state's writer keeps the session record in step (disconnected, with the reason).
    await this.deps.cloud.devices
      .setState(this.deviceId, {
        status: 'disconnected',
        reason: FAILURE_REASONS.cloudTokenExpired,
        at: new Date().toISOString(),
      })
      .catch((err: unknown) => this.log.warn('cloud device state not kept', { err: serializeError(err) }));
  }

  /** Hand-over (shutdown, lease lost, fair share): stop taking jobs, finish the active ones. */
  async stop({ force = false } = {}): Promise<void> {
    this.handingOver = true;
    clearTimeout(this.refreshTimer);
    await this.worker.close(force).catch(() => undefined);
    await this.queue.close().catch(() => undefined);
    this.clearState();
  }

  /**
   * The configuration is gone (`/disconnect`, or found gone at start): like a logged-out linked
   * device, off the linked set, its messages ended (a new link generation: none of them is sent).
   */
  private async retire(reason: string): Promise<void> {
    if (this.retired) return;
    this.retired = FAILURE_REASONS.loggedOut;
    this.retiredSignal.abort();
    clearTimeout(this.refreshTimer);
    const { redis, stores } = this.deps;
    // Its session record went `disconnected` with the configuration (CloudDeviceStore.forget).
    await markUnlinked(redis, this.deviceId);
    await forgetAccount(redis, this.deviceId);
    const ended = await purgeDeviceMessages(
      { redis, queue: this.queue, messages: stores.messages },
      this.deviceId,
      this.retired,
    );
    this.log.info('cloud device retired', { reason, messagesEnded: ended });
    this.onEnd(this, 'logged-out');
  }

  /** After retirement: lets the attempts in flight end, then closes the worker. */
  async drainRetired(timeoutMs = 20_000): Promise<void> {
    await waitUntilNoActiveJob(this.queue, timeoutMs);
    await this.worker.close(true).catch(() => undefined);
    await this.queue.close().catch(() => undefined);
    this.clearState();
  }

  /**
   * Device commands: a logout (the connection service's `/disconnect`) retires the device; the
   * proxy does not apply (no socket); the rest are the linked protocol's and answer so.
   */
  async onCommand(cmd: DeviceCommand, reply: (answer: DeviceCommandReply) => Promise<void>): Promise<void> {
    if (cmd.type === 'logout') {
      await reply({ ok: true });
      await this.retire('logged_out');
      return;
    }
    if (cmd.type === 'proxy-changed') return reply({ ok: true });
    await reply({ ok: false, error: 'not-supported-by-cloud-device' });
  }

  /** No paced schedule: the throughput is the rules'. */
  takeScheduleLagMs(): number | undefined {
    return undefined;
  }

  /** The account-safety gauges are the linked protocol's. */
  refreshSafetyMetrics(): Promise<void> {
    return Promise.resolve();
  }

  counts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
  }

  private setState(state: (typeof CONNECTION_STATUSES)[number]): void {
    for (const s of CONNECTION_STATUSES)
      this.deps.metrics.deviceState.set({ device: this.deviceId, state: s }, s === state ? 1 : 0);
  }

  private clearState(): void {
    for (const s of CONNECTION_STATUSES)
      this.deps.metrics.deviceState.remove({ device: this.deviceId, state: s });
  }
}
