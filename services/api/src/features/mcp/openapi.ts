import type { Operations } from '../../http/route-table.js';
import { STATUS_TEXT } from '../../openapi/components.js';
import { ref } from '../../openapi/schema-helpers.js';

/**
 * POST /mcp: JSON-RPC 2.0 messages of the Model Context Protocol (Streamable HTTP, stateless), not
 * a JSON body of ours: the document names the envelope; the tools and their input schemas are
 * what `tools/list` answers (docs/mcp.md).
 */
export function mcpOperation(): Record<string, unknown> {
  const jsonRpc = { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' } } };
  const error = (status: number) => ({
    description: STATUS_TEXT[status] ?? 'Error.',
    content: { 'application/json': { schema: ref('Error') } },
  });
  return {
    tags: ['MCP'],
    summary: 'Model Context Protocol (Streamable HTTP, stateless)',
    description:
      "One JSON-RPC 2.0 message per request (`initialize`, `tools/list`, `tools/call`…; send `Accept: application/json, text/event-stream`), answered as JSON; no session (`Mcp-Session-Id` is never set), so GET and DELETE answer 405. Tools: `send_message` (POST /send, a text to one recipient or a list), `send_template` (POST /send with `template`, Cloud API devices), `list_templates` (GET /cloud/templates), `check_numbers` (POST /contacts/check), `resolve_username` (POST /contacts/username), `get_status` (GET /status), `list_messages` (GET /messages), `get_message` (GET /messages/{id}), `list_chats` (GET /chats), `get_chat_messages` (GET /chats/{chatId}/messages), `mark_chat_read` (POST /chats/{chatId}/read). Each tool call is a request to its route with this request's token: the same token rules, rate limits and checks; a refusal is a tool result with `isError: true` whose JSON is the route's error body with its `status`. See docs/mcp.md.",
    requestBody: { required: true, content: { 'application/json': { schema: jsonRpc } } },
    responses: {
      200: { description: 'The JSON-RPC answer.', content: { 'application/json': { schema: jsonRpc } } },
      202: { description: 'A notification or a response was accepted (no body).' },
      401: error(401),
      403: error(403),
      405: error(405),
      408: error(408),
      413: error(413),
      429: error(429),
      500: error(500),
      503: error(503),
    },
  };
}

/** The MCP route's operation, by handler (mount.ts). */
export const mcpOperations = (): Operations<'mcp'> => ({ mcp: mcpOperation() });
