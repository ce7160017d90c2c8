import type { RequestHandler } from 'express';
import type { AdminRoute } from '../../http/route-table.js';
import type { ChannelHandlers } from './mount.js';
import { channelBody, postBody } from './bodies.js';

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
