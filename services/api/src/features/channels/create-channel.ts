import type { Channel, ChannelCreateBody } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askAndNote, type ChannelDeps } from './channel-ask.js';

/**
 * Creates a channel (POST /channels) with its name, description and picture (an image's bytes,
 * handed to the holder by reference); the device's list has it as its own from then on.
 */
export function createChannel(
  deps: ChannelDeps,
  deviceId: string,
  body: Omit<ChannelCreateBody, 'picture'>,
  picture?: Buffer,
): Promise<HolderOutcome<{ channel: Channel }>> {
  return askAndNote(deps, deviceId, { type: 'channel-create', ...body, picture: !!picture }, picture);
}
