import { BROKER_TRANSPORTS, type BrokerTransportName } from '@mgw/contracts';
import {
  BrokerRelayState,
  WebhookReport,
  type BrokerReportView,
  type WebhookReportView,
  type WebhookView,
} from '@mgw/store';
import type { Uses } from '../../api-services.js';

/** One broker transport as the device's relay stands (what the notifier keeps in Redis). */
export interface BrokerOutlet extends BrokerReportView {
  /** When the transport first ran on this install; absent: it never did (not configured). */
  startedAt?: string;
  /** How far the relay published the device's log: the last event's cursor and its time. */
  cursor?: { id: string; at: string };
  /** Events of the log after the cursor (not published yet), and when the oldest was written. */
  waiting?: number;
  oldestWaitingAt?: string;
  /** Events the log dropped before the transport published them (retention, count bound). */
  lost?: number;
}

export interface DeviceOutlets {
  /** The endpoint (as GET /webhook answers it, never its secret; null: none) and its report. */
  webhook: { endpoint: WebhookView | null } & WebhookReportView;
  brokers: Record<BrokerTransportName, BrokerOutlet>;
}

/** Stream entry ids start with their time (ms). */
const entryIso = (id: string) => new Date(Number(id.slice(0, id.indexOf('-')))).toISOString();

/**
 * What the device's events did on their ways out: the webhook (its endpoint, last delivery, last
 * failure, retries waiting and the next due, events dropped after their last attempt — what the
 * notifier records, @mgw/store webhook-report.ts) and each broker transport (its relay's cursor,
 * the events waiting after it, the device's last publish error). Reads only. Built once per API.
 */
export function outletsReader(
  s: Uses<'redis' | 'encryption' | 'webhooks'>,
): (deviceId: string) => Promise<DeviceOutlets> {
  const report = new WebhookReport(s.redis);
  // Read only (cursor, log info): the lease's TTL is never used here.
  const relays = BROKER_TRANSPORTS.map((t) => new BrokerRelayState(s.redis, s.encryption, t, 30_000));
  const broker = async (deviceId: string, state: BrokerRelayState): Promise<BrokerOutlet> => {
    const [started, errors] = await Promise.all([
      report.brokerStartedAt(state.transport),
      report.brokerReport(deviceId, state.transport),
    ]);
    if (started === undefined) return errors;
    const cursor = await state.cursor(deviceId);
    const page = await state.read(deviceId, cursor, 1);
    const oldest = page.events[0];
    return {
      startedAt: new Date(started).toISOString(),
      ...(cursor ? { cursor: { id: cursor.id, at: entryIso(cursor.id) } } : {}),
      waiting: page.backlog + page.events.length,
      ...(oldest ? { oldestWaitingAt: entryIso(oldest.cursor.id) } : {}),
      ...(page.lost ? { lost: page.lost } : {}),
      ...errors,
    };
  };
  return async (deviceId) => {
    const [endpoint, webhook, ...brokers] = await Promise.all([
      s.webhooks.get(deviceId),
      report.read(deviceId),
      ...relays.map((r) => broker(deviceId, r)),
    ]);
    return {
      webhook: { endpoint: endpoint ?? null, ...webhook },
      brokers: Object.fromEntries(
        BROKER_TRANSPORTS.map((t, i) => [t, brokers[i]!]),
      ) as DeviceOutlets['brokers'],
    };
  };
}
