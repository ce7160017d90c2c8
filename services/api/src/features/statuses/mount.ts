import { STATUS_ERRORS, STATUS_LIMITS } from '@mgw/contracts';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { statusRoutes } from '../../routes/statuses.js';
import { SEND_BODY_LIMIT_BYTES } from '../send/mount.js';
import { broadcastPaths, broadcastSchemas } from './openapi.js';

// A status names up to STATUS_LIMITS.audience viewers beside an attachment of up to 10 MB (as /send).
const statusBody: BodySpec = {
  json: {
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: STATUS_ERRORS.bodyTooLarge,
    maxValues: STATUS_LIMITS.audience + FIELD_ALLOWANCE,
    lists: { audience: STATUS_LIMITS.audience },
  },
};
const settingsBody: BodySpec = {
  json: { limitBytes: 1024, tooLargeError: STATUS_ERRORS.settingsBodyTooLarge, maxValues: FIELD_ALLOWANCE },
};

/** Status updates (stories, docs/broadcasts.md): posted through the send path, listed with their viewers. */
export const statuses = feature({
  name: 'statuses',
  routes: [
    { method: 'post', path: '/statuses', limit: 'broadcasts', body: statusBody, handler: 'post' },
    { method: 'get', path: '/statuses', limit: 'broadcasts', handler: 'list' },
    { method: 'get', path: '/statuses/settings', limit: 'broadcasts', handler: 'getSettings' },
    {
      method: 'put',
      path: '/statuses/settings',
      limit: 'broadcasts',
      body: settingsBody,
      handler: 'putSettings',
    },
    { method: 'delete', path: '/statuses/:id', limit: 'broadcasts', body: 'none', handler: 'remove' },
  ],
  handlers: statusRoutes,
  paths: broadcastPaths,
  schemas: broadcastSchemas,
});
