import type { RequestHandler } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpServer } from './mcp-server.js';

/**
 * POST /api/messenger/v1/mcp: the MCP endpoint (Streamable HTTP, stateless: every POST gets its
 * own server and transport, answered as JSON — no session to keep, so any replica serves any
 * request and nothing outlives the request; GET (a server-initiated stream) and DELETE (ending a
 * session) have nothing to serve: 405). The request is authenticated before (the same middleware
 * as every route); each tool call then goes through its own route with the caller's credentials.
 */
export function mcpRoute(maxRecipients: number): RequestHandler {
  return async (req, res) => {
    const q = (req.query as Record<string, unknown>).token;
    const authorization = req.get('authorization') ?? (typeof q === 'string' ? `Bearer ${q}` : undefined);
    const { localAddress, localPort } = req.socket;
    if (!localAddress || !localPort) throw new Error('the MCP request has no local address');
    const server = createMcpServer(
      { host: localAddress, port: localPort, ...(authorization ? { authorization } : {}) },
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
