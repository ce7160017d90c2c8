import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PhoneNumberConfig } from '../src/index.js';

export const NUMBER: PhoneNumberConfig = {
  id: '1001',
  wabaId: '2001',
  displayPhoneNumber: '+1 555-010-0001',
  verifiedName: 'Test Shop',
  accessToken: 'token-1',
  appSecret: 'secret-1',
  appId: 'app-1',
};
export const USER = '15550102000';

export interface Received {
  method: string;
  url: string;
  body: string;
  signature: string | undefined;
  /** Whether the signature is the HMAC-SHA256 of the raw body with the app secret, computed here. */
  signed: boolean;
}

/**
 * A webhook endpoint on 127.0.0.1: answers the verification GET (echoes the challenge when the
 * verify token matches), records each POST and answers it with the next status of `statuses`
 * (then 200).
 */
export async function startReceiver(opts: { verifyToken: string; appSecret: string; statuses?: number[] }) {
  const received: Received[] = [];
  const statuses = [...(opts.statuses ?? [])];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const signature = req.headers['x-hub-signature-256'] as string | undefined;
      const expected = `sha256=${createHmac('sha256', opts.appSecret).update(raw).digest('hex')}`;
      received.push({
        method: req.method!,
        url: req.url!,
        body: raw.toString('utf8'),
        signature,
        signed: signature === expected,
      });
      if (req.method === 'GET') {
        const q = new URL(req.url!, 'http://x').searchParams;
        if (q.get('hub.mode') === 'subscribe' && q.get('hub.verify_token') === opts.verifyToken) {
          res.writeHead(200, { 'content-type': 'text/plain' }).end(q.get('hub.challenge'));
        } else res.writeHead(403).end();
        return;
      }
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    posts: () => received.filter((r) => r.method === 'POST'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls until `check` returns a value (bounded). */
export async function until<T>(
  check: () => T | undefined | false,
  ms = 5_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
