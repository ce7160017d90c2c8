import { CHANNEL_POSTS_READ, type ChannelKey, type ChannelPostStats } from '@mgw/contracts';
import type { ApiServices } from '../../api-services.js';
import type { HolderOutcome } from '../holder/index.js';
import { askChannel, type ChannelDeps } from './channel-ask.js';

/**
 * The latest posts of a channel with their views and reactions, as WhatsApp counts them (GET
 * /channels/:id/posts): the gateway's id beside WhatsApp's, for the posts sent through it.
 */
export async function readPosts(
  deps: ChannelDeps & Pick<ApiServices, 'messages'>,
  deviceId: string,
  key: ChannelKey,
): Promise<HolderOutcome<{ channelId: string; posts: ChannelPostStats[] }>> {
  const outcome = await askChannel(deps, deviceId, { type: 'channel-posts', key, count: CHANNEL_POSTS_READ });
  if (!outcome.ok) return outcome;
  const result = outcome.data;
  const ids = await Promise.all(
    (result.posts ?? []).map((p) =>
      p.platformMessageId ? deps.messages.findByPlatformId(deviceId, p.platformMessageId) : undefined,
    ),
  );
  const posts = (result.posts ?? []).map((p, i) => ({ ...(ids[i] ? { messageId: ids[i] } : {}), ...p }));
  return { ok: true, data: { channelId: result.channel.id, posts } };
}
