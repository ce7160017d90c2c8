import type { ChannelKey } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askChannel, type ChannelDeps } from './channel-ask.js';

/** Deletes a channel for everyone (DELETE /channels/:id); it leaves the device's list. Only its owner may. */
export async function deleteChannel(
  deps: ChannelDeps,
  deviceId: string,
  key: ChannelKey,
): Promise<HolderOutcome<{ id: string; deleted: true }>> {
  const outcome = await askChannel(deps, deviceId, { type: 'channel-delete', key });
  if (!outcome.ok) return outcome;
  const { id } = outcome.data.channel;
  await deps.known.forget(deviceId, id);
  return { ok: true, data: { id, deleted: true } };
}
