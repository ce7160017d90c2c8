import { CHANNEL_ERRORS, ERRORS } from '@mgw/contracts';
import type { RequestHandler } from 'express';
import type { ApiServices } from '../../api-services.js';
import { jsonBody } from '../../http/body.js';
import { FIELD_ALLOWANCE, MAX_JSON_DEPTH } from '../../http/route-table.js';
import { channelHandlers } from '../../features/channels/mount.js';
import { SEND_BODY_LIMIT_BYTES } from '../../features/send/mount.js';
import { deviceIdOf, type AdminMount } from '../admin-routes.js';

/**
 * A device's channels for the dashboard (the Channels tab, docs/broadcasts.md "Channels"): the
 * public channel routes (features/channels) with the device named by the path, behind the admin
 * guard — the same use cases (device commands to the holder, posts through the send queue), the
 * same bodies and answers. No per-token rate limit (RATE_LIMIT_BROADCASTS is the public tokens'):
 * the admin guard is the gate.
 */
export const channels: AdminMount = ({ s, guard, none }) => {
  const r = channelHandlers(s, deviceIdOf);
  const channel = channelBody(s);
  const post = postBody(s);
  const base = '/devices/:deviceId/channels';
  return [
    { method: 'get', path: base, handlers: [guard, r.list] },
    { method: 'post', path: base, handlers: [guard, channel, r.create] },
    { method: 'get', path: `${base}/:id`, handlers: [guard, r.get] },
    { method: 'patch', path: `${base}/:id`, handlers: [guard, channel, r.update] },
    { method: 'delete', path: `${base}/:id`, handlers: [guard, none, r.remove] },
    { method: 'post', path: `${base}/:id/follow`, handlers: [guard, none, r.follow] },
    { method: 'post', path: `${base}/:id/unfollow`, handlers: [guard, none, r.unfollow] },
    { method: 'post', path: `${base}/:id/posts`, handlers: [guard, post, r.post] },
    { method: 'get', path: `${base}/:id/posts`, handlers: [guard, r.posts] },
    { method: 'patch', path: `${base}/:id/posts/:messageId`, handlers: [guard, channel, r.editPost] },
    { method: 'delete', path: `${base}/:id/posts/:messageId`, handlers: [guard, none, r.deletePost] },
  ];
};

/** As the public channel bodies: a name, a description and a picture (512 KB) as base64. */
const channelBody = (s: ApiServices): RequestHandler =>
  jsonBody({
    limitBytes: 800 * 1024,
    tooLargeError: CHANNEL_ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });

/** As the public POST /channels/:id/posts: a text, or an attachment of up to 10 MB as base64. */
const postBody = (s: ApiServices): RequestHandler =>
  jsonBody({
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });
