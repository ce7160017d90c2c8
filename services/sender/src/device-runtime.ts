import { Worker } from 'bullmq';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import {
  BULL_PREFIX,
  CONNECTION_STATUSES,
  FAILURE_REASONS,
  sendQueueName,
  type FailureReason,
  type Metrics,
  type SendJobData,
  type SendJobResult,
  type ContactIdentity,
} from '@mgw/contracts';
import {
  DeviceSocket,
  MessageSender,
  purgeAuthState,
  type Lease,
  type SandboxSocketOptions,
} from '@mgw/messenger';
import {
  getDeviceState,
  isOptedOut,
  MessageIndex,
  openSendQueue,
  purgeDeviceMessages,
  reclaimActiveJobs,
  forgetAccount,
  rememberChats,
  sendingView,
  waitUntilNoActiveJob,
  type ContentStore,
  type Encryption,
  type InboundStore,
  type MessageRevisions,
  type MessageStore,
  type SendQueue,
  type SessionStore,
  markUnlinked,
  ContactCache,
  ContactIdentities,
  MessageKindStore,
} from '@mgw/store';
import type { SenderConfig } from './config.js';
import type { AttachmentFetcher } from './media-source.js';
import { Pacer } from './pacing.js';
import type { LinkPreviewer } from './link-preview.js';
import { ContactChecks } from './contact-check.js';
import { ReceiptBatcher } from './receipts.js';
import { DeviceRestriction } from './device-restriction.js';
import { SendGate } from './send-gate.js';
import { recordInbound } from './inbound.js';
import { recordInboundRevisions } from './inbound-revisions.js';
import { InboundKinds } from './inbound-kinds.js';
import { checkKeywords, OptOutKeywords } from './opt-outs.js';
import { processSendJob } from './send-job.js';
import { onSendJobFailed } from './send-failure.js';

export interface RuntimeDeps {
  config: SenderConfig;
  logger: Logger;
  metrics: Metrics;
  /** Commands, auth state and records. */
  redis: RedisClient;
  /** BullMQ workers' connection (maxRetriesPerRequest null). */
  bullConnection: RedisClient;
  messages: MessageStore;
  contents: ContentStore;
  sessions: SessionStore;
  /** Messages contacts write to the account (recorded sealed, announced as message.received). */
  inbound: InboundStore;
  /** Edits and deletes of message records (ours and contacts'). */
  revisions: MessageRevisions;
  /** Link previews of texts, through the outbound guard. */
  linkPreview: LinkPreviewer;
  /** Attachment URLs, through the guarded outbound client. */
  fetchAttachment: AttachmentFetcher;
  encryption: Encryption;
  sandbox?: SandboxSocketOptions;
}

/** Why a runtime ended, for its owner (the device fleet). */
export type RuntimeEnd = 'logged-out' | 'replaced' | 'fenced';

/**
 * Everything this process runs for one device it holds the lease of: the long-lived socket, the
 * device's send queue worker (paced), receipts, and the session record.
 */
export class DeviceRuntime {
  readonly conn: DeviceSocket;
  private readonly worker: Worker<SendJobData, SendJobResult>;
  private readonly queue: SendQueue;
  private readonly log: Logger;
  private retired: FailureReason | undefined;
  /** Aborted on retirement, so sends in flight on the logged-out socket fail at once. */
  private readonly retiredSignal = new AbortController();
  /** Messages sent here whose "sent" could not be recorded yet (see processSendJob). */
  private readonly unrecorded = new Map<string, Date>();
  /** The device's link generation, read when this process took the device. */
  private linkGeneration = 0;
  private handingOver = false;
  private readonly pacer: Pacer;
  private readonly gate: SendGate;
  private readonly optOutKeywords: OptOutKeywords;
  readonly restriction: DeviceRestriction;
  /** The number checks (POST /contacts/check) this device looks up at WhatsApp. */
  readonly contactChecks: ContactChecks;
  /** The device's phone <-> LID map (libs/store contact-identities.ts). */
  private readonly identities: ContactIdentities;
  /** Reactions and poll votes from contacts (they update records, they are no messages). */
  private readonly inboundKinds: InboundKinds;
  private started = false;
  /** The link generation read and an earlier holder's active jobs taken back (see start). */
  private prepared: Promise<void> = Promise.resolve();
  /** The lease is gone (lost, or unconfirmed for a whole TTL): no auth-state write from here on. */
  private leaseGone = false;
  /** When the lease was last confirmed ours (acquired or renewed): its TTL runs from about then. */
  leaseConfirmedAt = Date.now();

  constructor(
    readonly deviceId: string,
    private readonly lease: Lease,
    private readonly deps: RuntimeDeps,
    private readonly onEnd: (runtime: DeviceRuntime, why: RuntimeEnd) => void,
  ) {
    const { config, redis, logger, metrics } = deps;
    this.log = logger.child({ deviceId });
    this.conn = new DeviceSocket({
      redis,
      encryption: deps.encryption,
      logger: this.log,
      deviceId,
      sandbox: deps.sandbox,
      messageRetentionSeconds: config.store.messageRetentionSeconds,
      // A retired device's socket may still try to save creds after its purge: refuse those.
      epoch: () => (this.retired || this.leaseGone ? undefined : this.lease.epoch),
      onGroupQuery: (kind) => metrics.groupQueries.inc({ kind }),
    });
    const sender = new MessageSender(this.conn, {
      redis,
      encryption: deps.encryption,
      deviceId,
      logger: this.log,
      messageRetentionSeconds: config.store.messageRetentionSeconds,
      contacts: new ContactCache(redis, config.contactCacheTtlSeconds),
      onUpload: (type, bytes) => metrics.mediaUploadBytes.inc({ type }, bytes),
      onIdentities: (learnt) => this.keepIdentities(learnt),
    });
    this.contactChecks = new ContactChecks(sender, this.log);
    this.identities = new ContactIdentities(redis);
    const identities = this.identities;
    const kinds = new MessageKindStore(redis, deps.encryption, config.store.messageRetentionSeconds);
    this.inboundKinds = new InboundKinds({ deviceId, kinds, sender, metrics, logger: this.log });
    const pacer = new Pacer(redis, deviceId, config.sendMinGapMs, config.sendGapJitterMs);
    this.pacer = pacer;
    this.queue = openSendQueue(deps.bullConnection, deviceId);
    const gate = new SendGate(redis, deviceId, config.sendPolicy, metrics);
    this.gate = gate;
    this.restriction = new DeviceRestriction({
      redis,
      deviceId,
      conn: this.conn,
      backoff: config.backoff,
      metrics,
      logger: this.log,
      wakeHeld: () => this.queue.promoteJobs(),
    });
    const restriction = this.restriction;
    this.optOutKeywords = new OptOutKeywords({
      redis,
      deviceId,
      contents: deps.contents,
      index: new MessageIndex(redis, config.store.messageRetentionSeconds),
      queue: this.queue,
      linkGeneration: () => this.linkGeneration,
      metrics,
      logger: this.log,
      failedRetentionSeconds: config.store.messageRetentionSeconds,
    });
    this.worker = new Worker<SendJobData, SendJobResult>(
      sendQueueName(deviceId),
      (job, token) =>
        processSendJob(
          job,
          {
            deviceId,
            messages: deps.messages,
            contents: deps.contents,
            revisions: deps.revisions,
            linkPreview: deps.linkPreview,
            kinds,
            conn: this.conn,
            sender,
            pacer,
            gate,
            restriction,
            optedOut: (phone) => isOptedOut(redis, deviceId, phone),
            identities,
            fetchAttachment: deps.fetchAttachment,
            metrics,
            logger: this.log,
            openWaitMs: 30_000,
            retiredReason: () => this.retired,
            retired: this.retiredSignal.signal,
            linkGeneration: () => this.linkGeneration,
            handingOver: () => this.handingOver,
            unrecorded: this.unrecorded,
          },
          token,
        ),
      {
        connection: deps.bullConnection,
        prefix: BULL_PREFIX,
        autorun: false,
        // Pacing needs one message at a time; without pacing a few in flight keep the socket busy.
        concurrency: config.sendMinGapMs === 0 ? 8 : 1,
        // A killed owner's in-flight jobs come back as soon as the device is taken over (start()
        // voids their locks); short locks are the fallback, seconds rather than BullMQ's minute.
        // The lock is renewed every lockDuration/2, so a long media upload keeps its job.
        lockDuration: 10_000,
        stalledInterval: 5_000,
        // A stalled job is re-run with the same WhatsApp id, so a few stalls cannot duplicate it.
        maxStalledCount: 3,
      },
    );
    this.worker.on('completed', (job) =>
      metrics.jobsCompleted.inc({ queue_type: 'send', kind: job.data.kind }),
    );
    this.worker.on('failed', (job, err) => {
      void onSendJobFailed(job, err, { messages: deps.messages, metrics, logger: this.log }).catch(
        (e: unknown) => this.log.warn('failed job not recorded', { err: serializeError(e) }),
      );
    });
    this.worker.on('error', (err) => this.log.warn('send worker error', { err: serializeError(err) }));
    // Without a listener BullMQ prints a Redis outage's errors raw to stderr (not JSON, unredacted).
    this.queue.on('error', (err) => this.log.warn('send queue error', { err: serializeError(err) }));
    this.wireConnection();
  }

  get epoch(): number {
    return this.lease.epoch;
  }

  /** Another process may hold the device now: never write its auth state again. */
  markLeaseGone(): void {
    this.leaseGone = true;
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
      reclaimActiveJobs(this.deps.redis, this.queue),
    ]);
    this.linkGeneration = state.linkGeneration;
    if (reclaimed > 0) this.log.info('jobs an earlier holder left active taken back', { count: reclaimed });
  }

  /** The socket logged in: the worker runs (once prepared), or resumes. */
  private runWorker(): void {
    if (this.started) {
      if (this.worker.isPaused()) this.worker.resume();
      return;
    }
    this.started = true;
    void this.prepared.then(
      () =>
        this.worker
          .run()
          .catch((err: unknown) => this.log.error('worker stopped', { err: serializeError(err) })),
      // start() failed with it: the fleet stops this runtime.
      () => undefined,
    );
  }

  /** Hand-over (shutdown, lease lost): stop taking jobs, finish the active ones, close without logout. */
  async stop({ force = false } = {}): Promise<void> {
    // Jobs held back by pacing go back to the queue at once instead of delaying the shutdown.
    this.handingOver = true;
    this.pacer.release();
    // Jobs waiting for a socket that is reconnecting go back too, and no reconnect starts now.
    this.conn.drain();
    // Forced (the lease is gone): the socket closes at once, not after the worker (whose close
    // may wait on an unreachable Redis).
    if (force) await this.conn.stop();
    await this.worker.close(force).catch(() => undefined);
    await this.conn.stop();
    await this.queue.close().catch(() => undefined);
    this.clearState();
  }

  /** Logout requested through the API: log out on WhatsApp, then retire the device. */
  async logout(): Promise<void> {
    this.retired = FAILURE_REASONS.loggedOut;
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
    this.pacer.release();
    this.retiredSignal.abort();
    const { redis, sessions, messages } = this.deps;
    await purgeAuthState(redis, this.deviceId, this.lease.epoch);
    await markUnlinked(redis, this.deviceId);
    await forgetAccount(redis, this.deviceId);
    await sessions.markDisconnected(this.deviceId, reason);
    const ended = await purgeDeviceMessages(
      { redis, queue: this.queue, messages },
      this.deviceId,
      this.retired ?? FAILURE_REASONS.loggedOut,
    );
    this.log.info('device retired', { reason, messagesEnded: ended });
  }

  /** After retirement: lets the attempts in flight end (they fail at once), then closes the worker. */
  async drainRetired(timeoutMs = 20_000): Promise<void> {
    await waitUntilNoActiveJob(this.queue, timeoutMs);
    await this.worker.close(true).catch(() => undefined);
    await this.queue.close().catch(() => undefined);
    this.clearState();
  }

  private wireConnection(): void {
    const { metrics, sessions, messages } = this.deps;
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
        if (info.action === 'logged-out' && !this.retired) {
          this.retired = FAILURE_REASONS.loggedOut;
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
    this.conn.on('reconnecting', () => metrics.deviceReconnects.inc({ device: this.deviceId }));
    this.conn.on('name', (name) => {
      void sessions.update(this.deviceId, 'connected', { name }).catch(() => undefined);
    });
    this.conn.on('fenced', () => {
      if (!this.retired) this.onEnd(this, 'fenced');
    });
    this.wireAccountSafety();
    const receipts = new ReceiptBatcher(messages, this.deviceId, metrics, (err) =>
      this.log.warn('receipts not applied', { err: serializeError(err) }),
    );
    this.conn.on('receipts', (batch) => receipts.add(batch));
    this.conn.on('revisions', (received) => {
      void recordInboundRevisions(this.deps.revisions, this.deviceId, received, metrics, this.log);
    });
    this.conn.on('inbound', (received) => {
      void this.inboundKinds
        .apply(received)
        .then((rest) => recordInbound(this.deps.inbound, this.deviceId, rest, metrics, this.identities))
        .then((recorded) => checkKeywords(this.optOutKeywords, recorded, this.log))
        .catch((err: unknown) =>
          this.log.warn('inbound messages not recorded', { err: serializeError(err) }),
        );
    });
  }

  /** WhatsApp's reach-out lock pauses and resumes sending; who wrote to us is no first contact. */
  private wireAccountSafety(): void {
    this.conn.on('reachout', (lock) => {
      void this.restriction
        .onReachout(lock)
        .catch((err: unknown) => this.log.warn('reach-out lock not applied', { err: serializeError(err) }));
    });
    this.conn.on('wroteToUs', (addresses) => {
      void this.chatsOf(addresses)
        .then((chats) => rememberChats(this.deps.redis, this.deviceId, chats))
        .catch(() => undefined);
    });
    this.conn.on('identities', (learnt) => this.keepIdentities(learnt));
  }

  /** Keeps phone <-> LID pairs (and LIDs met alone) in the device's map. */
  private keepIdentities(learnt: ContactIdentity[]): void {
    void this.identities
      .learn(this.deviceId, learnt)
      .then((dropped) => {
        if (dropped > 0) this.log.warn('phone <-> LID map full: identities not kept', { dropped });
      })
      .catch((err: unknown) => this.log.warn('identities not kept', { err: serializeError(err) }));
  }

  /**
   * Who wrote, as the first-contact cap names chats: each phone and LID, and the phone the map
   * knows for a LID chat (so a send to either counts the chat as one that wrote).
   */
  private async chatsOf(addresses: string[]): Promise<string[]> {
    const chats = new Set(addresses);
    for (const c of await this.identities.resolveMany(this.deviceId, addresses)) {
      if (c.phone) chats.add(c.phone);
      if (c.lid) chats.add(c.lid);
    }
    return [...chats];
  }

  /** The account-safety gauges (usage of the window, pause), refreshed at scrape time. */
  async refreshSafetyMetrics(): Promise<void> {
    const { metrics, redis, config } = this.deps;
    const view = await sendingView(redis, this.deviceId, config.sendPolicy);
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
    return this.pacer.takeLagMs(now);
  }

  /** Queue depth by state, for the scrape-time gauge. */
  counts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
  }
}
