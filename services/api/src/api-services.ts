import {
  serializeError,
  type Logger,
  type createDefaultMetricsRegistry,
  type RedisClient,
} from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import { createOutboundClient, type OutboundClient } from '@mgw/common';
import { GraphClient } from '@mgw/cloud';
import {
  Blocklist,
  BatchStore,
  BrokerSettingsStore,
  ChatIndex,
  CloudDeviceStore,
  DeviceCommandClient,
  ContentStore,
  EventLog,
  InboundStore,
  MediaSettingsStore,
  MediaStore,
  MessageIndex,
  MessageRevisions,
  MessageKindStore,
  MessageStore,
  OpenedTextCache,
  API_OPENED_TEXT_CACHE,
  PoolBatchStore,
  PoolMoves,
  PoolStore,
  SessionStore,
  TokenStore,
  WebhookStore,
  WorkspaceQuotaCounts,
  WorkspaceStore,
  WorkspaceUsage,
  type Encryption,
  StatusStore,
} from '@mgw/store';
import type { ApiConfig } from './config.js';
import { ConnectionServiceClient } from './clients/connection-service-client.js';
import { Idempotency } from './http/idempotency.js';
import { QueueEventsPool } from './clients/queue-events-pool.js';
import { MessageAcceptor } from './enqueue/message-acceptor.js';
import { WorkspaceQuotaGate } from './enqueue/workspace-quota-gate.js';
import { TokenCache } from './http/token-cache.js';
import { WorkspaceCache } from './http/workspace-cache.js';
import { PoolMover } from './features/pools/pool-mover.js';
import { EventLogTrimmer } from './features/events/event-log-trimmer.js';
import { EventStreams } from './features/events/event-streams.js';
import { WorkspaceUsageGauge } from './features/workspaces/usage-metrics.js';
import { EngineCache, TemplateCatalog, type CloudSendDeps } from './features/cloud-send/index.js';

/**
 * What a feature uses of the services: a feature's handlers take `Uses<'redis' | 'sessions'>`, not
 * the whole bag, so what each capability depends on is read from its signature.
 */
export type Uses<K extends keyof ApiServices> = Pick<ApiServices, K>;

/** Everything the express app needs; built by main.ts and by the tests in the same way. */
export interface ApiServices {
  config: ApiConfig;
  logger: Logger;
  /** The API's own commands. */
  redis: RedisClient;
  /** BullMQ's producer connection (kept apart: ioredis copies BullMQ's scripts into every batch on it). */
  bullRedis: RedisClient;
  metrics: Metrics;
  /** Seals what the API stores that must not be readable at rest (idempotency replays). */
  encryption: Encryption;
  defaultMetrics?: ReturnType<typeof createDefaultMetricsRegistry>;
  tokens: TokenStore;
  /** Verified tokens, kept briefly and dropped at once when revoked. */
  tokenCache: TokenCache;
  /** The workspaces and what each owns (docs/workspaces.md). */
  workspaces: WorkspaceStore;
  /** What each workspace's devices did per day (docs/workspaces.md "Usage"). */
  usage: WorkspaceUsage;
  /** A workspace's quotas on sends and uploads (enqueue/workspace-quota-gate.ts). */
  workspaceQuotas: WorkspaceQuotaGate;
  /** Today's usage per workspace as metrics, bounded (features/workspaces/usage-metrics.ts). */
  usageGauge: WorkspaceUsageGauge;
  /** Their records as auth reads them on every request: kept, and dropped at once when changed. */
  workspaceCache: WorkspaceCache;
  sessions: SessionStore;
  messages: MessageStore;
  batches: BatchStore;
  /** The order of a device's messages (GET /messages). */
  index: MessageIndex;
  /** Messages contacts wrote (GET /messages/:id opens their text). */
  inbound: InboundStore;
  /** Edits and deletes of message records (GET /messages/:id shows them). */
  revisions: MessageRevisions;
  /** Message kinds on records: reaction, location, contact cards, a poll and its tally. */
  kinds: MessageKindStore;
  webhooks: WebhookStore;
  /** Checks webhook URLs against the outbound guard (the notifier's client makes the calls). */
  outbound: OutboundClient;
  acceptor: MessageAcceptor;
  /** The account's blocklist (kept by the device's holder): a send to a blocked number is refused. */
  blocklist: Blocklist;
  /** Request contents (a pooled message's move reads its content from the device it leaves). */
  contents: ContentStore;
  /** Lists sent through a pool, and the moves of their messages between its devices. */
  poolBatches: PoolBatchStore;
  poolMoves: PoolMoves;
  connection: ConnectionServiceClient;
  idempotency: Idempotency;
  /** Every event of a device, retained for GET /events (sealed data opened on read). */
  eventLog: EventLog;
  /** The open GET /events/stream streams of this process. */
  eventStreams: EventStreams;
  /** The devices' broker settings (GET/PUT /events/brokers). */
  brokerSettings: BrokerSettingsStore;
  /** Media objects: POST/GET/DELETE /media, and the URLs of inbound attachments kept on arrival. */
  media: MediaStore;
  /** Which inbound attachment types each device keeps on arrival (GET/PUT /media/settings). */
  mediaSettings: MediaSettingsStore;
  /** Status updates: their audiences and views (docs/broadcasts.md). */
  statuses: StatusStore;
  /** The device's chats and their unread messages (GET /chats). */
  chats: ChatIndex;
  /**
   * The Cloud API devices' configurations (sealed), profiles and states (features/cloud), and the
   * indexes Meta's webhooks are routed by (features/cloud-webhook).
   */
  cloudDevices: CloudDeviceStore;
  /**
   * Meta's Graph API (CLOUD_GRAPH_URL), the only client that speaks it: a cloud device's credentials
   * are checked there (features/cloud), its WABA's templates read (features/cloud-send).
   */
  graph: GraphClient;
  /**
   * The device commands to a device's holder (features/holder/ask-holder.ts), built once: every
   * feature that asks the holder is handed this client (each wait takes a connection of its own).
   */
  commands: DeviceCommandClient;
  /**
   * The cloud numbers' templates, read from their WABAs and kept in Redis: /send's check
   * (features/cloud-send) and GET /cloud/templates (features/cloud) share the one list.
   */
  cloudTemplates: TemplateCatalog;
  /**
   * The Cloud API's rules at accept time (features/cloud-send/): each device's engine (kept a few
   * seconds), the numbers' templates (`cloudTemplates`), the contacts' 24-hour windows.
   */
  cloudSend: CloudSendDeps;
  /** Subscribes to what the API must hear at once (token revocations). */
  start(): Promise<void>;
  /** Closes queues and their event listeners (not the Redis connections it was given). */
  close(): Promise<void>;
}

export function createApiServices(base: {
  config: ApiConfig;
  logger: Logger;
  redis: RedisClient;
  bullRedis: RedisClient;
  /** Pub/sub connection (token revocations, event log growth). */
  subscriber: RedisClient;
  metrics: Metrics;
  /** Seals what the API stores that must not be readable at rest (contents, idempotency replays). */
  encryption: Encryption;
  defaultMetrics?: ReturnType<typeof createDefaultMetricsRegistry>;
  /** How long a queue's QueueEvents stays open without waiters (default 5 minutes). */
  queueEventsIdleMs?: number;
}): ApiServices {
  const { config, logger, redis, bullRedis, metrics } = base;
  const retention = config.store.messageRetentionSeconds;
  const messages = new MessageStore(redis, retention);
  const batches = new BatchStore(redis, retention);
  const index = new MessageIndex(redis, retention);
  const events = new QueueEventsPool(config.redis, redis, logger, base.queueEventsIdleMs);
  // What the message and chat pages open again on every request (texts, previews, contents).
  const opener = OpenedTextCache.over(base.encryption, {
    ...API_OPENED_TEXT_CACHE,
    maxBytes: config.openedTextCacheBytes,
  });
  const contents = new ContentStore(redis, opener, retention);
  const workspaces = new WorkspaceStore(redis, config.workspaceCeilings);
  const workspaceCache = new WorkspaceCache(workspaces, base.subscriber, logger, new PoolStore(redis));
  const usage = new WorkspaceUsage(redis, workspaces);
  const quotaCounts = new WorkspaceQuotaCounts(redis);
  const workspaceQuotas = new WorkspaceQuotaGate({
    ownerOf: (id) => workspaceCache.ownerOf(id),
    workspace: (id) => workspaceCache.get(id),
    devicesOf: (id) => usage.devicesOf(id),
    counts: quotaCounts,
  });
  const acceptor = new MessageAcceptor({
    redis,
    bullRedis,
    jobs: {
      attempts: config.sendAttempts,
      backoffMs: config.sendBackoffMs,
      failedRetentionSeconds: retention,
    },
    quota: config.deviceQuota,
    chunkRecipients: config.acceptChunkRecipients,
    messages,
    batches,
    index,
    contents,
    events,
    metrics,
    logger,
    workspaceQuotas,
  });
  const connection = new ConnectionServiceClient({
    redis: bullRedis,
    events,
    replyTimeoutMs: config.connectionReplyTimeoutMs,
    metrics,
    logger,
  });
  const tokens = new TokenStore(redis);
  const tokenCache = new TokenCache(tokens, base.subscriber, logger);
  // A run holds its key at most the longest wait of a request (OTP, connect), with room to spare:
  // a claim older than that was left by a run that is gone, and is taken over.
  const inProgressTtl =
    Math.ceil(Math.max(config.otpWaitTimeoutMs, config.connectionReplyTimeoutMs) / 1000) + 60;
  const eventLog = new EventLog(redis, base.encryption, config.eventLog.retentionMs, (deviceId, event) =>
    // GET /events and the streams go on past it (with `truncated`); the operator must know why.
    logger.error('event log: an event that cannot be opened was passed over', {
      deviceId,
      eventId: event.id,
      cursor: event.cursor,
      problem: event.problem,
    }),
  );
  // Enforces the event log's retention window on every device (one API process per round).
  const trimmer = new EventLogTrimmer({ redis, eventLog, logger });
  const eventStreams = new EventStreams({
    eventLog,
    subscriber: base.subscriber,
    redis,
    logger,
    metrics,
    config: config.eventStream,
  });
  const cloudDevices = new CloudDeviceStore(redis, base.encryption);
  const graph = new GraphClient({
    baseUrl: config.cloud.graphUrl,
    allowList: config.cloud.allowList,
    timeoutMs: config.cloud.timeoutMs,
  });
  const cloudTemplates = new TemplateCatalog(redis, graph);
  const services: ApiServices = {
    config,
    logger,
    redis,
    bullRedis,
    metrics,
    encryption: base.encryption,
    defaultMetrics: base.defaultMetrics,
    tokens,
    tokenCache,
    workspaces,
    workspaceCache,
    usage,
    workspaceQuotas,
    usageGauge: new WorkspaceUsageGauge({ usage, workspaces, metrics }),
    sessions: new SessionStore(redis),
    messages,
    batches,
    index,
    inbound: new InboundStore(redis, opener, retention),
    revisions: new MessageRevisions(redis, opener, retention),
    kinds: new MessageKindStore(redis, opener, retention),
    webhooks: new WebhookStore(redis, base.encryption, config.webhookSecretOverlapSeconds),
    outbound: createOutboundClient({
      allowList: config.outbound.allowList,
      timeoutMs: 5000,
      maxBytes: 0,
    }),
    acceptor,
    blocklist: new Blocklist(redis),
    contents,
    poolBatches: new PoolBatchStore(redis, retention),
    poolMoves: new PoolMoves(redis, retention),
    connection,
    idempotency: new Idempotency(redis, base.encryption, config.idempotencyTtlSeconds, inProgressTtl),
    eventLog,
    eventStreams,
    brokerSettings: new BrokerSettingsStore(redis),
    media: new MediaStore(redis, base.encryption, config.store.media, metrics),
    mediaSettings: new MediaSettingsStore(redis),
    statuses: new StatusStore(redis, base.encryption),
    chats: new ChatIndex(redis, opener),
    commands: new DeviceCommandClient(redis, bullRedis),
    cloudDevices,
    graph,
    cloudTemplates,
    cloudSend: {
      redis,
      engines: new EngineCache(cloudDevices),
      cloudDevices,
      templates: cloudTemplates,
      logger,
    },
    start: async () => {
      await tokenCache.start();
      await workspaceCache.start();
      // An install from before workspaces: its devices listed under `default` (they are its
      // already: a device no workspace names is default's). Serving does not wait on it.
      workspaces.adopt().catch((err: unknown) => {
        logger.warn('could not list the devices of the default workspace', { err: serializeError(err) });
      });
      // Tokens of workspaces made before their workspace's token index: listed there once.
      tokens.indexWorkspaceTokens().catch((err: unknown) => {
        logger.warn("could not list the workspaces' tokens in their indexes", { err: serializeError(err) });
      });
      await eventStreams.start();
      mover.start();
      trimmer.start();
    },
    async close() {
      await Promise.all([mover.stop(), trimmer.stop(), eventStreams.close()]);
      await Promise.all([acceptor.close(), connection.close()]);
      await events.close();
    },
  };
  // Moves pooled messages off devices that dropped out of their pool (one API process per pool at a time).
  const mover = new PoolMover(services, {
    intervalMs: config.pools.moveIntervalMs,
    minHealth: config.pools.minHealth,
  });
  return services;
}
