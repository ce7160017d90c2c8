import { ERRORS, MAX_CONTACT_CHECK } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { mcpOperations } from './openapi.js';
import type { RequestHandler } from 'express';
import { namedDeviceOf } from '../../http/device-path.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpServer } from './mcp-server.js';

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
  routes: [{ method: 'post', path: '/mcp', limit: 'none', body: mcpBody, pool: true, handler: 'mcp' }],
  handlers: (s) => ({ mcp: mcpRoute(s.config.maxRecipients) }),
  operations: mcpOperations,
});

/**
 * POST /api/messenger/v1/mcp: the MCP endpoint (Streamable HTTP, stateless: every POST gets its
 * own server and transport, answered as JSON — no session to keep, so any replica serves any
 * request and nothing outlives the request; GET (a server-initiated stream) and DELETE (ending a
 * session) have nothing to serve: 405). The request is authenticated before (the same middleware
 * as every route); each tool call then goes through its own route with the caller's credentials.
 */
function mcpRoute(maxRecipients: number): RequestHandler {
  return async (req, res) => {
    const q = (req.query as Record<string, unknown>).token;
    const authorization = req.get('authorization') ?? (typeof q === 'string' ? `Bearer ${q}` : undefined);
    const { localAddress, localPort } = req.socket;
    if (!localAddress || !localPort) throw new Error('the MCP request has no local address');
    // A workspace token's MCP request names its device (/devices/{id}/mcp): so does each tool call.
    const device = namedDeviceOf(res);
    const server = createMcpServer(
      {
        host: localAddress,
        port: localPort,
        ...(authorization ? { authorization } : {}),
        ...(device ? { device } : {}),
      },
      maxRecipients,
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    // A failure here is the error middleware's (a 500 `{ success: false, error }`, logged).
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
}
