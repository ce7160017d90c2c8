import type { RequestHandler } from 'express';
import { CHANNEL_ERRORS, ERRORS } from '@mgw/contracts';
import { FIELD_ALLOWANCE, MAX_JSON_DEPTH, type AdminRoute, type BodySpec } from '../../http/route-table.js';
import { SEND_BODY_LIMIT_BYTES } from '../send/index.js';
import type { ChannelHandlers } from './mount.js';

export type ChannelAdminName =
  | 'adminList'
  | 'adminCreate'
  | 'adminGet'
  | 'adminUpdate'
  | 'adminRemove'
  | 'adminFollow'
  | 'adminUnfollow'
  | 'adminPost'
  | 'adminPosts'
  | 'adminEditPost'
  | 'adminDeletePost';

/** As the public channel bodies: a name, a description and a picture (512 KB) as base64. */
const channelBody: BodySpec = {
  json: {
    limitBytes: 800 * 1024,
    tooLargeError: CHANNEL_ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
  },
};

/** As the public POST /channels/:id/posts: a text, or an attachment of up to 10 MB as base64. */
const postBody: BodySpec = {
  json: {
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
  },
};

const base = '/devices/:deviceId/channels';
const post = `${base}/:id/posts/:messageId`;

/**
 * A device's channels for the dashboard (the Channels tab, docs/broadcasts.md "Channels"): the
 * public channel routes with the device named by the path, behind the admin guard — the same use
 * cases (device commands to the holder, posts through the send queue), the same bodies and
 * answers. No per-token rate limit (RATE_LIMIT_BROADCASTS is the public tokens'): the admin guard
 * is the gate.
 */
export const channelAdminRoutes: AdminRoute<ChannelAdminName>[] = [
  { surface: 'admin', method: 'get', path: base, handler: 'adminList' },
  { surface: 'admin', method: 'post', path: base, body: channelBody, handler: 'adminCreate' },
  { surface: 'admin', method: 'get', path: `${base}/:id`, handler: 'adminGet' },
  { surface: 'admin', method: 'patch', path: `${base}/:id`, body: channelBody, handler: 'adminUpdate' },
  { surface: 'admin', method: 'delete', path: `${base}/:id`, body: 'none', handler: 'adminRemove' },
  { surface: 'admin', method: 'post', path: `${base}/:id/follow`, body: 'none', handler: 'adminFollow' },
  { surface: 'admin', method: 'post', path: `${base}/:id/unfollow`, body: 'none', handler: 'adminUnfollow' },
  { surface: 'admin', method: 'post', path: `${base}/:id/posts`, body: postBody, handler: 'adminPost' },
  { surface: 'admin', method: 'get', path: `${base}/:id/posts`, handler: 'adminPosts' },
  { surface: 'admin', method: 'patch', path: post, body: channelBody, handler: 'adminEditPost' },
  { surface: 'admin', method: 'delete', path: post, body: 'none', handler: 'adminDeletePost' },
];

/** The admin rows' handlers: `r`, the public handlers with the device from the path (mount.ts). */
export function channelAdminHandlers(r: ChannelHandlers): Record<ChannelAdminName, RequestHandler> {
  return {
    adminList: r.list,
    adminCreate: r.create,
    adminGet: r.get,
    adminUpdate: r.update,
    adminRemove: r.remove,
    adminFollow: r.follow,
    adminUnfollow: r.unfollow,
    adminPost: r.post,
    adminPosts: r.posts,
    adminEditPost: r.editPost,
    adminDeletePost: r.deletePost,
  };
}
