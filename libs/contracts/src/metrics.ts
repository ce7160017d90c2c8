import client from 'prom-client';

/**
 * The product's metrics, defined once for every service (a service uses the ones it needs): the
 * dashboards and alert rules rely on these names and labels.
 * Conventions: one prefix, base units, `_total` only on counters, and no phone number, JID,
 * token or message id as a label (device ids are bounded and allowed).
 */
export const METRIC_PREFIX = 'mgw_';

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export function createMetrics() {
  const registry = new client.Registry();
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
      registers: reg,
    }),
    messages: new client.Counter({
      name: `${p}messages_total`,
      help: 'Messages reaching a status (sent, delivered, read, failed).',
      labelNames: ['status'] as const,
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
    leasesHeld: new client.Gauge({
      name: `${p}leases_held`,
      help: 'Device leases held by this sender process.',
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
    redisUp: new client.Gauge({
      name: `${p}redis_up`,
      help: '1 when this process reached Redis and Redis accepted a write on its last check, else 0.',
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
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
