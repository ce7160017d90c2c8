import { GROUP_ERRORS, GROUP_LIMITS } from '@mgw/contracts';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { groupRoutes } from '../../routes/groups.js';
import { groupPaths, groupSchemas } from './openapi.js';

/** POST /groups and /groups/:id/participants: a subject and at most 50 members. */
export const GROUP_BODY_LIMIT_BYTES = 8 * 1024;
// A group request names at most GROUP_LIMITS.participants members and a subject.
export const GROUP_BODY: BodySpec = {
  json: {
    limitBytes: GROUP_BODY_LIMIT_BYTES,
    tooLargeError: GROUP_ERRORS.bodyTooLarge,
    maxValues: GROUP_LIMITS.participants + FIELD_ALLOWANCE,
    lists: { participants: GROUP_LIMITS.participants },
  },
};

/** The account's groups (docs/groups.md): each change asks the sender holding the device. */
export const groups = feature({
  name: 'groups',
  routes: [
    { method: 'get', path: '/groups', limit: 'groups', handler: 'list' },
    { method: 'post', path: '/groups', limit: 'groups', body: GROUP_BODY, handler: 'create' },
    { method: 'get', path: '/groups/:id', limit: 'groups', handler: 'get' },
    {
      method: 'post',
      path: '/groups/:id/participants',
      limit: 'groups',
      body: GROUP_BODY,
      handler: 'participants',
    },
    { method: 'post', path: '/groups/:id/leave', limit: 'groups', body: 'none', handler: 'leave' },
    { method: 'post', path: '/groups/join', limit: 'groups', body: GROUP_BODY, handler: 'join' },
    { method: 'patch', path: '/groups/:id', limit: 'groups', body: GROUP_BODY, handler: 'update' },
    { method: 'get', path: '/groups/:id/invite', limit: 'groups', handler: 'invite' },
    {
      method: 'post',
      path: '/groups/:id/invite/revoke',
      limit: 'groups',
      body: 'none',
      handler: 'revokeInvite',
    },
  ],
  handlers: groupRoutes,
  paths: groupPaths,
  schemas: groupSchemas,
});
