import { cloudView, type CloudDeviceView, type CloudNumberProfile } from '@mgw/contracts';
import type { CloudDeps } from './configure-cloud.js';

/** GET /cloud: the configuration without its secrets, what the number said of itself, its state. */
export interface CloudShown extends CloudDeviceView {
  /** What the Graph API said of the number when it was last checked (PUT /cloud, /connect). */
  profile?: CloudNumberProfile;
  /** `connected` after a /connect whose check passed; `disconnected` before, or with `reason` after a failure. */
  status: 'connected' | 'disconnected';
  reason?: string;
}

/** The device's cloud configuration as it is shown (never a secret); undefined when it is not cloud. */
export async function showCloud(
  d: Pick<CloudDeps, 'cloudDevices'>,
  deviceId: string,
): Promise<CloudShown | undefined> {
  const config = await d.cloudDevices.get(deviceId);
  if (!config) return undefined;
  const [profile, state] = await Promise.all([
    d.cloudDevices.profile(deviceId),
    d.cloudDevices.state(deviceId),
  ]);
  return {
    ...cloudView(config),
    ...(profile ? { profile } : {}),
    status: state?.status ?? 'disconnected',
    ...(state?.reason ? { reason: state.reason } : {}),
  };
}
