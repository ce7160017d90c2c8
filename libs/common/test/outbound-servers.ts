import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { HostResolver } from '../src/index.js';

/** A local server that counts what reaches it, so a test can assert that a refused target was never contacted. */
export interface CountingServer {
  port: number;
  host: string;
  /** TCP connections accepted, whatever happened on them afterwards. */
  connections: number;
  /** Request lines and headers seen, in order (HTTP servers only). */
  requests: { method: string; url: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

type Listener = http.Server | https.Server | net.Server;

async function listen(server: Listener, host: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as net.AddressInfo).port;
}

async function track(server: Listener, host: string, port: number): Promise<CountingServer> {
  const sockets = new Set<net.Socket>();
  const handle: CountingServer = {
    host,
    port: 0,
    connections: 0,
    requests: [],
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  // 'connection' fires for TLS servers too (before the handshake): a refused target must not even see a SYN-ACK.
  server.on('connection', (socket: net.Socket) => {
    handle.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('request', (req: http.IncomingMessage) => {
    handle.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
  });
  handle.port = await listen(server, host, port);
  return handle;
}

export function startHttpServer(
  handler: http.RequestListener,
  host = '127.0.0.1',
  port = 0,
): Promise<CountingServer> {
  return track(http.createServer(handler), host, port);
}

export function startHttpsServer(
  tls: { cert: string; key: string },
  handler: http.RequestListener,
  host = '127.0.0.1',
): Promise<CountingServer> {
  return track(https.createServer(tls, handler), host, 0);
}

/** Writes raw bytes on every connection: for responses a well-behaved HTTP server would never send. */
export function startRawServer(onConnection: (socket: net.Socket) => void): Promise<CountingServer> {
  return track(net.createServer(onConnection), '127.0.0.1', 0);
}

/** A resolver answering from a table; it records every question so tests can prove DNS was asked only once. */
export function tableResolver(answers: Record<string, string[] | (() => string[])>): HostResolver & {
  questions: string[];
} {
  const questions: string[] = [];
  const resolve = async (hostname: string) => {
    questions.push(hostname);
    const entry = answers[hostname];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const list = typeof entry === 'function' ? entry() : entry;
    return list.map((address) => ({ address, family: net.isIP(address) }));
  };
  return Object.assign(resolve, { questions });
}

export const ok =
  (body = 'ok'): http.RequestListener =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
  };
