import type { Channel, ChannelKey, ChannelUpdateBody } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askAndNote, type ChannelDeps } from './channel-ask.js';

/**
 * Changes a channel's name, description or picture (PATCH /channels/:id): the fields given change;
 * `picture` is the new image's bytes, `null` to remove the picture, or absent to keep it. Only its
 * owner may: the holder's `not-owner` code otherwise.
 */
export function updateChannel(
  deps: ChannelDeps,
  deviceId: string,
  key: ChannelKey,
  changes: Omit<ChannelUpdateBody, 'picture'>,
  picture: Buffer | null | undefined,
): Promise<HolderOutcome<{ channel: Channel }>> {
  const chosen = picture
    ? { picture: 'set' as const }
    : picture === null
      ? { picture: 'remove' as const }
      : {};
  return askAndNote(
    deps,
    deviceId,
    { type: 'channel-update', key, changes, ...chosen },
    picture ?? undefined,
  );
}
