import client from 'prom-client';
import { cloudMetrics } from './cloud-metrics.js';

/**
 * The product's metrics, defined once for every service (a service uses the ones it needs): the
 * dashboards and alert rules rely on these names and labels.
 * Conventions: one prefix, base units, `_total` only on counters, and no phone number, JID,
 * token or message id as a label (device ids are bounded and allowed).
 */
export const METRIC_PREFIX = 'mgw_';

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * `exemplars`: the latency histograms (the request's, the send's, the OTP's and the webhook's) keep
 * the `trace_id` of an observation per bucket, served in OpenMetrics (services pass whether traces
 * are exported: docs/monitoring.md "Traces"); an observation then takes `{ labels, value,
 * exemplarLabels }` (`observeTraced` of @mgw/common does both forms).
 */
export function createMetrics({ exemplars = false }: { exemplars?: boolean } = {}) {
  const registry = new client.Registry();
  // prom-client keeps exemplars only on an OpenMetrics registry (@mgw/common renders it as either).
  if (exemplars) registry.setContentType(client.Registry.OPENMETRICS_CONTENT_TYPE as never);
  const enableExemplars = exemplars;
  const p = METRIC_PREFIX;
  const reg = [registry];
  return {
    registry,
    httpRequests: new client.Counter({
      name: `${p}http_requests_total`,
      help: 'HTTP requests served, by route template, method and status code.',
      labelNames: ['route', 'method', 'status'] as const,
      registers: reg,
    }),
    httpDuration: new client.Histogram({
      name: `${p}http_request_duration_seconds`,
      help: 'HTTP request latency, by route template, method and status code.',
      labelNames: ['route', 'method', 'status'] as const,
      buckets: SECONDS_BUCKETS,
      enableExemplars,
      registers: reg,
    }),
    rateLimitRejections: new client.Counter({
      name: `${p}rate_limit_rejections_total`,
      help: 'Requests refused with 429 by a per-token rate limit, by endpoint.',
      labelNames: ['endpoint'] as const,
      registers: reg,
    }),
    authRejections: new client.Counter({
      name: `${p}auth_rejections_total`,
      help: 'Requests refused by authentication, by reason (missing, invalid, expired, blocked).',
      labelNames: ['reason'] as const,
      registers: reg,
    }),
    jobsEnqueued: new client.Counter({
      name: `${p}jobs_enqueued_total`,
      help: 'Jobs added to a queue, by queue type and job kind.',
      labelNames: ['queue_type', 'kind'] as const,
      registers: reg,
    }),
    jobsCompleted: new client.Counter({
      name: `${p}jobs_completed_total`,
      help: 'Jobs finished successfully, by queue type and job kind.',
      labelNames: ['queue_type', 'kind'] as const,
      registers: reg,
    }),
    jobsFailed: new client.Counter({
      name: `${p}jobs_failed_total`,
      help: 'Jobs that ended failed (no more attempts), by queue type and reason.',
      labelNames: ['queue_type', 'reason'] as const,
      registers: reg,
    }),
    jobsRetried: new client.Counter({
      name: `${p}jobs_retried_total`,
      help: 'Job attempts that failed and will be retried, by queue type.',
      labelNames: ['queue_type'] as const,
      registers: reg,
    }),
    queueJobs: new client.Gauge({
      name: `${p}queue_jobs`,
      help: 'Jobs in the queues by state (waiting, active, delayed, failed, prioritized), by queue type.',
      labelNames: ['queue_type', 'state'] as const,
      registers: reg,
    }),
    sendLatency: new client.Histogram({
      name: `${p}send_latency_seconds`,
      help: 'Time from enqueue to sent, by job kind.',
      labelNames: ['kind'] as const,
      buckets: SECONDS_BUCKETS,
      enableExemplars,
      registers: reg,
    }),
    messages: new client.Counter({
      name: `${p}messages_total`,
      help: "Messages reaching a status (sent, delivered, read, failed, received), and contacts' edits and deletes applied (edited, deleted) or naming a message we do not have (edited_unknown, deleted_unknown); secret-encrypted edits not opened (edited_undecryptable) or of a kind not applied (edited_unsupported: poll edits, options added).",
      labelNames: ['status'] as const,
      registers: reg,
    }),
    // Retry receipts (libs/store/lua/message-retry-5.lua, docs/events.md "Retry receipts").
    messageRetries: new client.Counter({
      name: `${p}message_retries_total`,
      help: 'Retry receipts of our messages (a recipient could not decrypt), by outcome: resent (answered with a re-send), refused (past MESSAGE_RETRY_MAX or deleted), unavailable (the message is gone).',
      labelNames: ['outcome'] as const,
      registers: reg,
    }),
    messagesUndecryptable: new client.Counter({
      name: `${p}messages_undecryptable_total`,
      help: 'Messages whose recipient asked for them again MESSAGE_RETRY_MAX times with no delivery receipt (message.undecryptable), by device.',
      labelNames: ['device'] as const,
      registers: reg,
    }),
    ...cloudMetrics(p, reg),
    optOutChanges: new client.Counter({
      name: `${p}opt_out_changes_total`,
      help: 'Numbers put on (opted_out) or taken off (opted_in) a suppression list, by source (keyword, admin).',
      labelNames: ['direction', 'source'] as const,
      registers: reg,
    }),
    otpSent: new client.Counter({
      name: `${p}otp_sent_total`,
      help: 'OTP messages answered to the client as sent, by language.',
      labelNames: ['language'] as const,
      registers: reg,
    }),
    otpLatency: new client.Histogram({
      name: `${p}otp_latency_seconds`,
      help: 'Time from OTP request to sent, as waited for by the API.',
      buckets: SECONDS_BUCKETS,
      enableExemplars,
      registers: reg,
    }),
    deviceState: new client.Gauge({
      name: `${p}device_connection_state`,
      help: '1 for the current connection state of each device this process owns, 0 otherwise.',
      labelNames: ['device', 'state'] as const,
      registers: reg,
    }),
    deviceReconnects: new client.Counter({
      name: `${p}device_reconnects_total`,
      help: 'Socket reconnect attempts, by device.',
      labelNames: ['device'] as const,
      registers: reg,
    }),
    deviceDisconnects: new client.Counter({
      name: `${p}device_disconnects_total`,
      help: 'Socket closes, by device and reason (restart_required, logged_out, replaced, timed_out, ...).',
      labelNames: ['device', 'reason'] as const,
      registers: reg,
    }),
    deviceProxyErrors: new client.Counter({
      name: `${p}device_proxy_errors_total`,
      help: "Connections through a device's proxy that failed, by device and kind (unreachable, auth, refused, error).",
      labelNames: ['device', 'kind'] as const,
      registers: reg,
    }),
    poolMoves: new client.Counter({
      name: `${p}pool_moves_total`,
      help: 'Pooled messages moved from a device that dropped out of its pool to another, by pool, device left and why it dropped out.',
      labelNames: ['pool', 'from', 'reason'] as const,
      registers: reg,
    }),
    leasesHeld: new client.Gauge({
      name: `${p}leases_held`,
      help: 'Device leases held by this sender process.',
      registers: reg,
    }),
    leaseRenewals: new client.Counter({
      name: `${p}lease_renewals_total`,
      help: 'Lease renewals by outcome (renewed, restored after a lapse nobody used, lost, unknown).',
      labelNames: ['outcome'] as const,
      registers: reg,
    }),
    leaseRenewRounds: new client.Histogram({
      name: `${p}lease_renew_round_seconds`,
      help: 'Duration of one renewal round (one pipeline for every lease of the process).',
      buckets: SECONDS_BUCKETS,
      registers: reg,
    }),
    sendersLive: new client.Gauge({
      name: `${p}senders_live`,
      help: 'Live sender processes in the roster, as seen by this sender.',
      registers: reg,
    }),
    senderFairShare: new client.Gauge({
      name: `${p}sender_fair_share`,
      help: 'Devices this sender may hold: ceil(linked devices / live senders), capped by SENDER_MAX_DEVICES.',
      registers: reg,
    }),
    deviceHandovers: new client.Counter({
      name: `${p}device_handovers_total`,
      help: 'Directed hand-overs of devices between senders (fair share), given or taken by this sender.',
      labelNames: ['direction'] as const,
      registers: reg,
    }),
    deviceTakeovers: new client.Counter({
      name: `${p}device_takeovers_total`,
      help: 'Devices this sender took over from a sender whose liveness had expired (killed, hung), before its lease ran out.',
      registers: reg,
    }),
    senderScheduleLag: new client.Gauge({
      name: `${p}sender_schedule_lag_seconds`,
      help: "How far this sender is behind its devices' paced schedule: the median, over the devices with paced messages in the last few seconds, of how late their messages went (or the one waiting is) past the time it was due.",
      registers: reg,
    }),
    deviceClaimSeconds: new client.Histogram({
      name: `${p}device_claim_seconds`,
      help: 'From the start of a directed hand-over (the giver released the lease) to its claim here.',
      buckets: SECONDS_BUCKETS,
      registers: reg,
    }),
    connectWaiting: new client.Gauge({
      name: `${p}connect_admissions_waiting`,
      help: 'Device socket opens waiting in this sender for admission by the connect rate (per sender and per host).',
      registers: reg,
    }),
    connectAdmitted: new client.Counter({
      name: `${p}connect_admitted_total`,
      help: 'Device socket opens admitted by the connect rate, by priority class: otp (an OTP queued), queued (messages queued or scheduled), idle.',
      labelNames: ['priority'] as const,
      registers: reg,
    }),
    connectWaitSeconds: new client.Histogram({
      name: `${p}connect_wait_seconds`,
      help: 'How long a device socket open waited for admission by the connect rate, by priority class.',
      labelNames: ['priority'] as const,
      buckets: [...SECONDS_BUCKETS, 600, 1800],
      registers: reg,
    }),
    authCache: new client.Counter({
      name: `${p}auth_cache_total`,
      help: 'Auth-state (Signal key) cache lookups and evictions: result = hit, miss, eviction.',
      labelNames: ['result'] as const,
      registers: reg,
    }),
    authCacheBytes: new client.Gauge({
      name: `${p}auth_cache_bytes`,
      help: 'Approximate size of the auth-state cache (sealed bytes of the cached values).',
      registers: reg,
    }),
    workspaceUsageToday: new client.Gauge({
      name: `${p}workspace_usage_today`,
      help: 'Today\'s usage (UTC) of the workspaces that accepted most today (the 20 that accepted most; the rest summed as workspace="_other"), by count: accepted, otp, sent, delivered, read, failed, received, mediaBytes. Every API process reports the same figures: aggregate with max.',
      labelNames: ['workspace', 'count'] as const,
      registers: reg,
    }),
    devicesLinked: new client.Gauge({
      name: `${p}devices_linked`,
      help: 'Devices with stored credentials (seen by this process on its last scan).',
      registers: reg,
    }),
    mediaUploadBytes: new client.Counter({
      name: `${p}media_upload_bytes_total`,
      help: 'Bytes of media uploaded to WhatsApp, by attachment type.',
      labelNames: ['type'] as const,
      registers: reg,
    }),
    mediaStoreOps: new client.Counter({
      name: `${p}media_store_operations_total`,
      help: 'Media store operations (put, get, delete, sweep) by store (redis, s3) and outcome (ok, failed).',
      labelNames: ['op', 'store', 'outcome'] as const,
      registers: reg,
    }),
    mediaStoreBytes: new client.Counter({
      name: `${p}media_store_bytes_total`,
      help: 'Bytes written to the media store, by source (upload, inbound).',
      labelNames: ['source'] as const,
      registers: reg,
    }),
    mediaInboundKept: new client.Counter({
      name: `${p}media_inbound_kept_total`,
      help: 'Inbound attachments of devices that keep their type on arrival, by outcome (kept, too_large, download_failed, media_store_unavailable, quota_full).',
      labelNames: ['outcome'] as const,
      registers: reg,
    }),
    mediaSwept: new client.Counter({
      name: `${p}media_swept_total`,
      help: 'Expired media objects deleted from the S3 bucket by the retention sweep.',
      registers: reg,
    }),
    deviceRestricted: new client.Gauge({
      name: `${p}device_restricted`,
      help: '1 while a device this process owns has its sending paused because WhatsApp pushed back, by device and reason.',
      labelNames: ['device', 'reason'] as const,
      registers: reg,
    }),
    deviceRestrictions: new client.Counter({
      name: `${p}device_restrictions_total`,
      help: 'Sending pauses started on a server signal (reach-out lock, ack 463/429, failures in a row), by reason.',
      labelNames: ['reason'] as const,
      registers: reg,
    }),
    deviceHealthScore: new client.Gauge({
      name: `${p}device_health_score`,
      help: "Health score (0-100) of a device this process owns: 100 less the points WhatsApp's push-back, reconnects, logouts and first contacts cost it (docs/architecture.md).",
      labelNames: ['device'] as const,
      registers: reg,
    }),
    deviceSentToday: new client.Gauge({
      name: `${p}device_sent_today`,
      help: 'Messages a device this process owns sent in its current cap window (its day).',
      labelNames: ['device'] as const,
      registers: reg,
    }),
    deviceDailyCap: new client.Gauge({
      name: `${p}device_daily_cap`,
      help: 'The cap of the current window of a device this process owns (warm-up step or daily cap); absent when uncapped.',
      labelNames: ['device'] as const,
      registers: reg,
    }),
    deviceFirstContactsToday: new client.Gauge({
      name: `${p}device_first_contacts_today`,
      help: 'First messages to numbers the account had no chat with, sent by a device in its current window.',
      labelNames: ['device'] as const,
      registers: reg,
    }),
    sendsHeld: new client.Counter({
      name: `${p}sends_held_total`,
      help: 'Times a message went back to wait in its queue (no attempt used), by why: daily_cap, first_contact_cap, quiet_hours, restricted, batch_paused.',
      labelNames: ['reason'] as const,
      registers: reg,
    }),
    sendAttemptsEnded: new client.Counter({
      name: `${p}send_attempts_failed_total`,
      help: 'Send attempts that ended without the message sent, by whether its send began: true (a frame of it may have reached WhatsApp: it stays on its device, a logout fails it), false (it ended before the socket, or WhatsApp refused it with an error ack: a pooled message may still move).',
      labelNames: ['began'] as const,
      registers: reg,
    }),
    contactLookups: new client.Counter({
      name: `${p}contact_lookups_total`,
      help: 'Numbers of POST /contacts/check by outcome: cache_hit (answered from the cache), looked_up (asked of WhatsApp), capped (refused by the daily lookup cap).',
      labelNames: ['outcome'] as const,
      registers: reg,
    }),
    linkPreviews: new client.Counter({
      name: `${p}link_previews_total`,
      help: 'Link preview fetches of texts by outcome: ok, none (no title, not HTML, an error status), refused (the outbound guard), failed (time, size, network). Only ok adds a preview; the text is sent either way.',
      labelNames: ['outcome'] as const,
      registers: reg,
    }),
    groupQueries: new client.Counter({
      name: `${p}group_queries_total`,
      help: "Group metadata queries a sender made to WhatsApp: group (one group's members, when not cached) and all (the account's groups).",
      labelNames: ['kind'] as const,
      registers: reg,
    }),
    groupCommands: new client.Counter({
      name: `${p}group_commands_total`,
      help: 'Group requests (list, get, create, participants, leave) the device holder handled, by outcome (ok, failed).',
      labelNames: ['type', 'outcome'] as const,
      registers: reg,
    }),
    labelsNotKept: new client.Counter({
      name: `${p}labels_not_kept_total`,
      help: "Label changes from app-state sync the device's label store refused, by bound: labels (over the labels per device) or chats (over the chats per label). The event is still published.",
      labelNames: ['bound'] as const,
      registers: reg,
    }),
    accountCommands: new client.Counter({
      name: `${p}account_commands_total`,
      help: 'Account requests (profile, photo, presence, contact profile, block) the device holder handled, by type and outcome (ok, failed).',
      labelNames: ['type', 'outcome'] as const,
      registers: reg,
    }),
    calls: new client.Counter({
      name: `${p}calls_total`,
      help: 'Incoming calls the device holder saw, by outcome (received, rejected, missed, ended).',
      labelNames: ['outcome'] as const,
      registers: reg,
    }),
    readReceipts: new client.Counter({
      name: `${p}read_receipts_total`,
      help: 'Messages marked read, by how (request, auto) and what the contact saw (shown, self: read-receipts privacy off).',
      labelNames: ['how', 'shown'] as const,
      registers: reg,
    }),
    historyChunks: new client.Counter({
      name: `${p}history_sync_chunks_total`,
      help: "History sync chunks the account's phone sent, by outcome (read, declined: the device keeps no history, too_large, failed).",
      labelNames: ['outcome'] as const,
      registers: reg,
    }),
    historyMessages: new client.Counter({
      name: `${p}history_sync_messages_total`,
      help: 'Messages of history sync chunks, by outcome (recorded, seen: recorded before, refused: past HISTORY_SYNC_MAX_MESSAGES).',
      labelNames: ['outcome'] as const,
      registers: reg,
    }),
    webhookDeliveries: new client.Counter({
      name: `${p}webhook_deliveries_total`,
      help: 'Webhook delivery attempts by event type and outcome (delivered, retry, exhausted, gone, dropped, unreadable).',
      labelNames: ['type', 'outcome'] as const,
      registers: reg,
    }),
    webhookLatency: new client.Histogram({
      name: `${p}webhook_delivery_latency_seconds`,
      help: 'Time from an event to its delivery acknowledged by the endpoint (2xx), by event type.',
      labelNames: ['type'] as const,
      buckets: SECONDS_BUCKETS,
      enableExemplars,
      registers: reg,
    }),
    webhookAttemptDuration: new client.Histogram({
      name: `${p}webhook_attempt_duration_seconds`,
      help: 'Duration of one webhook HTTP attempt, whatever its outcome.',
      buckets: SECONDS_BUCKETS,
      enableExemplars,
      registers: reg,
    }),
    webhookBacklog: new client.Gauge({
      name: `${p}webhook_backlog`,
      help: 'Webhook events not delivered yet, by state: waiting (in the outboxes, first attempt not ended), delayed (waiting for a retry), active (attempts in flight in this notifier).',
      labelNames: ['state'] as const,
      registers: reg,
    }),
    webhookConsecutiveFailures: new client.Gauge({
      name: `${p}webhook_consecutive_failures`,
      help: 'Failed attempts in a row of the device webhook endpoint (0 after a success).',
      labelNames: ['device'] as const,
      registers: reg,
    }),
    eventStreamsOpen: new client.Gauge({
      name: `${p}event_streams_open`,
      help: "Event streams open in this API process, by transport: sse (GET /events/stream, the dashboard's admin stream) or websocket (GET /events/ws).",
      labelNames: ['transport'] as const,
      registers: reg,
    }),
    eventStreamsCut: new client.Counter({
      name: `${p}event_streams_cut_total`,
      help: 'Event streams the API ended itself, by reason: slow_reader (the client did not keep up), shutdown, error (the log could not be read), dead_peer (a WebSocket that stopped answering pings); and transport (sse, websocket).',
      labelNames: ['reason', 'transport'] as const,
      registers: reg,
    }),
    redisUp: new client.Gauge({
      name: `${p}redis_up`,
      help: '1 when this process reached Redis and Redis accepted a write on its last check, else 0.',
      registers: reg,
    }),
    redisSubscribed: new client.Gauge({
      name: `${p}redis_subscribed`,
      help: '1 while the server has confirmed this process subscribed to the Redis pub/sub channel, else 0 (messages published meanwhile are missed).',
      labelNames: ['channel'] as const,
      registers: reg,
    }),
    redisMemoryUsed: new client.Gauge({
      name: `${p}redis_memory_used_bytes`,
      help: 'Memory Redis uses (INFO memory used_memory), read by the API on each scrape.',
      registers: reg,
    }),
    redisMemoryMax: new client.Gauge({
      name: `${p}redis_memory_max_bytes`,
      help: 'Redis maxmemory (0 = no limit), read by the API on each scrape.',
      registers: reg,
    }),
    inboundKinds: new client.Counter({
      name: `${p}inbound_kinds_total`,
      help: 'Reactions and poll votes contacts sent, by kind and outcome (recorded, duplicate, unknown_poll, undecryptable, invalid, error).',
      labelNames: ['kind', 'outcome'] as const,
      registers: reg,
    }),
    // --- broker relay (services/notifier/src/brokers/; docs/events.md "Brokers") ---------------
    brokerPublished: new client.Counter({
      name: `${p}broker_published_total`,
      help: 'Events a broker confirmed (RabbitMQ publisher confirm, JetStream PubAck, SQS SendMessageBatch success), by transport (rabbitmq, nats, sqs).',
      labelNames: ['transport'] as const,
      registers: reg,
    }),
    brokerConnected: new client.Gauge({
      name: `${p}broker_connected`,
      help: 'Whether this notifier is connected to the broker (1) or not (0; sqs: its last request did not reach the queue), by transport; only configured transports are present.',
      labelNames: ['transport'] as const,
      registers: reg,
    }),
    brokerBacklog: new client.Gauge({
      name: `${p}broker_backlog_events`,
      help: 'Events in the device logs this notifier serves that a broker has not confirmed yet, by transport (as last read).',
      labelNames: ['transport'] as const,
      registers: reg,
    }),
    brokerOldestPending: new client.Gauge({
      name: `${p}broker_oldest_pending_seconds`,
      help: 'Age of the oldest event waiting for a broker among the devices this notifier serves, by transport (0 when none waits).',
      labelNames: ['transport'] as const,
      registers: reg,
    }),
    brokerLost: new client.Counter({
      name: `${p}broker_lost_events_total`,
      help: 'Events the device logs dropped (retention window, count bound) before a broker confirmed them, or that could not be opened (sealed under a key no longer configured), by transport.',
      labelNames: ['transport'] as const,
      registers: reg,
    }),
    brokerPublishFailures: new client.Counter({
      name: `${p}broker_publish_failures_total`,
      help: 'Batches a broker refused or lost (published again after a pause), by transport.',
      labelNames: ['transport'] as const,
      registers: reg,
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
