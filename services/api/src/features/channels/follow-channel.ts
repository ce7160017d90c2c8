import type { Channel, ChannelKey } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askAndNote, type ChannelDeps } from './channel-ask.js';

/**
 * Follows (`follow`) or unfollows a channel (POST /channels/:id/follow, /unfollow): a followed
 * channel joins the device's list, an unfollowed one leaves it.
 */
export function followChannel(
  deps: ChannelDeps,
  deviceId: string,
  key: ChannelKey,
  follow: boolean,
): Promise<HolderOutcome<{ channel: Channel }>> {
  return askAndNote(deps, deviceId, { type: 'channel-follow', key, follow });
}
