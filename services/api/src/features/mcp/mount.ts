import { ERRORS, MAX_CONTACT_CHECK } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { mcpRoute } from '../../mcp/mcp-route.js';
import { mcpPaths } from './openapi.js';

/** An MCP message is one JSON-RPC call: a text to a list at most (a text is at most 256 KB of UTF-8). */
export const MCP_BODY_LIMIT_BYTES = 1024 * 1024;
// A tool call's arguments nest in `params.arguments`: its lists are not top-level fields.
const mcpBody = (config: ApiConfig): BodySpec => ({
  json: {
    limitBytes: MCP_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.mcpBodyTooLarge,
    maxValues: Math.max(config.maxRecipients, MAX_CONTACT_CHECK) + FIELD_ALLOWANCE,
  },
});

/**
 * MCP (docs/mcp.md): each tool call goes through its route, with that route's limit and checks, so
 * the endpoint itself has no limit of its own. Stateless Streamable HTTP: POST only.
 */
export const mcp = feature({
  name: 'mcp',
  routes: [{ method: 'post', path: '/mcp', limit: 'none', body: mcpBody, handler: 'mcp' }],
  handlers: (s) => ({ mcp: mcpRoute(s.config.maxRecipients) }),
  paths: mcpPaths,
});
