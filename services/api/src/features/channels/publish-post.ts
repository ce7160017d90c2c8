import type { ChannelKey, ChannelPostBody } from '@mgw/contracts';
import { postToChannel, type ChannelPostDeps } from './post-to-channel.js';
import { isRefusal, type Refusal } from '../../enqueue/refusal.js';
import { askAndNote, type ChannelDeps, type HolderFailure } from './channel-ask.js';

/** How a post went. */
export type PublishOutcome =
  /** Queued like a send: sent once, or failed with a reason (`sendAt` when it waits for it). */
  | { ok: true; data: { messageId: string; batchId: string; sendAt?: string; channelId: string } }
  /** The account is neither the channel's owner nor one of its admins. */
  | { ok: false; reason: 'not_owner' }
  /** The queue refused the post (its attachment, the device's link or quota…). */
  | { ok: false; reason: 'refused'; refusal: Refusal }
  /** Asking WhatsApp whose channel it is failed. */
  | HolderFailure;

/**
 * POST /channels/:id/posts: a post to a channel the device may post to, queued like a send
 * (post-to-channel.ts).
 */
export async function publishPost(
  deps: ChannelDeps & ChannelPostDeps,
  deviceId: string,
  key: ChannelKey,
  body: ChannelPostBody,
): Promise<PublishOutcome> {
  const target = await postable(deps, deviceId, key);
  if (!target.ok) return target;
  const accepted = await postToChannel(deps, deviceId, target.channelId, body);
  if (isRefusal(accepted)) return { ok: false, reason: 'refused', refusal: accepted };
  const { kind: _kind, ...data } = accepted;
  return { ok: true, data: { ...data, channelId: target.channelId } };
}

/**
 * The JID of a channel the device may post to: one it created through the gateway is known as
 * its own; any other is asked of WhatsApp (an owner or admin may post, anyone else may not).
 */
async function postable(
  deps: ChannelDeps,
  deviceId: string,
  key: ChannelKey,
): Promise<{ ok: true; channelId: string } | Exclude<PublishOutcome, { ok: true }>> {
  const entry = key.kind === 'jid' ? await deps.known.get(deviceId, key.id) : undefined;
  if (entry?.role === 'owner') return { ok: true, channelId: entry.id };
  const asked = await askAndNote(deps, deviceId, { type: 'channel-get', key });
  if (!asked.ok) return asked;
  const { channel } = asked.data;
  if (channel.role !== 'owner' && channel.role !== 'admin') return { ok: false, reason: 'not_owner' };
  return { ok: true, channelId: channel.id };
}
