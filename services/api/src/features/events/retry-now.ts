import { WebhookReport, type RetryNowResult } from '@mgw/store';
import type { Uses } from '../../api-services.js';

/**
 * "Retry now": every event of the device waiting for a webhook retry becomes due now, in its
 * order (@mgw/store WebhookReport.retryNow); the notifier serving the device is told and delivers
 * them as usual, one at a time, each with its own `webhook-id` (no copy is made: at least once,
 * as ever). `no_webhook` without an endpoint. Logged (device and counts) as the operator's act.
 */
export function retryNower(s: Uses<'redis' | 'logger'>): (deviceId: string) => Promise<RetryNowResult> {
  const report = new WebhookReport(s.redis);
  return async (deviceId) => {
    const r = await report.retryNow(deviceId);
    if (r.kind === 'done')
      s.logger.info('webhook retries made due by the operator', {
        deviceId,
        waiting: r.waiting,
        madeDue: r.madeDue,
      });
    return r;
  };
}
