import http, { type IncomingMessage, type RequestListener } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Request, Response } from 'express';

/**
 * WebSocket upgrades go through the express app like any request: an `upgrade` of the HTTP
 * server becomes a request with a response bound to the socket, so the request id, the access log
 * and metrics, authentication, the per-token rate limit and validation all run as for any route,
 * and a refusal is the API's error JSON with its HTTP status (401, 403, 429, 400…) before anything
 * is upgraded. The route that accepts it finds the socket with {@link upgradeOf} and hands it to
 * the `ws` server; a request nobody upgrades is answered and its connection closed.
 */

interface Pending {
  socket: Duplex;
  head: Buffer;
  res: http.ServerResponse;
}

const pending = new WeakMap<IncomingMessage, Pending>();

/**
 * The `upgrade` listener of the API's HTTP server. Only a WebSocket upgrade is one here: any other
 * (`Upgrade: h2c`, which some clients add to plain requests, with a body) is served as the plain
 * request it also is, as Node does when nobody listens for upgrades — see {@link asPlainRequest}.
 */
export function upgradeThroughApp(server: http.Server, app: RequestListener) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    if (req.headers.upgrade?.toLowerCase() !== 'websocket') return asPlainRequest(server, req, socket, head);
    // A socket error (a reset) must not become an uncaught exception.
    socket.on('error', () => socket.destroy());
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as Socket);
    // An answer that is not an upgrade is the last thing on this connection.
    res.shouldKeepAlive = false;
    res.on('finish', () => {
      if (!pending.has(req)) return;
      pending.delete(req);
      res.detachSocket(socket as Socket);
      socket.end();
      setTimeout(() => socket.destroy(), 1000).unref();
    });
    pending.set(req, { socket, head, res });
    app(req, res);
  };
}

/** Hop-by-hop headers of the upgrade that must not come back, or the request would upgrade again. */
const DROPPED = new Set(['upgrade', 'http2-settings']);

/**
 * Node hands every request with an `Upgrade` header to the `upgrade` listener, its body unread
 * (in `head` and the socket). A request that is not a WebSocket upgrade is given back to the HTTP
 * server as it came, without its upgrade headers: its head written out again and put in front of
 * what the socket still holds, and the socket handed over as a new connection (keep-alive and all).
 */
function asPlainRequest(server: http.Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    let value = req.rawHeaders[i + 1]!;
    if (DROPPED.has(name.toLowerCase())) continue;
    if (name.toLowerCase() === 'connection') {
      value = value
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t && !DROPPED.has(t.toLowerCase()))
        .join(', ');
      if (!value) continue;
    }
    lines.push(`${name}: ${value}`);
  }
  const again = Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]);
  (socket as Socket).unshift(again);
  server.emit('connection', socket);
}

/**
 * The socket of an upgrade request, taken from the response (which then writes nothing: the
 * WebSocket server answers `101` itself); undefined for a plain HTTP request.
 */
export function takeUpgrade(req: Request): { socket: Duplex; head: Buffer } | undefined {
  const p = pending.get(req);
  if (!p) return undefined;
  pending.delete(req);
  p.res.detachSocket(p.socket as Socket);
  return { socket: p.socket, head: p.head };
}

/** Whether `req` arrived as an upgrade (the route may still refuse it with JSON). */
export function isUpgrade(req: Request): boolean {
  return pending.has(req);
}

/**
 * Once the WebSocket server answered `101`: the access log line and request metrics the response
 * would have had (status 101).
 */
export function upgraded(res: Response): void {
  res.statusCode = 101;
  res.emit('finish');
}
