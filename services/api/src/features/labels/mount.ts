import { GROUP_ERRORS, GROUP_LIMITS } from '@mgw/contracts';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { labelRoutes } from '../../routes/labels.js';
import { labelPaths, labelSchemas } from './openapi.js';

/**
 * A label's name and colour, a chat's label, a chat's archive/pin/mute: small bodies, bounded as
 * the group requests' are (8 KB, the same 413 answer) since labels first shipped beside them.
 */
const labelBody: BodySpec = {
  json: {
    limitBytes: 8 * 1024,
    tooLargeError: GROUP_ERRORS.bodyTooLarge,
    maxValues: GROUP_LIMITS.participants + FIELD_ALLOWANCE,
    lists: { participants: GROUP_LIMITS.participants },
  },
};

/**
 * Business labels and a chat's archive, pin and mute (docs/labels.md): app-state patches the
 * sender holding the device makes. They share the groups' limit (RATE_LIMIT_GROUPS): both are the
 * account's own housekeeping.
 */
export const labels = feature({
  name: 'labels',
  routes: [
    { method: 'get', path: '/labels', limit: 'groups', handler: 'listLabels' },
    { method: 'post', path: '/labels', limit: 'groups', body: labelBody, handler: 'createLabel' },
    { method: 'patch', path: '/labels/:labelId', limit: 'groups', body: labelBody, handler: 'updateLabel' },
    { method: 'delete', path: '/labels/:labelId', limit: 'groups', body: 'none', handler: 'deleteLabel' },
    { method: 'get', path: '/labels/:labelId/chats', limit: 'groups', handler: 'labelChats' },
    { method: 'get', path: '/chats/:chatId/labels', limit: 'groups', handler: 'chatLabels' },
    { method: 'post', path: '/chats/:chatId/labels', limit: 'groups', body: labelBody, handler: 'labelChat' },
    {
      method: 'delete',
      path: '/chats/:chatId/labels/:labelId',
      limit: 'groups',
      body: 'none',
      handler: 'unlabelChat',
    },
    { method: 'patch', path: '/chats/:chatId', limit: 'groups', body: labelBody, handler: 'chatState' },
  ],
  handlers: labelRoutes,
  paths: labelPaths,
  schemas: labelSchemas,
});
