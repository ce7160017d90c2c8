import { cloudPhoneOf } from '@mgw/contracts';
import type { CloudDeps } from './configure-cloud.js';

/**
 * GET /status of a cloud device, in the contract's shape: `connected` or `disconnected` as its
 * state says; while connected, the number (the digits of its display number) and its verified name
 * as `phone` and `name`. Beyond the spec: `engine: 'cloud'`, the number's `qualityRating` and
 * `messagingTier` as Meta last said them, and `reason` when a failure turned it disconnected.
 */
export async function cloudStatus(
  d: Pick<CloudDeps, 'cloudDevices'>,
  deviceId: string,
): Promise<Record<string, unknown>> {
  const [state, profile] = await Promise.all([
    d.cloudDevices.state(deviceId),
    d.cloudDevices.profile(deviceId),
  ]);
  const status = state?.status ?? 'disconnected';
  const body: Record<string, unknown> = { success: true, status, engine: 'cloud' };
  if (status === 'connected' && profile) {
    const phone = cloudPhoneOf(profile);
    if (phone) body.phone = phone;
    if (profile.verifiedName) body.name = profile.verifiedName;
  }
  if (profile) {
    body.qualityRating = profile.qualityRating;
    if (profile.messagingLimitTier) body.messagingTier = profile.messagingLimitTier;
  }
  if (status === 'disconnected' && state?.reason) body.reason = state.reason;
  return body;
}
