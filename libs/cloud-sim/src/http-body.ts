/** Reading request bodies with a bound, and answering JSON. */
import type { IncomingMessage, ServerResponse } from 'node:http';

export class BodyTooLarge extends Error {}

/**
 * The request's body, at most `max` bytes. Past it, rejects with BodyTooLarge at once and keeps
 * draining what the client still sends (so it reads the answer) up to 4 × max, then cuts the
 * connection.
 */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const tooLarge = () => {
      over = true;
      chunks.length = 0;
      reject(new BodyTooLarge());
    };
    if (Number.isFinite(declared) && declared > max) tooLarge();
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (over) {
        if (size > 4 * max) req.destroy();
        return;
      }
      if (size > max) tooLarge();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (!over) reject(err);
    });
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, close = false): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(text);
}

/** UTF-8 text, or undefined when the bytes are not valid UTF-8. */
export function utf8(body: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return undefined;
  }
}
