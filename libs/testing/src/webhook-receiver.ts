import http from 'node:http';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, with the verdict of its signature. */
export interface ReceivedDelivery {
  id: string;
  timestamp: string;
  signature: string;
  /** The body as received. */
  raw: string;
  /** Parsed body (`{ type, timestamp, data }`). */
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Verified with `standardwebhooks` against every secret the receiver knows (the first that matches). */
  verifiedWith?: string;
  /** What the receiver answered. */
  status: number;
  at: number;
  /** When the request had arrived and when its answer went out (ms, sub-millisecond precision). */
  startedAt: number;
  endedAt: number;
}

/**
 * A webhook endpoint on 127.0.0.1 for tests: verifies every delivery's signature with the
 * `standardwebhooks` package (as a customer would), records it, and answers what `respond` says
 * (200 by default; a delay simulates a slow endpoint).
 */
export class WebhookReceiver {
  readonly deliveries: ReceivedDelivery[] = [];
  /** Requests that arrived (counted before the answer, which may be delayed). */
  arrived = 0;
  /** Secrets a delivery may be signed with (set after PUT /webhook). */
  secrets: string[] = [];
  respond: (d: Omit<ReceivedDelivery, 'status' | 'at' | 'startedAt' | 'endedAt'>) => number = () => 200;
  delayMs = 0;
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(path = '/hooks'): Promise<WebhookReceiver> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}${path}`);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void receiver.handle(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    return receiver;
  }

  /**
   * Starts a receiver and makes it the gateway's webhook (`PUT /webhook` through `stack`), knowing
   * the secret the deliveries are signed with; a refused PUT fails the start with its answer.
   */
  static async startFor(stack: {
    api<T>(method: string, pathAndQuery: string, body?: unknown): Promise<{ status: number; body: T }>;
  }): Promise<WebhookReceiver> {
    const receiver = await WebhookReceiver.start();
    const set = await stack.api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    if (set.status !== 200) {
      await receiver.close();
      throw new Error(`PUT /webhook answered ${set.status}: ${JSON.stringify(set.body)}`);
    }
    receiver.secrets = [set.body.data.secret];
    return receiver;
  }

  private async handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): Promise<void> {
    const startedAt = preciseNow();
    this.arrived++;
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    let verifiedWith: string | undefined;
    for (const secret of this.secrets) {
      try {
        new Webhook(secret).verify(raw, headers);
        verifiedWith = secret;
        break;
      } catch {
        // not this one
      }
    }
    const seen = {
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
      raw,
      body: JSON.parse(raw) as ReceivedDelivery['body'],
      verifiedWith,
    };
    const status = this.respond(seen);
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    const endedAt = preciseNow();
    this.deliveries.push({ ...seen, status, at: Date.now(), startedAt, endedAt });
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  }

  /** Deliveries answered 2xx (what the receiver "processed"). */
  accepted(): ReceivedDelivery[] {
    return this.deliveries.filter((d) => d.status >= 200 && d.status < 300);
  }

  /** Accepted deliveries of one type, optionally filtered by their data. */
  events(type: string, where: (data: Record<string, unknown>) => boolean = () => true): ReceivedDelivery[] {
    return this.accepted().filter((d) => d.body.type === type && where(d.body.data));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Wall-clock milliseconds with the monotonic clock's precision. */
function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}
