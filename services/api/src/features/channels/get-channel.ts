import type { Channel, ChannelKey } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askAndNote, type ChannelDeps } from './channel-ask.js';

/**
 * A channel as WhatsApp has it now (GET /channels/:id), by its id or its invite; what the
 * account is to it (owner, follower…) updates the device's list.
 */
export function getChannel(
  deps: ChannelDeps,
  deviceId: string,
  key: ChannelKey,
): Promise<HolderOutcome<{ channel: Channel }>> {
  return askAndNote(deps, deviceId, { type: 'channel-get', key });
}
