import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { API_BASE, callRoute, type Caller, type RouteAnswer } from './route-call.js';
import { toolSchemas } from './tool-schemas.js';

/** A route's answer as a tool result: its JSON body; a failure (`success: false`) is a tool error. */
function toolResult({ status, body }: RouteAnswer): CallToolResult {
  const failed = status >= 400 || body.success === false;
  return {
    content: [{ type: 'text', text: JSON.stringify(failed ? { status, ...body } : body) }],
    structuredContent: failed ? { status, ...body } : body,
    ...(failed ? { isError: true } : {}),
  };
}

/** The query of a tool's arguments: the defined ones, as strings. */
function queryOf(args: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(args)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  );
}

/**
 * The MCP server of one request (the endpoint is stateless: a server per POST), its tools each
 * calling one route of the API for `caller` (route-call.ts).
 */
export function createMcpServer(caller: Caller, maxRecipients: number): McpServer {
  const server = new McpServer(
    { name: 'messenger-gateway', version: '1' },
    {
      instructions:
        'Tools of a WhatsApp gateway, acting on the device of the API token the MCP request carries. ' +
        'Each tool is one route of the HTTP API (POST /send, GET /cloud/templates, POST /contacts/check, ' +
        'POST /contacts/username, GET /status, ' +
        'GET /messages, GET /messages/{id}, GET /chats, GET /chats/{chatId}/messages, ' +
        'POST /chats/{chatId}/read) with its rate limit and checks; a refusal is a tool error ' +
        'whose JSON holds the API\u2019s `error` (and `details`, `resetIn`\u2026).',
    },
  );
  const schemas = toolSchemas(maxRecipients);
  const call = (...a: Parameters<typeof callRoute> extends [unknown, ...infer R] ? R : never) =>
    callRoute(caller, ...a).then(toolResult);

  server.registerTool(
    'send_message',
    {
      title: 'Send a WhatsApp message',
      description:
        'Queues a text message to one recipient or to a list (POST /send). Answers the messageId ' +
        '(a list: its batch id and one messageId per recipient); the message is sent by the device ' +
        'with its pacing; follow it with get_message.',
      inputSchema: schemas.sendMessage,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    ({ to, text, idempotencyKey }) =>
      call('POST', `${API_BASE}/send`, {
        json: { to, text },
        ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
      }),
  );
  server.registerTool(
    'send_template',
    {
      title: 'Send a WhatsApp template (Cloud API devices)',
      description:
        'Queues an approved template of the Cloud API number to one recipient or a list (POST /send ' +
        'with `template`): the only message a contact who has not written in the last 24 hours may ' +
        'get from a Cloud API device. A device linked by QR or code refuses it (422). Answers as ' +
        'send_message does.',
      inputSchema: schemas.sendTemplate,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    ({ to, name, language, components, idempotencyKey }) =>
      call('POST', `${API_BASE}/send`, {
        json: { to, template: { name, language, ...(components ? { components } : {}) } },
        ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
      }),
  );
  server.registerTool(
    'list_templates',
    {
      title: 'List the templates (Cloud API devices)',
      description:
        'The Cloud API number\u2019s templates (GET /cloud/templates): each one\u2019s name, language, ' +
        'status (only APPROVED ones are sent), category, the parameters send_template must give its ' +
        'header, body and buttons, and its text. A device linked by QR or code has none (404).',
      inputSchema: schemas.listTemplates,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (args) => call('GET', `${API_BASE}/cloud/templates`, { query: queryOf(args) }),
  );
  server.registerTool(
    'check_numbers',
    {
      title: 'Check numbers on WhatsApp',
      description:
        'Whether each phone number is on WhatsApp (POST /contacts/check), in the order given. ' +
        'Numbers not cached count against the device\u2019s daily lookup cap.',
      inputSchema: schemas.checkNumbers,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ phones }) => call('POST', `${API_BASE}/contacts/check`, { json: { phones } }),
  );
  server.registerTool(
    'resolve_username',
    {
      title: 'Resolve a WhatsApp username',
      description:
        'Who has a WhatsApp username (POST /contacts/username): found (with the contact\u2019s LID), ' +
        'pin_required (guarded by a 4-digit PIN: call again with pin) or not_found. A found username ' +
        'may then be sent to with send_message (to: "@name"). Counts against the device\u2019s daily lookup cap.',
      inputSchema: schemas.resolveUsername,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ username, pin }) =>
      call('POST', `${API_BASE}/contacts/username`, { json: { username, ...(pin ? { pin } : {}) } }),
  );
  server.registerTool(
    'get_status',
    {
      title: 'Device status',
      description:
        'The device\u2019s link status (connected, connecting, disconnected), its account while ' +
        'connected, and what it sent today against its caps (GET /status).',
      inputSchema: schemas.getStatus,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => call('GET', `${API_BASE}/status`),
  );
  server.registerTool(
    'list_messages',
    {
      title: 'List messages',
      description:
        'A page of the device\u2019s messages, newest first, sent and received (GET /messages); ' +
        'pass nextCursor as cursor for the next page.',
      inputSchema: schemas.listMessages,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => call('GET', `${API_BASE}/messages`, { query: queryOf(args) }),
  );
  server.registerTool(
    'get_message',
    {
      title: 'Read a message',
      description: 'One message of the device with its status and history (GET /messages/{id}).',
      inputSchema: schemas.getMessage,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ messageId }) => call('GET', `${API_BASE}/messages/${encodeURIComponent(messageId)}`),
  );
  server.registerTool(
    'list_chats',
    {
      title: 'List chats',
      description:
        'The device\u2019s chats, most recently active first (GET /chats): each with its contact or ' +
        'group, unread count and the start of its last message; pass nextCursor as cursor for more.',
      inputSchema: schemas.listChats,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => call('GET', `${API_BASE}/chats`, { query: queryOf(args) }),
  );
  server.registerTool(
    'get_chat_messages',
    {
      title: 'Read a chat',
      description:
        'A page of one chat\u2019s messages, newest first, both directions (GET /chats/{chatId}/messages); ' +
        'pass nextCursor as cursor for older ones. Reading does not mark them read: see mark_chat_read.',
      inputSchema: schemas.getChatMessages,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ chatId, ...page }) =>
      call('GET', `${API_BASE}/chats/${encodeURIComponent(chatId)}/messages`, { query: queryOf(page) }),
  );
  server.registerTool(
    'mark_chat_read',
    {
      title: 'Mark a chat read',
      description:
        'Marks every unread message of the chat read (POST /chats/{chatId}/read): WhatsApp\u2019s read ' +
        'receipts go to the contact when the account shares them. Needs the device connected.',
      inputSchema: schemas.markChatRead,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    ({ chatId }) => call('POST', `${API_BASE}/chats/${encodeURIComponent(chatId)}/read`),
  );
  return server;
}
