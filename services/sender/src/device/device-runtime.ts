import { serializeError, type Logger } from '@mgw/common';
import { CONNECTION_STATUSES, FAILURE_REASONS } from '@mgw/contracts';
import { purgeAuthState, type DeviceSocket, type Lease } from '@mgw/messenger';
import {
  deviceHealth,
  forgetAccount,
  LabelStore,
  getDeviceState,
  HealthWindow,
  markUnlinked,
  purgeDeviceMessages,
  reclaimActiveJobs,
  sendingView,
  StatusStore,
  waitUntilNoActiveJob,
} from '@mgw/store';
import type { ContactChecks } from '../commands/contact-check.js';
import { wireAccountEvents } from '../inbound/account-events.js';
import { wireGroupAndLabelEvents } from '../inbound/group-label-events.js';
import { wireHistoryImport } from '../inbound/history-import.js';
import { wireInbound } from '../inbound/inbound-pipeline.js';
import { InboundMediaKeeper } from '../inbound/inbound-media-keeper.js';
import { wireStatusUpdates } from '../inbound/status-updates.js';
import type { DeviceRestriction } from './device-restriction.js';
import {
  buildDevice,
  newDeviceLife,
  type DeviceLife,
  type DeviceParts,
  type RuntimeDeps,
} from './device-setup.js';

/** Why a runtime ended, for its owner (the device fleet). */
export type RuntimeEnd = 'logged-out' | 'replaced' | 'fenced';

/**
 * Everything this process runs for one device it holds the lease of: the long-lived socket, the
 * device's send queue worker (paced), receipts, and the session record. Built by device-setup.ts,
 * fed by the socket through inbound/inbound-pipeline.ts; this file is the device's lifecycle:
 * start, the connection's ups and downs, hand-over, logout and retirement.
 */
export class DeviceRuntime {
  readonly conn: DeviceSocket;
  readonly restriction: DeviceRestriction;
  /** The number checks (POST /contacts/check) this device looks up at WhatsApp. */
  readonly contactChecks: ContactChecks;
  /** The account routes' parts: the socket's contact lookups (MessageSender) and the blocklist. */
  readonly sender: DeviceParts['sender'];
  readonly blocklist: DeviceParts['blocklist'];
  /** The label and chat-state notices: `settled()` once those seen so far are kept (GET /labels). */
  readonly appState: { settled: () => Promise<void> };
  private readonly parts: DeviceParts;
  private readonly life: DeviceLife = newDeviceLife();
  private readonly log: Logger;
  private started = false;
  /** The link generation read and an earlier holder's active jobs taken back (see start). */
  private prepared: Promise<void> = Promise.resolve();
  /** When the lease was last confirmed ours (acquired or renewed): its TTL runs from about then. */
  leaseConfirmedAt = Date.now();

  constructor(
    readonly deviceId: string,
    private readonly lease: Lease,
    private readonly deps: RuntimeDeps,
    private readonly onEnd: (runtime: DeviceRuntime, why: RuntimeEnd) => void,
  ) {
    this.log = deps.logger.child({ deviceId });
    this.parts = buildDevice(deviceId, lease, deps, this.life, this.log);
    this.conn = this.parts.conn;
    this.restriction = this.parts.restriction;
    this.contactChecks = this.parts.contactChecks;
    this.sender = this.parts.sender;
    this.blocklist = this.parts.blocklist;
    this.wireConnection();
    const { redis, metrics, stores } = deps;
    const { restriction, identities, keepIdentities, inboundKinds, optOutKeywords, calls, autoRead } =
      this.parts;
    wireInbound(this.conn, {
      deviceId,
      redis,
      metrics,
      logger: this.log,
      messages: stores.messages,
      inbound: stores.inbound,
      revisions: stores.revisions,
      restriction,
      identities,
      keepIdentities,
      inboundKinds,
      optOutKeywords,
      mediaKeeper: new InboundMediaKeeper({
        deviceId,
        redis,
        media: stores.media,
        settings: stores.mediaSettings,
        fetchBytes: deps.fetchers.fetchMedia,
        proxyAgent: () => this.conn.proxyAgent,
        metrics,
        logger: this.log,
      }),
      calls,
      autoRead,
    });
    wireHistoryImport(this.conn, {
      deviceId,
      redis,
      encryption: deps.encryption,
      history: stores.history,
      fetchBytes: deps.fetchers.fetchMedia,
      proxyAgent: () => this.conn.proxyAgent,
      ...(deps.sandbox?.mediaOrigin ? { mediaOrigin: deps.sandbox.mediaOrigin } : {}),
      limits: deps.config.history,
      keepIdentities,
      salts: this.sender.firstContacts,
      metrics,
      logger: this.log,
    });
    wireAccountEvents(this.conn, {
      deviceId,
      redis,
      blocklist: this.blocklist,
      identities,
      logger: this.log,
    });
    wireStatusUpdates(this.conn, {
      deviceId,
      redis,
      statuses: new StatusStore(redis, deps.encryption),
      sealer: deps.encryption,
      logger: this.log,
    });
    this.appState = wireGroupAndLabelEvents(this.conn, {
      deviceId,
      redis,
      sealer: deps.encryption,
      labels: new LabelStore(redis, deps.encryption),
      metrics,
      logger: this.log,
    });
  }

  get epoch(): number {
    return this.lease.epoch;
  }

  /** Another process may hold the device now: never write its auth state again. */
  markLeaseGone(): void {
    this.life.leaseGone = true;
  }

  /**
   * Opens the socket at once (the login takes a few round trips to WhatsApp); meanwhile reads
   * the link generation and takes back the jobs an earlier holder left active. The worker runs
   * only once both are done and the socket logged in.
   */
  async start(): Promise<void> {
    this.setState('connecting');
    this.prepared = this.prepare();
    // Awaited (and so handled) below; a runtime whose preparation failed never runs its worker.
    this.prepared.catch(() => undefined);
    await Promise.all([this.prepared, this.conn.start()]);
  }

  /**
   * Before the worker's first job: the device's link generation, and the jobs an earlier holder of
   * the device left active (killed mid-send; see reclaimActiveJobs), which this worker's first
   * stalled check then moves back to waiting instead of after their locks lapse.
   */
  private async prepare(): Promise<void> {
    const [state, reclaimed] = await Promise.all([
      getDeviceState(this.deps.redis, this.deviceId),
      reclaimActiveJobs(this.deps.redis, this.parts.queue),
    ]);
    this.life.linkGeneration = state.linkGeneration;
    if (reclaimed > 0) this.log.info('jobs an earlier holder left active taken back', { count: reclaimed });
  }

  /** The socket logged in: the worker runs (once prepared), or resumes. */
  private runWorker(): void {
    const { worker } = this.parts;
    if (this.started) {
      if (worker.isPaused()) worker.resume();
      return;
    }
    this.started = true;
    void this.prepared.then(
      () =>
        worker.run().catch((err: unknown) => this.log.error('worker stopped', { err: serializeError(err) })),
      // start() failed with it: the fleet stops this runtime.
      () => undefined,
    );
  }

  /** Hand-over (shutdown, lease lost): stop taking jobs, finish the active ones, close without logout. */
  async stop({ force = false } = {}): Promise<void> {
    // Jobs held back by pacing go back to the queue at once instead of delaying the shutdown.
    this.life.handingOver = true;
    this.parts.pacer.release();
    // Jobs waiting for a socket that is reconnecting go back too, and no reconnect starts now.
    this.conn.drain();
    // Forced (the lease is gone): the socket closes at once, not after the worker (whose close
    // may wait on an unreachable Redis).
    if (force) await this.conn.stop();
    await this.parts.worker.close(force).catch(() => undefined);
    await this.conn.stop();
    await this.parts.queue.close().catch(() => undefined);
    this.clearState();
  }

  /** Logout requested through the API: log out on WhatsApp, then retire the device. */
  async logout(): Promise<void> {
    this.life.retired = FAILURE_REASONS.loggedOut;
    // A device just claimed may still be connecting: the logout must reach WhatsApp.
    if (await this.conn.waitForOpen(15_000)) await this.conn.logout();
    else await this.conn.stop();
    await this.retire('logged_out');
  }

  /**
   * The account is gone (logout or unlinked from the phone): purge credentials (fenced by our
   * lease), take it off the linked set, mark the session disconnected, and end every message of
   * the device (a new link generation: none of them is ever sent, by this link or a later one).
   */
  private async retire(reason: string): Promise<void> {
    this.parts.pacer.release();
    this.life.retiredSignal.abort();
    const { redis, stores } = this.deps;
    await purgeAuthState(redis, this.deviceId, this.lease.epoch);
    await markUnlinked(redis, this.deviceId);
    await forgetAccount(redis, this.deviceId);
    await stores.sessions.markDisconnected(this.deviceId, reason);
    const ended = await purgeDeviceMessages(
      { redis, queue: this.parts.queue, messages: stores.messages },
      this.deviceId,
      this.life.retired ?? FAILURE_REASONS.loggedOut,
    );
    this.log.info('device retired', { reason, messagesEnded: ended });
  }

  /** After retirement: lets the attempts in flight end (they fail at once), then closes the worker. */
  async drainRetired(timeoutMs = 20_000): Promise<void> {
    await waitUntilNoActiveJob(this.parts.queue, timeoutMs);
    await this.parts.worker.close(true).catch(() => undefined);
    await this.parts.queue.close().catch(() => undefined);
    this.clearState();
  }

  /** The connection's ups and downs: the session record, the state gauge, the worker, the end. */
  private wireConnection(): void {
    const { metrics, stores } = this.deps;
    const { sessions } = stores;
    this.conn.on('open', (account) => {
      this.setState('connected');
      void sessions
        .update(this.deviceId, 'connected', {
          phone: account.phone,
          name: account.name,
          profilePic: account.profilePic,
        })
        .catch((err: unknown) => this.log.warn('session not updated', { err: serializeError(err) }));
      this.log.info('device connected');
    });
    // Sending starts with the login, not after the account's description (a picture lookup).
    this.conn.on('loggedIn', () => this.runWorker());
    this.conn.on('close', (info) => {
      metrics.deviceDisconnects.inc({ device: this.deviceId, reason: info.reason });
      if (info.final) {
        if (info.action === 'logged-out' && !this.life.retired) {
          void this.restriction.countForHealth('logouts');
          this.life.retired = FAILURE_REASONS.loggedOut;
          void this.retire('logged_out_from_phone')
            .catch((err: unknown) => this.log.error('retire failed', { err: serializeError(err) }))
            .finally(() => this.onEnd(this, 'logged-out'));
        } else if (info.action === 'replaced') {
          this.onEnd(this, 'replaced');
        }
        return;
      }
      this.setState('connecting');
      void sessions
        .update(this.deviceId, 'connecting', {
          lastDisconnectReason: info.reason,
          lastDisconnectAt: new Date().toISOString(),
        })
        .catch(() => undefined);
    });
    this.conn.on('reconnecting', () => {
      metrics.deviceReconnects.inc({ device: this.deviceId });
      void this.restriction.countForHealth('reconnects');
    });
    // The close that follows records the reason (`proxy_<kind>`) in the session; the proxy's address
    // (never its credentials) goes to the log.
    this.conn.on('proxyFailure', (f) => {
      metrics.deviceProxyErrors.inc({ device: this.deviceId, kind: f.kind });
      this.log.warn('connection through the device proxy failed', {
        proxy: f.where,
        kind: f.kind,
        error: f.message,
      });
    });
    this.conn.on('name', (name) => {
      void sessions.update(this.deviceId, 'connected', { name }).catch(() => undefined);
    });
    this.conn.on('fenced', () => {
      if (!this.life.retired) this.onEnd(this, 'fenced');
    });
  }

  /** The health signals' window, its closed hours kept between refreshes (one read an hour, not 24 each). */
  private healthWindow: HealthWindow | undefined;
  private safetyRefreshedAt = 0;

  /**
   * The account-safety gauges (usage of the window, pause, health score), refreshed periodically
   * (queue-metrics.ts): at once when a pause started or ended or a signal was counted, else once
   * `everyMs` has passed (ten Redis reads a device: not every few seconds for thousands idle).
   */
  async refreshSafetyMetrics(everyMs = 0): Promise<void> {
    const { metrics, redis, config } = this.deps;
    const now = Date.now();
    if (!this.restriction.takeChanged() && now - this.safetyRefreshedAt < everyMs) return;
    this.safetyRefreshedAt = now;
    const view = await sendingView(redis, this.deviceId, config.sendPolicy, now);
    this.healthWindow ??= new HealthWindow(redis, this.deviceId);
    const health = await deviceHealth(redis, this.deviceId, config.sendPolicy, now, view, this.healthWindow);
    metrics.deviceHealthScore.set({ device: this.deviceId }, health.score);
    metrics.deviceSentToday.set({ device: this.deviceId }, view.sentToday);
    metrics.deviceFirstContactsToday.set({ device: this.deviceId }, view.firstContactsToday);
    if (view.dailyCap === null) metrics.deviceDailyCap.remove({ device: this.deviceId });
    else metrics.deviceDailyCap.set({ device: this.deviceId }, view.dailyCap);
    await this.restriction.refreshGauge();
  }

  private setState(state: (typeof CONNECTION_STATUSES)[number]): void {
    for (const s of CONNECTION_STATUSES)
      this.deps.metrics.deviceState.set({ device: this.deviceId, state: s }, s === state ? 1 : 0);
  }

  private clearState(): void {
    this.restriction.close();
    for (const g of [
      this.deps.metrics.deviceHealthScore,
      this.deps.metrics.deviceSentToday,
      this.deps.metrics.deviceFirstContactsToday,
      this.deps.metrics.deviceDailyCap,
    ])
      g.remove({ device: this.deviceId });
    for (const s of CONNECTION_STATUSES)
      this.deps.metrics.deviceState.remove({ device: this.deviceId, state: s });
  }

  /** How far behind its paced schedule this device is (see Pacer.takeLagMs). */
  takeScheduleLagMs(now: number): number | undefined {
    return this.parts.pacer.takeLagMs(now);
  }

  /** Queue depth by state, for the scrape-time gauge. */
  counts(): Promise<Record<string, number>> {
    return this.parts.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
  }
}
