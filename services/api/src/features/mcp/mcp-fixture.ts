import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Caller } from './route-call.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): the MCP tools' fast tests
 * (`<use-case>.test.ts` beside each) without the API — each tool calls one route over HTTP to the
 * server the MCP request came to: here a stand-in server of the test's own process (the fast lane
 * lets a test talk to its own), answering each route as told; an MCP client talks to the tools
 * over an in-memory transport.
 */

/** A request the stand-in API heard: its method, path, headers and body. */
export interface Heard {
  method: string;
  path: string;
  authorization?: string;
  idempotencyKey?: string;
  body?: unknown;
}

/** The stand-in API: what it heard, and what it answers (200, `{ success: true }` unless told). */
export class StandInApi {
  heard: Heard[] = [];
  answer: (h: Heard) => { status: number; body: unknown } = () => ({ status: 200, body: { success: true } });
  private server?: Server;
  private address?: AddressInfo;

  /** Listens on a free port of 127.0.0.1. */
  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const h: Heard = {
          method: req.method!,
          path: req.url!,
          ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
          ...(req.headers['idempotency-key']
            ? { idempotencyKey: String(req.headers['idempotency-key']) }
            : {}),
          ...(raw ? { body: JSON.parse(raw) as unknown } : {}),
        };
        this.heard.push(h);
        const { status, body } = this.answer(h);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.address = this.server.address() as AddressInfo;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Forgets what it heard and answers 200 `{ success: true }` again. */
  reset(): void {
    this.heard = [];
    this.answer = () => ({ status: 200, body: { success: true } });
  }

  /** The caller of the stand-in server: its address and a token's authorization. */
  get caller(): Caller {
    return { host: '127.0.0.1', port: this.address!.port, authorization: 'Bearer tok-1' };
  }
}
