import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import {
  CHANNEL_ERRORS,
  CHANNEL_POSTS_READ,
  channelCreateBodySchema,
  channelKeySchema,
  channelPostBodySchema,
  channelPostEditSchema,
  channelUpdateBodySchema,
  keys,
  photoTypeOf,
  MESSAGE_ID_PATTERN,
  type Channel,
  type ChannelCommand,
  type ChannelCommandResult,
  type ChannelKey,
  type ChannelPostBody,
} from '@mgw/contracts';
import { ChannelList, DeviceCommandClient, storageContext } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { postToChannel } from '../accept/post-to-channel.js';
import { isRefusal } from '../accept/refusal.js';
import { reviseMessage } from '../accept/revise-message.js';
import { askHolder, type Unaddressed } from '../features/holder/ask-holder.js';
import { refusalError } from '../http/refusal-error.js';
import { ApiError } from '../http/api-error.js';
import { authOf } from '../http/auth.js';
import { NO_DEVICE, answer, invalidAt, type HolderErrors } from '../http/holder-errors.js';
import { idempotentChange, noQuery } from '../http/route-helpers.js';
import { parse } from '../http/validation.js';
import { respond } from '../http/respond.js';

/** A channel picture waits this long for the holder to take it (a little over HOLDER_WAIT_SECONDS). */
const PICTURE_HANDOFF_SECONDS = 60;

/** How a channel ask fails in HTTP (it waits the default: two or three WhatsApp queries). */
const CHANNEL_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: CHANNEL_ERRORS.timeout },
  not_connected: NO_DEVICE,
  failed: { status: 502, error: CHANNEL_ERRORS.failed },
  codes: {
    'not-found': { status: 404, error: CHANNEL_ERRORS.notFound },
    'bad-picture': invalidAt('picture', CHANNEL_ERRORS.badPicture),
    'not-owner': { status: 403, error: CHANNEL_ERRORS.notOwner },
  },
};

const idParams = Joi.object({ id: channelKeySchema });
const postParams = Joi.object({
  id: channelKeySchema,
  messageId: Joi.string()
    .pattern(MESSAGE_ID_PATTERN)
    .required()
    .messages({ 'string.pattern.base': '"messageId" must be a post id (the messageId its POST answered)' }),
});

type Ask = Unaddressed<ChannelCommand>;

/**
 * The channel routes (docs/broadcasts.md, "Channels"): create, read, update, delete, follow and
 * unfollow through the device's socket (a device command to its holder, like the group routes),
 * and the list of the channels the device created or followed through them (`ChannelList`: WhatsApp
 * has no query for it).
 */
export function channelRoutes(s: ApiServices) {
  const holder = { commands: new DeviceCommandClient(s.redis, s.bullRedis), sessions: s.sessions };
  const known = new ChannelList(s.redis);

  async function ask(deviceId: string, command: Ask, picture?: Buffer): Promise<Channel> {
    return (await askFor(deviceId, command, picture)).channel;
  }

  async function askFor(deviceId: string, command: Ask, picture?: Buffer): Promise<ChannelCommandResult> {
    const requestId = randomUUID();
    // The picture goes by reference (sealed, short-lived), not in the command every sender hears.
    const key = keys.profilePhoto(deviceId, requestId);
    const handoff = picture && {
      put: () =>
        s.redis.set(
          key,
          s.encryption.seal(picture, storageContext(key, 'photo')),
          'EX',
          PICTURE_HANDOFF_SECONDS,
        ),
      remove: () => s.redis.del(key).catch(() => undefined),
    };
    const outcome = await askHolder<ChannelCommandResult>(holder, deviceId, command, { requestId, handoff });
    // Gone for everyone (deleted by its owner): not listed any more.
    const gone = !outcome.ok && outcome.reason === 'failed' && outcome.code === 'not-found';
    if (gone && 'key' in command && command.key.kind === 'jid') await known.forget(deviceId, command.key.id);
    return answer(outcome, CHANNEL_HOLDER_ERRORS);
  }

  /** Keeps the device's list in step with what WhatsApp said of one of its channels. */
  async function note(deviceId: string, channel: Channel): Promise<void> {
    if (channel.role === 'owner' || channel.role === 'admin' || channel.role === 'follower')
      await known.remember(deviceId, {
        id: channel.id,
        name: channel.name,
        role: channel.role === 'follower' ? 'follower' : 'owner',
      });
    else await known.forget(deviceId, channel.id);
  }

  const channelKey = (req: Request): ChannelKey =>
    parse(idParams, { id: req.params.id }).id as unknown as ChannelKey;
  /** A change goes through the Idempotency-Key handling: a retried create makes one channel. */
  const change = idempotentChange(s.idempotency);

  const list: RequestHandler = async (req, res) => {
    noQuery(req);
    const channels = await known.list(authOf(res).deviceId);
    res.status(200).json({ success: true, data: { channels } });
  };
  const get: RequestHandler = async (req, res) => {
    noQuery(req);
    const key = channelKey(req);
    const { deviceId } = authOf(res);
    const channel = await ask(deviceId, { type: 'channel-get', key });
    await note(deviceId, channel);
    res.status(200).json({ success: true, data: { channel } });
  };
  const create: RequestHandler = async (req, res) => {
    noQuery(req);
    const { picture, ...body } = parse(channelCreateBodySchema, req.body ?? {});
    const bytes = picture === undefined ? undefined : Buffer.from(picture, 'base64');
    if (bytes && !photoTypeOf(bytes))
      throw ApiError.invalid([{ path: ['picture'], message: CHANNEL_ERRORS.badPicture }]);
    const { deviceId } = authOf(res);
    await change(req, res, async () => {
      const channel = await ask(deviceId, { type: 'channel-create', ...body, picture: !!bytes }, bytes);
      await note(deviceId, channel);
      return { channel };
    });
  };
  const update: RequestHandler = async (req, res) => {
    noQuery(req);
    const key = channelKey(req);
    const { picture, ...changes } = parse(channelUpdateBodySchema, req.body ?? {});
    const bytes = typeof picture === 'string' ? Buffer.from(picture, 'base64') : undefined;
    if (bytes && !photoTypeOf(bytes))
      throw ApiError.invalid([{ path: ['picture'], message: CHANNEL_ERRORS.badPicture }]);
    const { deviceId } = authOf(res);
    await change(req, res, async () => {
      const chosen = bytes
        ? { picture: 'set' as const }
        : picture === null
          ? { picture: 'remove' as const }
          : {};
      const channel = await ask(deviceId, { type: 'channel-update', key, changes, ...chosen }, bytes);
      await note(deviceId, channel);
      return { channel };
    });
  };
  const remove: RequestHandler = async (req, res) => {
    noQuery(req);
    const key = channelKey(req);
    const { deviceId } = authOf(res);
    await change(req, res, async () => {
      const channel = await ask(deviceId, { type: 'channel-delete', key });
      await known.forget(deviceId, channel.id);
      return { id: channel.id, deleted: true };
    });
  };
  const follow =
    (following: boolean): RequestHandler =>
    async (req, res) => {
      noQuery(req);
      const key = channelKey(req);
      const { deviceId } = authOf(res);
      await change(req, res, async () => {
        const channel = await ask(deviceId, { type: 'channel-follow', key, follow: following });
        await note(deviceId, channel);
        return { channel };
      });
    };

  /**
   * The JID of a channel the device may post to: one it created through the gateway is known as
   * its own; any other is asked of WhatsApp (an owner or admin may post; 403 for anyone else).
   */
  async function postable(deviceId: string, key: ChannelKey): Promise<string> {
    const entry = key.kind === 'jid' ? await known.get(deviceId, key.id) : undefined;
    if (entry?.role === 'owner') return entry.id;
    const channel = await ask(deviceId, { type: 'channel-get', key });
    await note(deviceId, channel);
    if (channel.role !== 'owner' && channel.role !== 'admin')
      throw new ApiError(403, CHANNEL_ERRORS.notOwner);
    return channel.id;
  }

  /** A post sent through this device to this channel: its record (404 for anything else). */
  async function postOf(req: Request, deviceId: string) {
    const { id, messageId } = parse(postParams, { id: req.params.id, messageId: req.params.messageId });
    const key = id as unknown as ChannelKey;
    // A post is named under its channel's id: an invite would need WhatsApp to say whose it is,
    // and a scheduled post must be deletable while the device is offline.
    if (key.kind !== 'jid')
      throw ApiError.invalid([
        { path: ['id'], message: '"id" must be the channel\'s id (<digits>@newsletter) for a post' },
      ]);
    const record = await s.messages.get(deviceId, messageId);
    if (!record || record.direction === 'inbound' || record.to !== key.id)
      throw new ApiError(404, CHANNEL_ERRORS.postNotFound);
    return record;
  }

  /** POST /channels/:id/posts: queued like a send (202), sent once or failed with a reason. */
  const post: RequestHandler = async (req, res) => {
    noQuery(req);
    const key = channelKey(req);
    const body = parse(channelPostBodySchema, req.body ?? {}) as ChannelPostBody;
    const { deviceId, tokenHash } = authOf(res);
    const outcome = await s.idempotency.run(req, tokenHash, async () => {
      const channelId = await postable(deviceId, key);
      const accepted = await postToChannel(s, deviceId, channelId, body);
      if (isRefusal(accepted)) throw refusalError(accepted);
      const { kind: _kind, ...data } = accepted;
      return { status: 202, body: { success: true, data: { ...data, channelId } } };
    });
    respond(res, outcome);
  };
  /** GET /channels/:id/posts: the latest posts' views and reactions, as WhatsApp counts them. */
  const posts: RequestHandler = async (req, res) => {
    noQuery(req);
    const key = channelKey(req);
    const { deviceId } = authOf(res);
    const result = await askFor(deviceId, { type: 'channel-posts', key, count: CHANNEL_POSTS_READ });
    // The gateway's id beside WhatsApp's, for the posts sent through it.
    const ids = await Promise.all(
      (result.posts ?? []).map((p) =>
        p.platformMessageId ? s.messages.findByPlatformId(deviceId, p.platformMessageId) : undefined,
      ),
    );
    const list = (result.posts ?? []).map((p, i) => ({ ...(ids[i] ? { messageId: ids[i] } : {}), ...p }));
    res.status(200).json({ success: true, data: { channelId: result.channel.id, posts: list } });
  };
  /** PATCH /channels/:id/posts/:messageId: the post's text edited (a revision through the queue). */
  const editPost: RequestHandler = async (req, res) => {
    noQuery(req);
    const { deviceId, tokenHash } = authOf(res);
    const record = await postOf(req, deviceId);
    const { text } = parse(channelPostEditSchema, req.body ?? {});
    const outcome = await s.idempotency.run(req, tokenHash, async () => {
      const revised = await reviseMessage(s, deviceId, {
        to: record.to,
        edit: { messageId: record.messageId, text },
      });
      if (isRefusal(revised)) throw refusalError(revised);
      return {
        status: 202,
        body: {
          success: true,
          data: { messageId: record.messageId, editMessageId: revised.messageId, status: 'editing' },
        },
      };
    });
    respond(res, outcome);
  };
  /**
   * DELETE /channels/:id/posts/:messageId: a post still queued or scheduled leaves the queue (200,
   * never sent); a sent one is deleted for the channel's readers by a revision of its own (202).
   */
  const deletePost: RequestHandler = async (req, res) => {
    noQuery(req);
    const { deviceId } = authOf(res);
    const record = await postOf(req, deviceId);
    const revised = await reviseMessage(s, deviceId, {
      to: record.to,
      delete: { messageId: record.messageId },
    });
    if (isRefusal(revised)) throw refusalError(revised);
    if (revised.kind === 'deleted')
      return void res
        .status(200)
        .json({ success: true, data: { messageId: record.messageId, status: 'deleted' } });
    res.status(202).json({
      success: true,
      data: { messageId: record.messageId, deleteMessageId: revised.messageId, status: 'deleting' },
    });
  };

  return {
    list,
    get,
    create,
    update,
    remove,
    follow: follow(true),
    unfollow: follow(false),
    post,
    posts,
    editPost,
    deletePost,
  };
}
