import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

/**
 * An HTTP proxy in front of an SQS-protocol server that answers the actions in `deny` as AWS
 * answers a call the caller's policy does not allow, and passes every other request through.
 * fauxqs stores a queue's `Policy` but enforces none, so a queue that answers GetQueueAttributes
 * but refuses SendMessageBatch (a role without `sqs:SendMessage`, or without
 * `kms:GenerateDataKey` on an encrypted queue) is made here: the SDK (the JSON protocol, which
 * names the action in `X-Amz-Target`) gets AWS's error shape and raises its own `AccessDenied`.
 */
export class SqsDenyProxy {
  /** Actions (`SendMessageBatch`, `GetQueueAttributes`…) answered with AccessDenied. */
  readonly deny = new Set<string>();
  /** How many calls of each action were denied. */
  readonly denied = new Map<string, number>();
  /** How many calls of each action came (denied or passed). */
  readonly calls = new Map<string, number>();

  private readonly server: http.Server;
  /** `http://127.0.0.1:<port>`: the SDK's endpoint (set once listening). */
  endpoint = '';

  private constructor(private readonly target: URL) {
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  /** Listens on a free port of 127.0.0.1, forwarding to `target` (`http://host:port`). */
  static async start(target: string): Promise<SqsDenyProxy> {
    const proxy = new SqsDenyProxy(new URL(target));
    await new Promise<void>((ok) => proxy.server.listen(0, '127.0.0.1', ok));
    proxy.endpoint = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
    return proxy;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const action = String(req.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
    this.calls.set(action, (this.calls.get(action) ?? 0) + 1);
    if (this.deny.has(action)) {
      this.denied.set(action, (this.denied.get(action) ?? 0) + 1);
      const permission = `sqs:${action.replace(/Batch$/, '').toLowerCase()}`;
      req.resume();
      req.on('end', () => {
        const body = JSON.stringify({
          __type: 'com.amazon.coral.service#AccessDeniedException',
          message: `User: arn:aws:iam::000000000000:user/mgw-notifier is not authorized to perform: ${permission} on resource: arn:aws:sqs:us-east-1:000000000000:queue because no identity-based policy allows the ${permission} action`,
        });
        res.writeHead(403, {
          'content-type': 'application/x-amz-json-1.0',
          'x-amzn-requestid': randomUUID(),
          'x-amzn-query-error': 'AccessDenied;Sender',
          'content-length': Buffer.byteLength(body),
        });
        res.end(body);
      });
      return;
    }
    const out = http.request(
      {
        host: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((ok) => this.server.close(() => ok()));
  }
}
