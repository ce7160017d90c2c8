import { Agent, request } from 'node:http';

/** A route's answer: its status and JSON body (every route of the API answers JSON). */
export interface RouteAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** The caller whose MCP request a tool call belongs to, and the server that took it. */
export interface Caller {
  /** The MCP request's `Authorization` header (a `?token=` is passed on as a bearer token). */
  authorization?: string;
  /** The address and port the MCP request arrived at: this very server. */
  host: string;
  port: number;
  /**
   * The device the MCP request named (`/api/messenger/v1/devices/{id}/mcp`, docs/workspaces.md):
   * each route is called for it, under the same prefix.
   */
  device?: string;
}

/** The API's base path (http/route-table.ts says the same; a use case does not import the HTTP layer). */
export const API_BASE = '/api/messenger/v1';

/** Kept-alive connections to this process's own server, shared by every tool call. */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * Calls one of the API's routes as an HTTP request to this same server (the address the MCP
 * request arrived at), through the whole app — the same authentication, per-token rate limit,
 * body guards, validation, use case and error mapping as any client's request meets. An MCP tool
 * is thereby never a second way in: what the route refuses, the tool refuses, with the route's
 * status and error body. (In-process injection was tried: light-my-request rewrites the express
 * app's shared response prototype, which breaks the real requests.)
 */
export function callRoute(
  caller: Caller,
  method: 'GET' | 'POST',
  path: string,
  opts: { query?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
): Promise<RouteAnswer> {
  const query = opts.query && Object.keys(opts.query).length > 0 ? `?${new URLSearchParams(opts.query)}` : '';
  const target =
    caller.device && path.startsWith(`${API_BASE}/`)
      ? `${API_BASE}/devices/${caller.device}${path.slice(API_BASE.length)}`
      : path;
  const payload = opts.json === undefined ? undefined : Buffer.from(JSON.stringify(opts.json));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: caller.host,
        port: caller.port,
        method,
        path: target + query,
        headers: {
          ...opts.headers,
          ...(caller.authorization ? { authorization: caller.authorization } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
            resolve({ status: res.statusCode ?? 0, body });
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
