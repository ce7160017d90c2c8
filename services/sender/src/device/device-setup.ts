import type { Agent } from 'node:http';
import { Worker } from 'bullmq';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import {
  BULL_PREFIX,
  WORKER_RUN_RETRY_DELAY_MS,
  sendQueueName,
  type ContactIdentity,
  type FailureReason,
  type Metrics,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import {
  DeviceSocket,
  loadDeviceProxy,
  MessageSender,
  type Lease,
  type SandboxSocketOptions,
} from '@mgw/messenger';
import type { GraphClient } from '@mgw/cloud';
import {
  Blocklist,
  type CloudDeviceStore,
  ChatIndex,
  ContactCache,
  ContactIdentities,
  ContactUsernames,
  isOptedOut,
  enqueueDeviceText,
  isOptedOutInPool,
  MessageIndex,
  MessageKindStore,
  MessageRetries,
  openSendQueue,
  queueTelemetry,
  type ContentStore,
  type DeviceTextDeps,
  type Encryption,
  type InboundStore,
  type MediaSettingsStore,
  type HistoryStore,
  type MediaStore,
  type MessageRevisions,
  type MessageStore,
  type SendQueue,
  type SessionStore,
  type SuspendedWorkspaces,
} from '@mgw/store';
import type { SenderConfig } from '../config.js';
import { IncomingCalls } from '../calls/incoming-calls.js';
import { ContactChecks } from '../commands/contact-check.js';
import type { AutoReadDeps } from '../inbound/auto-read.js';
import { InboundKinds } from '../inbound/inbound-kinds.js';
import { OptOutKeywords } from '../inbound/opt-outs.js';
import { retryHooks } from '../inbound/retry-receipts.js';
import type { LinkPreviewer } from '../send/link-preview.js';
import type { AttachmentFetcher } from '../send/media-source.js';
import { Pacer } from '../send/pacing.js';
import { SendGate } from '../send/send-gate.js';
import { processSendJob, type SendJobDeps, type SentAt } from '../send/send-job.js';
import { onSendJobFailed } from '../send/send-failure.js';
import { DeviceRestriction } from './device-restriction.js';
import { connectClassOf, type ConnectGate } from '../fleet/connect-gate.js';

/** The records a device reads and writes. */
export interface DeviceStores {
  messages: MessageStore;
  contents: ContentStore;
  sessions: SessionStore;
  /** Messages contacts write to the account (recorded sealed, announced as message.received). */
  inbound: InboundStore;
  /** Edits and deletes of message records (ours and contacts'). */
  revisions: MessageRevisions;
  /** Uploaded media (sends by `mediaId`) and inbound attachments kept on arrival. */
  media: MediaStore;
  mediaSettings: MediaSettingsStore;
  /** The account's history (history sync at link time, when the device keeps it). */
  history: HistoryStore;
}

/** What a send fetches from the web, through the guarded outbound client. */
export interface SendFetchers {
  /** Link previews of texts. */
  linkPreview: LinkPreviewer;
  /** Attachment URLs. */
  fetchAttachment: AttachmentFetcher;
  /** Inbound attachments from WhatsApp's media CDN (kept on arrival). */
  fetchMedia: (url: string, via?: Agent) => Promise<Buffer>;
}

/** What every device of this process is built from (main.ts builds it once). */
export interface RuntimeDeps {
  config: SenderConfig;
  logger: Logger;
  metrics: Metrics;
  /** Commands, auth state and records. */
  redis: RedisClient;
  /** BullMQ workers' connection (maxRetriesPerRequest null). */
  bullConnection: RedisClient;
  encryption: Encryption;
  sandbox?: SandboxSocketOptions;
  stores: DeviceStores;
  fetchers: SendFetchers;
  /** Admits the devices' socket opens at the configured rates, in priority order (none: at once). */
  connectGate?: ConnectGate;
  /** Which workspaces are suspended (none: no device's is). */
  workspaces?: Pick<SuspendedWorkspaces, 'deviceSuspended'>;
  /** The Cloud API engine's parts: cloud devices' configurations and the one Graph API client. */
  cloud: { devices: CloudDeviceStore; graph: GraphClient };
}

/**
 * What the device's lifecycle (device-runtime.ts) decides and the objects built here read: set
 * by start, stop, logout and the lease's fate, read by the socket and by every send job.
 */
export interface DeviceLife {
  /** Set once the device was logged out: every job left fails with this reason. */
  retired: FailureReason | undefined;
  /** Aborted on retirement, so sends in flight on the logged-out socket fail at once. */
  readonly retiredSignal: AbortController;
  /** The lease is gone (lost, or unconfirmed for a whole TTL): no auth-state write from here on. */
  leaseGone: boolean;
  /** The device's link generation, read when this process took the device. */
  linkGeneration: number;
  /** True while this process hands the device over: jobs not yet sent go back. */
  handingOver: boolean;
  /** Messages sent here whose "sent" could not be recorded yet (see processSendJob). */
  readonly unrecorded: Map<string, SentAt>;
}

export function newDeviceLife(): DeviceLife {
  return {
    retired: undefined,
    retiredSignal: new AbortController(),
    leaseGone: false,
    linkGeneration: 0,
    handingOver: false,
    unrecorded: new Map(),
  };
}

/** The objects one device runs on. */
export interface DeviceParts {
  conn: DeviceSocket;
  queue: SendQueue;
  worker: Worker<SendJobData, SendJobResult>;
  pacer: Pacer;
  restriction: DeviceRestriction;
  /** The number checks (POST /contacts/check) this device looks up at WhatsApp. */
  contactChecks: ContactChecks;
  /** The device's phone <-> LID map (libs/store contact-identities.ts). */
  identities: ContactIdentities;
  /** Keeps phone <-> LID pairs (and LIDs met alone) in the device's map. */
  keepIdentities: (learnt: ContactIdentity[]) => void;
  /** Reactions and poll votes from contacts (they update records, they are no messages). */
  inboundKinds: InboundKinds;
  optOutKeywords: OptOutKeywords;
  /** Sends, and WhatsApp's contact lookup behind the device's contact cache. */
  sender: MessageSender;
  /** The account's blocklist as the API checks sends against it (libs/store contacts/blocklist.ts). */
  blocklist: Blocklist;
  /** Incoming calls: events, and the automatic reject with its answer (calls/incoming-calls.ts). */
  calls: IncomingCalls;
  /** What marking incoming messages read automatically needs (inbound/auto-read.ts). */
  autoRead: AutoReadDeps;
}

/**
 * Builds what one device runs on when this process takes it: the socket and its message sender,
 * the send queue and its paced worker (with the policy's gate and the restriction), the stores of
 * identities and message kinds, and the opt-out keywords. Nothing starts here: the lifecycle opens
 * the socket and runs the worker.
 */
export function buildDevice(
  deviceId: string,
  lease: Lease,
  deps: RuntimeDeps,
  life: DeviceLife,
  log: Logger,
): DeviceParts {
  const { config, redis, metrics, encryption } = deps;
  const retention = config.store.messageRetentionSeconds;
  const queue = openSendQueue(deps.bullConnection, deviceId);
  // Without a listener BullMQ prints a Redis outage's errors raw to stderr (not JSON, unredacted).
  queue.on('error', (err) => log.warn('send queue error', { err: serializeError(err) }));
  const { connectGate } = deps;
  const conn = new DeviceSocket({
    redis,
    encryption,
    logger: log,
    deviceId,
    sandbox: deps.sandbox,
    messageRetentionSeconds: retention,
    // A retired device's socket may still try to save creds after its purge: refuse those.
    epoch: () => (life.retired || life.leaseGone ? undefined : lease.epoch),
    onGroupQuery: (kind) => metrics.groupQueries.inc({ kind }),
    // In line by what the device has waiting: an OTP first, then queued or scheduled messages.
    ...(connectGate
      ? {
          admission: (signal: AbortSignal) =>
            connectGate.enter(deviceId, () => connectClassOf(queue), signal),
        }
      : {}),
    retries: retryHooks(
      deviceId,
      new MessageRetries(redis, config.messageRetryMax),
      config.messageRetryMax,
      metrics,
      log,
    ),
    loadProxy: () =>
      loadDeviceProxy({
        redis,
        encryption,
        deviceId,
        defaultProxy: config.messenger.defaultProxy,
        ...(deps.sandbox ? { ca: deps.sandbox.mediaCaPem } : {}),
      }),
  });
  const identities = new ContactIdentities(redis);
  const usernames = new ContactUsernames(redis);
  const keepIdentities = (learnt: ContactIdentity[]): void => {
    // A username goes with its LID (usernames.ts): after the pair, so its LID has its phone.
    const named = learnt.flatMap((c) => (c.username && c.lid ? [{ username: c.username, lid: c.lid }] : []));
    void identities
      .learn(deviceId, learnt)
      .then(async (dropped) => dropped + (named.length ? await usernames.keep(deviceId, named) : 0))
      .then((dropped) => {
        if (dropped > 0) log.warn('phone <-> LID map full: identities not kept', { dropped });
      })
      .catch((err: unknown) => log.warn('identities not kept', { err: serializeError(err) }));
  };
  const sender = new MessageSender(conn, {
    redis,
    encryption,
    deviceId,
    logger: log,
    messageRetentionSeconds: retention,
    contacts: new ContactCache(redis, config.contactCacheTtlSeconds),
    onUpload: (type, bytes) => metrics.mediaUploadBytes.inc({ type }, bytes),
    onIdentities: keepIdentities,
  });
  const kinds = new MessageKindStore(redis, encryption, retention);
  const pacer = new Pacer(redis, deviceId, config.sendMinGapMs, config.sendGapJitterMs);
  const restriction = new DeviceRestriction({
    redis,
    deviceId,
    conn,
    backoff: config.backoff,
    metrics,
    logger: log,
    wakeHeld: () => queue.promoteJobs(),
  });
  // The device's own texts (opt-out confirmations, answers to rejected calls) go through its queue.
  const deviceText: DeviceTextDeps = {
    redis,
    deviceId,
    contents: deps.stores.contents,
    index: new MessageIndex(redis, retention),
    queue,
    linkGeneration: () => life.linkGeneration,
    metrics,
    failedRetentionSeconds: retention,
  };
  const optOutKeywords = new OptOutKeywords({ ...deviceText, logger: log });
  const calls = new IncomingCalls({
    redis,
    encryption,
    deviceId,
    conn,
    metrics,
    logger: log,
    reply: (to, text) => enqueueDeviceText(deviceText, to, text),
  });
  const gate = new SendGate(redis, deviceId, config.sendPolicy, metrics, Date.now, deps.workspaces);
  const blocklist = new Blocklist(redis);
  const worker = openSendWorker(deviceId, deps, log, {
    deviceId,
    messages: deps.stores.messages,
    inbound: deps.stores.inbound,
    contents: deps.stores.contents,
    revisions: deps.stores.revisions,
    linkPreview: deps.fetchers.linkPreview,
    proxyAgent: () => conn.proxyAgent,
    fetchAttachment: deps.fetchers.fetchAttachment,
    media: deps.stores.media,
    kinds,
    conn,
    sender,
    pacer,
    gate,
    restriction,
    optedOut: (phone, poolId) =>
      poolId ? isOptedOutInPool(redis, deviceId, poolId, phone) : isOptedOut(redis, deviceId, phone),
    blocked: (address) => blocklist.isBlocked(deviceId, address),
    identities,
    metrics,
    logger: log,
    openWaitMs: 30_000,
    retiredReason: () => life.retired,
    retired: life.retiredSignal.signal,
    linkGeneration: () => life.linkGeneration,
    handingOver: () => life.handingOver,
    unrecorded: life.unrecorded,
  });
  return {
    conn,
    queue,
    worker,
    pacer,
    restriction,
    contactChecks: new ContactChecks(sender, log),
    identities,
    keepIdentities,
    inboundKinds: new InboundKinds({ deviceId, kinds, sender, metrics, logger: log }),
    optOutKeywords,
    sender,
    blocklist,
    calls,
    autoRead: {
      redis,
      encryption,
      deviceId,
      conn,
      chats: new ChatIndex(redis, encryption),
      metrics,
      logger: log,
    },
  };
}

/** How long an idle send worker blocks waiting for a job before it looks again (BullMQ: 5). */
export const SEND_WORKER_DRAIN_DELAY_S = 30;
/** How often a send worker looks for jobs whose lock expired (BullMQ: 30 s; the lock is 10 s). */
export const SEND_WORKER_STALLED_INTERVAL_MS = 15_000;

/**
 * The device's send queue worker (not running yet): one job at a time when paced, short locks so
 * a killed owner's jobs come back soon, and what a job's end is recorded as.
 */
export function openSendWorker(
  deviceId: string,
  deps: RuntimeDeps,
  log: Logger,
  jobDeps: SendJobDeps,
  /** Jobs at once (a cloud device's follow its throughput); default by the pacing, below. */
  concurrency?: number,
): Worker<SendJobData, SendJobResult> {
  const { config, metrics } = deps;
  const worker = new Worker<SendJobData, SendJobResult>(
    sendQueueName(deviceId),
    (job, token) => processSendJob(job, jobDeps, token),
    {
      connection: deps.bullConnection,
      prefix: BULL_PREFIX,
      autorun: false,
      // Pacing needs one message at a time; without pacing a few in flight keep the socket busy.
      concurrency: concurrency ?? (config.sendMinGapMs === 0 ? 8 : 1),
      // A killed owner's in-flight jobs come back as soon as the device is taken over (start()
      // voids their locks); short locks are the fallback, seconds rather than BullMQ's minute.
      // The lock is renewed every lockDuration/2, so a long media upload keeps its job.
      lockDuration: 10_000,
      // An idle worker's polling is most of what an idle account costs (issue 55: ~190 of ~260
      // Redis commands a minute at BullMQ's 5 s). A new job wakes the blocked worker at once (its
      // marker), a delayed one is waited for by its due time (at most 10 s at a stretch), so the
      // long-poll only bounds how long a lost marker could go unnoticed. The stalled check only
      // matters for a lock that expired under its own holder (a takeover reclaims at once).
      drainDelay: SEND_WORKER_DRAIN_DELAY_S,
      stalledInterval: SEND_WORKER_STALLED_INTERVAL_MS,
      // A stalled job is re-run with the same WhatsApp id, so a few stalls cannot duplicate it.
      maxStalledCount: 3,
      runRetryDelay: WORKER_RUN_RETRY_DELAY_MS,
      // Each attempt a span of its message's trace (tracing on only: queue-telemetry.ts).
      telemetry: queueTelemetry(),
    },
  );
  worker.on('completed', (job) => metrics.jobsCompleted.inc({ queue_type: 'send', kind: job.data.kind }));
  worker.on('failed', (job, err) => {
    void onSendJobFailed(job, err, { messages: deps.stores.messages, metrics, logger: log }).catch(
      (e: unknown) => log.warn('failed job not recorded', { err: serializeError(e) }),
    );
  });
  worker.on('error', (err) => log.warn('send worker error', { err: serializeError(err) }));
  return worker;
}
