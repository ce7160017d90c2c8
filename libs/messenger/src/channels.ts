/**
 * Channels (WhatsApp newsletters) through the device's socket: Baileys' `w:mex` GraphQL queries
 * (lib/Socket/newsletter.js). A channel's metadata comes back as WhatsApp's GraphQL shape; this
 * turns it into the API's `Channel`. A refusal keeps WhatsApp's code (`whatsappErrorCode`):
 * 404 no such channel, 403 not its owner.
 */
import {
  CHANNEL_LINK_PREFIX,
  type Channel,
  type ChannelKey,
  type ChannelPostStats,
  type ChannelRole,
  type ChannelUpdateBody,
} from '@mgw/contracts';
import {
  generateProfilePicture,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import { PhotoRefusedError } from './account.js';
import type { WASocket } from './socket.js';

/** The channel's GraphQL metadata as WhatsApp answers it (the fields read). */
interface RawChannel {
  id?: string;
  thread_metadata?: {
    name?: { text?: string };
    description?: { text?: string };
    creation_time?: string;
    invite?: string;
    subscribers_count?: string;
    verification?: string;
  };
  viewer_metadata?: { role?: string } | null;
}

const ROLES: Record<string, ChannelRole> = { OWNER: 'owner', ADMIN: 'admin', SUBSCRIBER: 'follower' };

/** WhatsApp's metadata of a channel as the API shows it. */
export function channelOf(raw: RawChannel): Channel {
  const t = raw.thread_metadata ?? {};
  const created = Number(t.creation_time);
  return {
    id: String(raw.id),
    name: t.name?.text ?? '',
    description: t.description?.text ?? '',
    ...(t.invite ? { inviteLink: `${CHANNEL_LINK_PREFIX}${t.invite}` } : {}),
    followers: Number(t.subscribers_count) || 0,
    role: ROLES[raw.viewer_metadata?.role ?? ''] ?? 'guest',
    ...(created > 0 ? { createdAt: new Date(created * 1000).toISOString() } : {}),
    verified: t.verification === 'VERIFIED',
  };
}

/** The channel is someone else's and the change needs its owner (WhatsApp would answer 403). */
export class NotChannelOwnerError extends Error {
  override name = 'NotChannelOwnerError';
}

/** A channel named by id or invite, as the account sees it now. */
export async function channelMetadata(sock: WASocket, key: ChannelKey): Promise<Channel> {
  const raw = await sock.newsletterMetadata(
    key.kind === 'jid' ? 'jid' : 'invite',
    key.kind === 'jid' ? key.id : key.code,
  );
  // Baileys answers null for an answer it cannot read: for us, no such channel.
  if (!raw) throw Object.assign(new Error('channel not found'), { output: { statusCode: 404 } });
  return channelOf(raw as unknown as RawChannel);
}

/**
 * Creates a channel (and sets its picture when given); the channel as it is then. The picture is
 * read first: one that is no image is refused (PhotoRefusedError) before any channel is made.
 */
export async function createChannel(
  sock: WASocket,
  name: string,
  description: string | undefined,
  picture: Buffer | undefined,
): Promise<Channel> {
  if (picture)
    await generateProfilePicture(picture).catch(() => {
      throw new PhotoRefusedError('not an image');
    });
  const created = await sock.newsletterCreate(name, description ?? '');
  if (picture) await sock.newsletterUpdatePicture(created.id, picture);
  return channelMetadata(sock, { kind: 'jid', id: created.id });
}

/**
 * Changes the fields given of a channel the account owns, and its picture (`null`: removed); the
 * channel as it is then.
 */
export async function updateChannel(
  sock: WASocket,
  key: ChannelKey,
  changes: Omit<ChannelUpdateBody, 'picture'>,
  picture?: Buffer | null,
): Promise<Channel> {
  if (picture)
    await generateProfilePicture(picture).catch(() => {
      throw new PhotoRefusedError('not an image');
    });
  const current = await owned(sock, key);
  if (picture) await sock.newsletterUpdatePicture(current.id, picture);
  else if (picture === null) await sock.newsletterRemovePicture(current.id);
  if (changes.name !== undefined) await sock.newsletterUpdateName(current.id, changes.name);
  if (changes.description !== undefined)
    await sock.newsletterUpdateDescription(current.id, changes.description);
  return channelMetadata(sock, { kind: 'jid', id: current.id });
}

/** Deletes a channel the account owns (gone for every follower); the channel as it was. */
export async function deleteChannel(sock: WASocket, key: ChannelKey): Promise<Channel> {
  const current = await owned(sock, key);
  await sock.newsletterDelete(current.id);
  return current;
}

/** Follows or unfollows a channel; the channel as it is then (its role says which). */
export async function followChannel(sock: WASocket, key: ChannelKey, follow: boolean): Promise<Channel> {
  const current = await channelMetadata(sock, key);
  if (follow) await sock.newsletterFollow(current.id);
  else await sock.newsletterUnfollow(current.id);
  return channelMetadata(sock, { kind: 'jid', id: current.id });
}

/**
 * The latest posts of a channel the account owns, with the views and reactions WhatsApp counted:
 * the `newsletter` IQ `<message_updates count>`, answered with
 * `<message_updates><messages><message server_id id t><views_count count/><reactions><reaction
 * code count/>…` (the shape whatsmeow reads too). Newest first.
 */
export async function channelPosts(
  sock: WASocket,
  key: ChannelKey,
  count: number,
): Promise<{ channel: Channel; posts: ChannelPostStats[] }> {
  const channel = await owned(sock, key);
  // Baileys types `since` and `after` as required; unset, it sends neither (the latest posts).
  const fetchLatest = sock.newsletterFetchMessages as (jid: string, count: number) => Promise<BinaryNode>;
  const answer = await fetchLatest(channel.id, count);
  return { channel, posts: postStatsOf(answer) };
}

/** The posts of a `message_updates` answer (see channelPosts), newest first. */
export function postStatsOf(answer: BinaryNode): ChannelPostStats[] {
  const updates = getBinaryNodeChild(answer, 'message_updates');
  const messages = getBinaryNodeChild(updates, 'messages');
  const posts = getBinaryNodeChildren(messages, 'message').map((m): ChannelPostStats => {
    const reactions: Record<string, number> = {};
    for (const r of getBinaryNodeChildren(getBinaryNodeChild(m, 'reactions'), 'reaction')) {
      const n = Number(r.attrs.count);
      if (r.attrs.code && n > 0) reactions[r.attrs.code] = n;
    }
    const t = Number(m.attrs.t);
    return {
      ...(m.attrs.id ? { platformMessageId: m.attrs.id } : {}),
      serverId: String(m.attrs.server_id ?? ''),
      views: Number(getBinaryNodeChild(m, 'views_count')?.attrs.count) || 0,
      reactions,
      ...(t > 0 ? { postedAt: new Date(t * 1000).toISOString() } : {}),
    };
  });
  return posts.filter((p) => p.serverId !== '').sort((a, b) => Number(b.serverId) - Number(a.serverId));
}

/** The channel, when the account owns it; a channel of someone else throws NotChannelOwnerError. */
async function owned(sock: WASocket, key: ChannelKey): Promise<Channel> {
  const current = await channelMetadata(sock, key);
  if (current.role !== 'owner') throw new NotChannelOwnerError('not the owner of the channel');
  return current;
}
