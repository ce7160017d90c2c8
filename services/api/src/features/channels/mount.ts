import { CHANNEL_ERRORS, ERRORS } from '@mgw/contracts';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { channelRoutes } from '../../routes/channels.js';
import { SEND_BODY_LIMIT_BYTES } from '../send/mount.js';
import { channelPaths, channelSchemas } from './openapi.js';

// A channel's name and description, and its picture (a JPEG of up to 512 KB) as base64.
const channelBody: BodySpec = {
  json: { limitBytes: 800 * 1024, tooLargeError: CHANNEL_ERRORS.bodyTooLarge, maxValues: FIELD_ALLOWANCE },
};
// A channel post: its text, or an attachment of up to 10 MB as base64 (as /send takes it).
const postBody: BodySpec = {
  json: { limitBytes: SEND_BODY_LIMIT_BYTES, tooLargeError: ERRORS.bodyTooLarge, maxValues: FIELD_ALLOWANCE },
};

/** Channels (newsletters, docs/broadcasts.md): the account's own and the ones it follows. */
export const channels = feature({
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
  ],
  handlers: channelRoutes,
  paths: channelPaths,
  schemas: channelSchemas,
});
