import type { Request, RequestHandler, Response } from 'express';
import {
  CHANNEL_ERRORS,
  Joi,
  MESSAGE_ID_PATTERN,
  channelCreateBodySchema,
  channelKeySchema,
  channelPostBodySchema,
  channelPostEditSchema,
  channelUpdateBodySchema,
  photoTypeOf,
  type ChannelKey,
  type ChannelPostBody,
} from '@mgw/contracts';
import { ChannelList } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import type { Refusal } from '../../enqueue/refusal.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { NO_DEVICE, answer, invalidAt, type HolderErrors } from '../../http/holder-errors.js';
import { refusalError } from '../../http/refusal-error.js';
import { respond } from '../../http/respond.js';
import { deviceIdOf, idempotencyScope, noQuery } from '../../http/route-helpers.js';
import { feature } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import type { HolderOutcome } from '../holder/index.js';
import { channelAdminHandlers, channelAdminRoutes, type ChannelAdminName } from './admin.js';
import { createChannel } from './create-channel.js';
import { deleteChannel } from './delete-channel.js';
import { deletePost } from './delete-post.js';
import { editPost } from './edit-post.js';
import { findPost } from './find-post.js';
import { followChannel } from './follow-channel.js';
import { getChannel } from './get-channel.js';
import { channelOperations, channelSchemas } from './openapi.js';
import { publishPost, type PublishOutcome } from './publish-post.js';
import { readPosts } from './read-posts.js';
import { updateChannel } from './update-channel.js';
import { channelBody, postBody } from './bodies.js';

/** The public routes' handlers (their OpenAPI operations are keyed by these names). */
export type ChannelName =
  | 'list'
  | 'create'
  | 'get'
  | 'update'
  | 'remove'
  | 'follow'
  | 'unfollow'
  | 'post'
  | 'posts'
  | 'editPost'
  | 'deletePost';

/**
 * Channels (newsletters, docs/broadcasts.md): the account's own and the ones it follows. The
 * dashboard has the same routes for any device, named by the path (admin.ts).
 */
export const channels = feature<ChannelName, ChannelAdminName>({
  name: 'channels',
  routes: [
    { method: 'get', path: '/channels', limit: 'broadcasts', handler: 'list' },
    { method: 'post', path: '/channels', limit: 'broadcasts', body: channelBody, handler: 'create' },
    { method: 'get', path: '/channels/:id', limit: 'broadcasts', handler: 'get' },
    { method: 'patch', path: '/channels/:id', limit: 'broadcasts', body: channelBody, handler: 'update' },
    { method: 'delete', path: '/channels/:id', limit: 'broadcasts', body: 'none', handler: 'remove' },
    { method: 'post', path: '/channels/:id/follow', limit: 'broadcasts', body: 'none', handler: 'follow' },
    {
      method: 'post',
      path: '/channels/:id/unfollow',
      limit: 'broadcasts',
      body: 'none',
      handler: 'unfollow',
    },
    { method: 'post', path: '/channels/:id/posts', limit: 'broadcasts', body: postBody, handler: 'post' },
    { method: 'get', path: '/channels/:id/posts', limit: 'broadcasts', handler: 'posts' },
    {
      method: 'patch',
      path: '/channels/:id/posts/:messageId',
      limit: 'broadcasts',
      body: channelBody,
      handler: 'editPost',
    },
    {
      method: 'delete',
      path: '/channels/:id/posts/:messageId',
      limit: 'broadcasts',
      body: 'none',
      handler: 'deletePost',
    },
    ...channelAdminRoutes,
  ],
  handlers: (s) => ({ ...channelHandlers(s), ...channelAdminHandlers(channelHandlers(s, deviceIdOf)) }),
  operations: channelOperations,
  schemas: channelSchemas,
});

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

const channelKeyOf = (req: Request): ChannelKey =>
  parse(idParams, { id: req.params.id }).id as unknown as ChannelKey;

/** A post's path: its channel (by id: see find-post.ts) and its messageId. */
function postParamsOf(req: Request): { channelId: string; messageId: string } {
  const { id, messageId } = parse(postParams, { id: req.params.id, messageId: req.params.messageId });
  const key = id as unknown as ChannelKey;
  if (key.kind !== 'jid')
    throw ApiError.invalid([
      { path: ['id'], message: '"id" must be the channel\'s id (<digits>@newsletter) for a post' },
    ]);
  return { channelId: key.id, messageId };
}

/** A picture's bytes (a 400 naming it when they are no image), `null` to remove it, or none given. */
function pictureOf(picture: string | null | undefined): Buffer | null | undefined {
  if (typeof picture !== 'string') return picture;
  const bytes = Buffer.from(picture, 'base64');
  if (!photoTypeOf(bytes))
    throw ApiError.invalid([{ path: ['picture'], message: CHANNEL_ERRORS.badPicture }]);
  return bytes;
}

/** The holder's answer, or the contract's error for how the ask failed. */
const answered = <T>(outcome: HolderOutcome<T>): T => answer(outcome, CHANNEL_HOLDER_ERRORS);
const ok = (res: Response, data: unknown) => res.status(200).json({ success: true, data });

/** Why a post could not be queued, found or taken back, in HTTP. */
function postError(
  outcome:
    | Exclude<PublishOutcome, { ok: true }>
    | { reason: 'post_not_found' }
    | { reason: 'refused'; refusal: Refusal },
): ApiError {
  switch (outcome.reason) {
    case 'not_owner':
      return new ApiError(403, CHANNEL_ERRORS.notOwner);
    case 'post_not_found':
      return new ApiError(404, CHANNEL_ERRORS.postNotFound);
    case 'refused':
      return refusalError(outcome.refusal);
    default:
      return answer<never>(outcome, CHANNEL_HOLDER_ERRORS);
  }
}

/**
 * The channel handlers (docs/broadcasts.md, "Channels"): each reads its request and has one use
 * case do it: create, read, update, delete, follow and unfollow through the device's socket (a
 * device command to its holder), the device's list of the channels it created or followed, and
 * posts queued like sends. A change goes through the Idempotency-Key handling: a retried create
 * makes one channel. The admin routes serve them too (admin.ts), with the device named by the
 * path.
 */
export function channelHandlers(
  s: Uses<
    'redis' | 'encryption' | 'commands' | 'sessions' | 'messages' | 'acceptor' | 'media' | 'idempotency'
  >,
  /** The device a request acts on: the token's (public API), or the path's (admin API). */
  deviceOf: (req: Request, res: Response) => string = (_req, res) => authOf(res).deviceId,
) {
  const known = new ChannelList(s.redis);
  const deps = {
    holder: { commands: s.commands, sessions: s.sessions },
    known,
    redis: s.redis,
    encryption: s.encryption,
    messages: s.messages,
    acceptor: s.acceptor,
    media: s.media,
  };
  // The Idempotency-Key handling of idempotentChange, for a device already named (idempotencyScope).
  const change = (req: Request, res: Response, deviceId: string, run: () => Promise<unknown>) =>
    s.idempotency
      .run(req, idempotencyScope(res, deviceId), async () => ({
        status: 200,
        body: { success: true, data: await run() },
      }))
      .then((outcome) => respond(res, outcome));
  const follow =
    (following: boolean): RequestHandler =>
    async (req, res) => {
      noQuery(req);
      const key = channelKeyOf(req);
      const deviceId = deviceOf(req, res);
      await change(req, res, deviceId, async () =>
        answered(await followChannel(deps, deviceId, key, following)),
      );
    };

  return {
    list: async (req, res) => {
      noQuery(req);
      ok(res, { channels: await known.list(deviceOf(req, res)) });
    },
    get: async (req, res) => {
      noQuery(req);
      const key = channelKeyOf(req);
      ok(res, answered(await getChannel(deps, deviceOf(req, res), key)));
    },
    create: async (req, res) => {
      noQuery(req);
      const { picture, ...body } = parse(channelCreateBodySchema, req.body ?? {});
      const bytes = pictureOf(picture) ?? undefined;
      const deviceId = deviceOf(req, res);
      await change(req, res, deviceId, async () =>
        answered(await createChannel(deps, deviceId, body, bytes)),
      );
    },
    update: async (req, res) => {
      noQuery(req);
      const key = channelKeyOf(req);
      const { picture, ...changes } = parse(channelUpdateBodySchema, req.body ?? {});
      const bytes = pictureOf(picture);
      const deviceId = deviceOf(req, res);
      await change(req, res, deviceId, async () =>
        answered(await updateChannel(deps, deviceId, key, changes, bytes)),
      );
    },
    remove: async (req, res) => {
      noQuery(req);
      const key = channelKeyOf(req);
      const deviceId = deviceOf(req, res);
      await change(req, res, deviceId, async () => answered(await deleteChannel(deps, deviceId, key)));
    },
    follow: follow(true),
    unfollow: follow(false),
    /** POST /channels/:id/posts: queued like a send (202), sent once or failed with a reason. */
    post: async (req, res) => {
      noQuery(req);
      const key = channelKeyOf(req);
      const body = parse(channelPostBodySchema, req.body ?? {}) as ChannelPostBody;
      const deviceId = deviceOf(req, res);
      const outcome = await s.idempotency.run(req, idempotencyScope(res, deviceId), async () => {
        const published = await publishPost(deps, deviceId, key, body);
        if (!published.ok) throw postError(published);
        return { status: 202, body: { success: true, data: published.data } };
      });
      respond(res, outcome);
    },
    posts: async (req, res) => {
      noQuery(req);
      const key = channelKeyOf(req);
      ok(res, answered(await readPosts(deps, deviceOf(req, res), key)));
    },
    /** The post is looked up before its body is read: an unknown post is a 404 whatever the body. */
    editPost: async (req, res) => {
      noQuery(req);
      const deviceId = deviceOf(req, res);
      const { channelId, messageId } = postParamsOf(req);
      const found = await findPost(s, deviceId, channelId, messageId);
      if (!found.ok) throw postError(found);
      const { text } = parse(channelPostEditSchema, req.body ?? {});
      const outcome = await s.idempotency.run(req, idempotencyScope(res, deviceId), async () => {
        const edited = await editPost(s, deviceId, found.data, text);
        if (!edited.ok) throw postError(edited);
        return { status: 202, body: { success: true, data: edited.data } };
      });
      respond(res, outcome);
    },
    /** 200 when a post left the queue before it was sent; 202 when its delete is queued. */
    deletePost: async (req, res) => {
      noQuery(req);
      const deviceId = deviceOf(req, res);
      const { channelId, messageId } = postParamsOf(req);
      const outcome = await deletePost(s, deviceId, channelId, messageId);
      if (!outcome.ok) throw postError(outcome);
      res.status(outcome.data.status === 'deleted' ? 200 : 202).json({ success: true, data: outcome.data });
    },
  } satisfies Record<ChannelName, RequestHandler>;
}

/** The handlers of the channel routes, by name (the admin routes serve them too: admin.ts). */
export type ChannelHandlers = ReturnType<typeof channelHandlers>;
