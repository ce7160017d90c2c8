import { keys } from '@mgw/contracts';
import type { GraphRefused, GraphUnreachable } from './check-number.js';
import { checkNumber } from './check-number.js';
import type { CloudDeps } from './configure-cloud.js';

/** The device holds no cloud configuration (it was forgotten meanwhile). */
export interface NotCloud {
  ok: false;
  reason: 'not_cloud';
}

export type ConnectOutcome = { ok: true } | NotCloud | GraphRefused | GraphUnreachable;

/**
 * /connect on a cloud device: checks its credentials with the Graph API again and keeps what the
 * number says of itself; then the device is `connected`, joins the roster the senders scan
 * (`keys.linkedDevices()`) and its id is announced (`keys.devicesChannel()`) so a sender claims it
 * at once. When Meta refuses, the device turns `disconnected` with the reason (its token expired,
 * its number blocked…); when Meta cannot be reached, nothing is known and nothing changes.
 */
export async function connectCloud(
  d: CloudDeps,
  deviceId: string,
  now = new Date(),
): Promise<ConnectOutcome> {
  const config = await d.cloudDevices.get(deviceId);
  if (!config) return { ok: false, reason: 'not_cloud' };
  const checked = await checkNumber(d.graph, config, now);
  if (!checked.ok) {
    if (checked.reason === 'graph_refused')
      await d.cloudDevices.setState(deviceId, {
        status: 'disconnected',
        reason: checked.deviceReason,
        at: now.toISOString(),
      });
    return checked;
  }
  await d.cloudDevices.keepProfile(deviceId, checked.profile);
  await d.cloudDevices.setState(deviceId, { status: 'connected', at: now.toISOString() });
  await d.redis.sadd(keys.linkedDevices(), deviceId);
  await d.redis.publish(keys.devicesChannel(), deviceId);
  return { ok: true };
}
