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
  { surface: 'admin', method: 'get', path: base, handler: 'adminList', console: 'read' },
  {
    surface: 'admin',
    method: 'post',
    path: base,
    body: channelBody,
    handler: 'adminCreate',
    console: 'admin',
  },
  { surface: 'admin', method: 'get', path: `${base}/:id`, handler: 'adminGet', console: 'read' },
  {
    surface: 'admin',
    method: 'patch',
    path: `${base}/:id`,
    body: channelBody,
    handler: 'adminUpdate',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: `${base}/:id`,
    body: 'none',
    handler: 'adminRemove',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'post',
    path: `${base}/:id/follow`,
    body: 'none',
    handler: 'adminFollow',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'post',
    path: `${base}/:id/unfollow`,
    body: 'none',
    handler: 'adminUnfollow',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'post',
    path: `${base}/:id/posts`,
    body: postBody,
    handler: 'adminPost',
    console: 'admin',
  },
  { surface: 'admin', method: 'get', path: `${base}/:id/posts`, handler: 'adminPosts', console: 'read' },
  {
    surface: 'admin',
    method: 'patch',
    path: post,
    body: channelBody,
    handler: 'adminEditPost',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: post,
    body: 'none',
    handler: 'adminDeletePost',
    console: 'admin',
  },
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
