/**
 * Channels (WhatsApp newsletters): the account creates, reads, updates, deletes, follows and
 * unfollows them through its device's socket (a device command to the sender holding it, like the
 * group routes). WhatsApp has no query for the channels an account follows (Baileys rc14 has
 * none), so the gateway keeps the ones created or followed through it: `keys.deviceChannels`.
 */
import { Joi } from './text.js';
import { isStatusJid } from './broadcasts.js';
import { isGroupJid } from './groups.js';
import { STRING_LIMITS } from './limits.js';
import { linkPreviewSchema } from './revisions.js';
import { attachmentSchema, BASE64_RULE, isBase64, type SendAttachmentInput } from './attachment.js';
import { sendAtSchema } from './send-body.js';

/** What the account is to a channel. */
export type ChannelRole = 'owner' | 'admin' | 'follower' | 'guest';

/** A channel as GET /channels/:id answers it. */
export interface Channel {
  /** `<digits>@newsletter`. */
  id: string;
  name: string;
  description: string;
  /** `https://whatsapp.com/channel/<code>`, when WhatsApp gave one. */
  inviteLink?: string;
  followers: number;
  role: ChannelRole;
  /** When it was created (ISO). */
  createdAt?: string;
  verified: boolean;
}

/** One row of GET /channels: a channel this device created or followed through the gateway. */
export interface ChannelListEntry {
  id: string;
  /** Its name when the gateway last saw it (created, followed, read or renamed through it). */
  name: string;
  role: 'owner' | 'follower';
  /** When the gateway learnt it (ISO). */
  since: string;
}

export const CHANNEL_LIMITS = {
  name: 100,
  description: 2048,
  /** A channel picture (JPEG), decoded. */
  pictureBytes: 512 * 1024,
  /** Channels remembered per device (the oldest learnt leaves first). */
  listed: 500,
} as const;

/** `https://whatsapp.com/channel/<code>` (the link WhatsApp shares). */
export const CHANNEL_LINK_PREFIX = 'https://whatsapp.com/channel/';
const INVITE_CODE = /^[A-Za-z0-9_-]{8,64}$/;
const CHANNEL_JID = /^(\d{5,30})(@newsletter)?$/;

/** A channel's JID: a post is a message to it. */
export const isChannelJid = (to: string): boolean => /^\d{5,30}@newsletter$/.test(to);

/**
 * A message to many at once — a group, a status, a channel post: no person's opt-out, block or
 * number lookup applies to it as a whole, and it counts once against the device's caps.
 */
export const isAudienceJid = (to: string): boolean => isGroupJid(to) || isStatusJid(to) || isChannelJid(to);

/** A channel named in a path: its id (`<digits>@newsletter`, or the digits) or its invite (code or link). */
export type ChannelKey = { kind: 'jid'; id: string } | { kind: 'invite'; code: string };

export function channelKeyOf(raw: string): ChannelKey | undefined {
  const jid = CHANNEL_JID.exec(raw);
  if (jid) return { kind: 'jid', id: `${jid[1]}@newsletter` };
  // A shared link may carry a query (`?mode=…`): dropped, as whatsmeow does since 7c107215.
  const link = /^https?:\/\/(www\.)?whatsapp\.com\/channel\/([^/?#]+)\/?(?:[?#]\S*)?$/.exec(raw);
  const code = link ? link[2]! : raw;
  return INVITE_CODE.test(code) ? { kind: 'invite', code } : undefined;
}

export const channelKeySchema = Joi.string()
  .max(200)
  .required()
  .custom((value: string, helpers) => channelKeyOf(value) ?? helpers.error('any.invalid'))
  .messages({
    'any.invalid':
      '"id" must be a channel id (<digits>@newsletter) or its invite link (https://whatsapp.com/channel/<code>) or code',
  });

const blankMessage = (field: string) => ({ 'string.pattern.base': `"${field}" must not be blank` });
const pictureSchema = Joi.string()
  .custom((value: string, helpers) => (isBase64(value) ? value : helpers.error('string.base64')), BASE64_RULE)
  .max(Math.ceil(CHANNEL_LIMITS.pictureBytes / 3) * 4)
  .messages({ 'string.base64': '"picture" must be an image (JPEG, PNG or WebP) as base64' });

/** POST /channels. */
export interface ChannelCreateBody {
  name: string;
  description?: string;
  /** An image (JPEG, PNG or WebP) as base64; WhatsApp gets it as a 640x640 JPEG. */
  picture?: string;
}

export const channelCreateBodySchema = Joi.object<ChannelCreateBody>({
  name: Joi.string()
    .max(CHANNEL_LIMITS.name)
    .pattern(/\S/)
    .displayName()
    .required()
    .messages(blankMessage('name')),
  description: Joi.string().allow('').max(CHANNEL_LIMITS.description),
  picture: pictureSchema,
});

/** PATCH /channels/:id: the fields given change (`picture: null` removes the picture). */
export interface ChannelUpdateBody {
  name?: string;
  description?: string;
  picture?: string | null;
}

export const channelUpdateBodySchema = Joi.object<ChannelUpdateBody>({
  name: Joi.string().max(CHANNEL_LIMITS.name).pattern(/\S/).displayName().messages(blankMessage('name')),
  description: Joi.string().allow('').max(CHANNEL_LIMITS.description),
  picture: pictureSchema.allow(null),
})
  .or('name', 'description', 'picture')
  .messages({
    'object.missing': 'the body must change at least one of "name", "description", "picture"',
  });

/** POST /channels/:id/posts: a text, or an attachment with its caption, now or at `sendAt`. */
export interface ChannelPostBody {
  text?: string;
  attachment?: SendAttachmentInput;
  sendAt?: string;
  linkPreview?: boolean;
}

export const channelPostBodySchema = Joi.object<ChannelPostBody>({
  text: Joi.string().min(1).max(STRING_LIMITS.text),
  attachment: attachmentSchema,
  sendAt: sendAtSchema,
  linkPreview: linkPreviewSchema,
})
  .or('text', 'attachment')
  .messages({ 'object.missing': 'a post must have "text" or an "attachment"' });

/** PATCH /channels/:id/posts/:messageId: the post's new text. */
export const channelPostEditSchema = Joi.object<{ text: string }>({
  text: Joi.string().min(1).max(STRING_LIMITS.text).required(),
});

/** How many a channel post's readers viewed and reacted to it, as WhatsApp counts them. */
export interface ChannelPostStats {
  /** The gateway's id of the post, when it was posted through the gateway. */
  messageId?: string;
  /** WhatsApp's id of the post. */
  platformMessageId?: string;
  /** The post's number in its channel (WhatsApp's `server_id`). */
  serverId: string;
  views: number;
  /** Reactions by emoji: how many readers chose each. */
  reactions: Record<string, number>;
  /** When it was posted (ISO), when WhatsApp said. */
  postedAt?: string;
}

/** GET /channels/:id/posts: the latest posts WhatsApp reports (at most this many). */
export const CHANNEL_POSTS_READ = 50;

type Addressed = { deviceId: string; requestId: string };
export type ChannelCommand =
  /** `picture`: the image waits, sealed, at `keys.profilePhoto(deviceId, requestId)` (not in the command every sender hears). */
  | ({ type: 'channel-create'; name: string; description?: string; picture: boolean } & Addressed)
  | ({ type: 'channel-get'; key: ChannelKey } & Addressed)
  /** `picture`: `set` (the image waits as for a create), `remove`, or absent (unchanged). */
  | ({
      type: 'channel-update';
      key: ChannelKey;
      changes: Omit<ChannelUpdateBody, 'picture'>;
      picture?: 'set' | 'remove';
    } & Addressed)
  | ({ type: 'channel-delete'; key: ChannelKey } & Addressed)
  | ({ type: 'channel-follow'; key: ChannelKey; follow: boolean } & Addressed)
  | ({ type: 'channel-posts'; key: ChannelKey; count: number } & Addressed);

/** What the sender answers a channel command with (in DeviceCommandReply.data). */
export interface ChannelCommandResult {
  channel: Channel;
  /** `channel-posts`: the latest posts' counts, newest first (without the gateway's ids). */
  posts?: ChannelPostStats[];
}

/** The channel routes' errors (besides the common ones). */
export const CHANNEL_ERRORS = {
  /** 404: no channel has this id or invite (never had, or it was deleted). */
  notFound: 'Channel not found',
  /** 403: only the channel's owner may change, delete or post to it. */
  notOwner: 'Only the owner of the channel may do this',
  /** 400 (in `details`, path `picture`): the picture is no image WhatsApp's resizing can read. */
  badPicture: '"picture" must be an image (JPEG, PNG or WebP)',
  /** 502 */
  failed: 'The channel request to WhatsApp failed; try again shortly',
  /** 504 */
  timeout: 'The channel request to WhatsApp did not finish in time; try again shortly',
  /** 404: no post of this channel sent through this device has that id. */
  postNotFound: 'Post not found',
  /** 413 on POST /channels and PATCH /channels/:id (and a post's edit). */
  bodyTooLarge: 'Request body too large: channel requests are limited to 800 KB',
} as const;

/** `data` of a `channel.message` event: a post of a channel the account follows. */
export interface ChannelMessageEventData {
  deviceId: string;
  /** `<digits>@newsletter`. */
  channelId: string;
  /** WhatsApp's id of the post. */
  platformMessageId: string;
  /** The post's number in its channel (WhatsApp's `server_id`), when given. */
  serverId?: string;
  /** Its text (or a media post's caption). */
  text?: string;
  /** What it carries besides text: `image`, `video`, `audio`, `document`, `sticker`, … (absent for text). */
  kind?: string;
  /** When the owner posted it (ISO). */
  postedAt: string;
}
