import type { Agent } from 'node:http';
import {
  isEntryPoint,
  parseAllowedPrivateHosts,
  runService,
  type OutboundConfig,
  type ServiceHost,
} from '@mgw/common';
import { keys, type Metrics } from '@mgw/contracts';
import {
  LeaseRenewer,
  sandboxMediaFetcher,
  startMessengerRuntime,
  type SandboxSocketOptions,
} from '@mgw/messenger';
import { GraphClient } from '@mgw/cloud';
import {
  CloudDeviceStore,
  ContentStore,
  InboundStore,
  MediaSettingsStore,
  HistoryStore,
  HISTORY_COUNT_TTL_SECONDS,
  MediaStore,
  MessageRevisions,
  SenderRoster,
  ConnectBucket,
  SuspendedWorkspaces,
} from '@mgw/store';
import { createMediaFetcher } from './commands/media-download.js';
import { MediaSweeper } from './inbound/media-sweeper.js';
import { createLinkPreviewer } from './send/link-preview.js';
import { loadSenderConfig, type SenderConfig } from './config.js';
import { DeviceFleet } from './fleet/device-fleet.js';
import { limitHeapGrowth } from './fleet/heap-growth.js';
import { createAttachmentFetcher } from './send/media-source.js';
import { CONTENT_CACHE } from './send/send-content.js';
import { startQueueMetrics } from './fleet/queue-metrics.js';
import { ConnectGate } from './fleet/connect-gate.js';

/**
 * Starts the sender: as its own process (this file run by node), or, given a host, as one part
 * of the all-in-one process (which imports it).
 */
export async function startSender(host?: ServiceHost<Metrics>): Promise<void> {
  const config = loadSenderConfig();
  // Before any device is loaded: the heap stays in proportion to the fleet this sender holds.
  limitHeapGrowth(config.heapGrowingPercent);
  const rt = await startMessengerRuntime('sender', config, host);
  const { logger, metrics, redis, leases, sessions, messages, encryption, sandbox } = rt;
  const bullConnection = rt.connect('worker', 'bull');
  const subscriber = rt.connect('subscriber', 'sub');
  const contents = new ContentStore(redis, encryption, config.store.messageRetentionSeconds, CONTENT_CACHE);
  const fetchAttachment = createAttachmentFetcher({
    outbound: config.outbound,
    timeoutMs: config.mediaFetchTimeoutMs,
  });
  const media = new MediaStore(redis, encryption, config.store.media, metrics);
  const sweeper = new MediaSweeper(redis, media, config.store.media.sweepIntervalMs, logger);
  const { ttlMs, renewMs } = config.messenger.lease;
  // Leases renew from a thread of their own: a busy event loop here does not let them lapse.
  const renewer = new LeaseRenewer({
    redis: config.redis,
    owner: leases.owner,
    ttlMs,
    renewMs,
    liveness: { key: keys.senderLiveness(), ttlMs: config.livenessTtlMs },
  });
  await renewer.ready();
  // Socket opens at a bounded rate per sender and per host, in priority order (a restart without a storm).
  const { perSender, perHost, scope } = config.connect;
  const connectGate = new ConnectGate({
    perSender,
    ...(perHost.ratePerSecond > 0 ? { host: new ConnectBucket(redis, scope, perHost) } : {}),
    metrics,
    logger,
  });
  // Which workspaces are suspended: their devices' messages are held (docs/workspaces.md).
  const workspaces = new SuspendedWorkspaces(redis, subscriber, logger);
  await workspaces.start();
  const fleet = new DeviceFleet(
    leases,
    renewer,
    new SenderRoster(redis, leases.owner, ttlMs),
    {
      config,
      logger,
      metrics,
      redis,
      bullConnection,
      encryption,
      sandbox,
      stores: {
        messages,
        contents,
        sessions,
        inbound: new InboundStore(redis, encryption, config.store.messageRetentionSeconds),
        revisions: new MessageRevisions(redis, encryption, config.store.messageRetentionSeconds),
        media,
        mediaSettings: new MediaSettingsStore(redis),
        history: new HistoryStore(redis, encryption, config.store.messageRetentionSeconds, {
          maxMessages: config.history.maxMessages,
          ttlSeconds: HISTORY_COUNT_TTL_SECONDS,
        }),
      },
      connectGate,
      workspaces,
      cloud: {
        devices: new CloudDeviceStore(redis, encryption),
        graph: new GraphClient({
          baseUrl: config.cloud.graphUrl,
          allowList: config.cloud.allowList,
          timeoutMs: config.cloud.timeoutMs,
        }),
      },
      fetchers: {
        linkPreview: createLinkPreviewer({
          outbound: config.outbound,
          logger,
          onOutcome: (outcome) => metrics.linkPreviews.inc({ outcome }),
        }),
        fetchAttachment,
        fetchMedia: mediaFetcher(config, sandbox),
      },
    },
    subscriber,
    logger,
  );
  // Ready only while it hears fresh links and device commands (a /disconnect is answered by the holder).
  const ops = await rt.startOps(
    () => fleet.subscriptionProblem === undefined,
    () => fleet.subscriptionProblem,
  );
  await fleet.start();
  const stopQueueMetrics = startQueueMetrics(fleet, metrics);
  sweeper.start();
  rt.installShutdown([
    { name: 'media sweep', run: () => sweeper.stop() },
    { name: 'hand devices over', run: () => fleet.stop() },
    { name: 'queue metrics', run: stopQueueMetrics },
    { name: 'workspace statuses', run: () => workspaces.stop() },
    { name: 'ops server', run: () => ops.close() },
  ]);
  logger.info('sender started', {
    owner: leases.owner,
    metricsPort: ops.port,
    heapGrowingPercent: config.heapGrowingPercent,
  });
}

if (isEntryPoint(import.meta.url)) runService('sender', () => startSender());

/**
 * WhatsApp's media (attachments, history chunks) through the guarded client; in sandbox mode from
 * the sandbox's media host only, whatever address a message names (`sandboxMediaFetcher`): a
 * sandbox that published none fails each download, saying so, and never reaches WhatsApp.
 */
function mediaFetcher(
  config: SenderConfig,
  sandbox: SandboxSocketOptions | undefined,
): (url: string, via?: Agent) => Promise<Buffer> {
  const fetchMedia = createMediaFetcher({
    outbound: sandboxMediaOutbound(config.outbound, sandbox?.mediaOrigin),
    timeoutMs: config.mediaFetchTimeoutMs,
    ...(sandbox ? { ca: sandbox.mediaCaPem } : {}),
  });
  return sandbox ? sandboxMediaFetcher(fetchMedia, sandbox.mediaOrigin) : fetchMedia;
}

/**
 * Sandbox mode only: media is fetched from the simulator's media host (a file named by its path
 * alone, as history is: no URL to take it from) even on a private or loopback address, as
 * webhooks may reach loopback there; that host only, besides ALLOWED_PRIVATE_HOSTS.
 */
function sandboxMediaOutbound(base: OutboundConfig, mediaOrigin: string | undefined): OutboundConfig {
  if (!mediaOrigin) return base;
  const host = new URL(mediaOrigin).hostname.replace(/^\[|\]$/g, '');
  return { allowList: parseAllowedPrivateHosts([...base.allowList.entries, host].join(',')) };
}
