import net from 'node:net';

export interface RawResult {
  /** Status of the first response, or 0 when none arrived. */
  status: number;
  headers: Record<string, string>;
  /** The first response's body (by Content-Length), parsed as JSON when it is JSON. */
  body: unknown;
  /** Milliseconds from the first byte written until the first response was complete. */
  answeredMs: number;
  /** Milliseconds from the first byte written until the server closed the connection (-1: it did not). */
  closedMs: number;
  /** Everything the server sent. */
  raw: string;
}

export type RawPart = string | Buffer | { pauseMs: number };

export interface RawOptions {
  /** Longest wait for the server to close the connection (default 5 s). */
  waitMs?: number;
  /** Stop as soon as the first response is complete, without waiting for the close. */
  untilAnswered?: boolean;
}

/**
 * Talks HTTP by hand over one TCP connection: writes `parts` (with pauses between them, as a slow
 * or broken client would), and reads until the server closes the connection or `waitMs` passes.
 * Write errors after the server closed are expected (a refused upload) and ignored.
 */
export async function rawRequest(
  url: string,
  parts: RawPart[],
  { waitMs = 5000, untilAnswered = false }: RawOptions = {},
): Promise<RawResult> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const started = performance.now();
  let raw = Buffer.alloc(0);
  let answeredMs = -1;
  let closedMs = -1;
  let answered: () => void = () => undefined;
  const result = () => parse(raw.toString('latin1'));
  socket.on('data', (d: Buffer) => {
    raw = Buffer.concat([raw, d]);
    if (answeredMs < 0 && result().complete) {
      answeredMs = performance.now() - started;
      if (untilAnswered) answered();
    }
  });
  const closed = new Promise<void>((resolve) => {
    answered = resolve;
    socket.once('close', () => {
      closedMs = performance.now() - started;
      resolve();
    });
  });
  void (async () => {
    for (const part of parts) {
      if (socket.destroyed) return;
      if (typeof part === 'object' && 'pauseMs' in part)
        await new Promise((r) => setTimeout(r, part.pauseMs));
      else socket.write(part);
    }
  })();
  await Promise.race([closed, new Promise((r) => setTimeout(r, waitMs))]);
  socket.destroy();
  const { status, headers, body } = result();
  return { status, headers, body, answeredMs, closedMs, raw: raw.toString('latin1') };
}

function parse(text: string): {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  complete: boolean;
} {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: undefined, complete: false };
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const bodyText = Buffer.from(text.slice(end + 4), 'latin1')
    .subarray(0, length)
    .toString('utf8');
  let body: unknown = bodyText;
  try {
    body = JSON.parse(bodyText);
  } catch {
    // not JSON: left as text for the assertion to show
  }
  const complete = Buffer.byteLength(text.slice(end + 4), 'latin1') >= length;
  return { status: Number(statusLine?.split(' ')[1] ?? 0), headers, body, complete };
}

/** A request head (request line and headers) for `rawRequest`. */
export function head(method: string, path: string, headers: Record<string, string | number> = {}): string {
  const lines = Object.entries({ host: 'localhost', ...headers }).map(([k, v]) => `${k}: ${v}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}
