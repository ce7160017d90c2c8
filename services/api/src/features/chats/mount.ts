import { CHAT_ERRORS } from '@mgw/contracts';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { chatRoutes } from '../../routes/chats.js';
import { chatPaths, chatSchemas } from './openapi.js';

/** PATCH /settings: three fields, the longest a text of 1,000 characters. */
export const SETTINGS_BODY_LIMIT_BYTES = 8 * 1024;
const settingsBody: BodySpec = {
  json: {
    limitBytes: SETTINGS_BODY_LIMIT_BYTES,
    tooLargeError: CHAT_ERRORS.settingsBodyTooLarge,
    maxValues: FIELD_ALLOWANCE,
  },
};

/** Chats and their messages, read receipts, and the account's reading settings (docs/chats-and-calls.md). */
export const chats = feature({
  name: 'chats',
  routes: [
    { method: 'get', path: '/chats', limit: 'messages', handler: 'list' },
    { method: 'get', path: '/chats/:chatId/messages', limit: 'messages', handler: 'messages' },
    { method: 'post', path: '/chats/:chatId/read', limit: 'messages', body: 'none', handler: 'readChat' },
    { method: 'post', path: '/messages/:id/read', limit: 'messages', body: 'none', handler: 'readMessage' },
    { method: 'get', path: '/settings', limit: 'webhook', handler: 'getSettings' },
    { method: 'patch', path: '/settings', limit: 'webhook', body: settingsBody, handler: 'patchSettings' },
  ],
  handlers: chatRoutes,
  paths: chatPaths,
  schemas: chatSchemas,
});
