/**
 * The round-trips bench's tap (round-trips.bench.ts): a TCP proxy on 127.0.0.1 in front of a Redis
 * (or of a fault proxy in front of one) that reads the RESP both ways as it forwards it. Each
 * command a client writes is logged with the time it reached the tap (the client's send), and
 * matched to its reply (replies come back in order on a connection) with the time the reply was
 * handed to the client. A connection that subscribes stops being matched: its pushes are logged as
 * replies to nothing.
 *
 * It can add latency itself (`latency(ms)`): each chunk, each way, is forwarded `ms` after it came,
 * the order kept — a link whose trips take `ms` longer, with no limit on what is in flight. (The
 * test kit's fault proxy adds its latency one chunk after another: a chunk waits for the one ahead
 * of it to be delayed first, so N chunks written at once on one connection arrive N × `ms` later.)
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import { freePort } from '@mgw/testing';

/** Wall-clock time in ms with a fraction (comparable with another process's `Date.now()`). */
export const nowMs = (): number => performance.timeOrigin + performance.now();

/** One command a client sent through the tap. */
export interface TappedCommand {
  /** The connection's number (1, 2, … in the order they connected). */
  conn: number;
  /** The command's name, upper case (`EVALSHA`, `HGETALL`, `CLIENT`…). */
  name: string;
  /** Its first arguments after the name (at most 3, each cut at 200 characters). */
  args: string[];
  /** The SHA-1 of the script an EVALSHA runs, an EVAL or a SCRIPT LOAD carries. */
  sha?: string;
  /** When the client wrote it (reached the tap). */
  sentAt: number;
  /** When its reply was handed to the client (none yet, or a subscribed connection's). */
  answeredAt?: number;
}

/** One reply handed to a client, and the command it answered (none on a subscribed connection). */
export interface TappedReply {
  conn: number;
  at: number;
  answers?: TappedCommand;
}

export interface TapConnection {
  id: number;
  /** Its name, when the client gave one (CLIENT SETNAME). */
  name?: string;
  subscriber: boolean;
}

const CRLF = Buffer.from('\r\n');
const KEPT_ARGS = 3;
const ARG_CHARS = 200;

/**
 * Where the RESP value at `pos` ends (the offset after it), or -1 when `buf` does not hold all of
 * it yet. RESP2 and RESP3 types.
 */
export function skipValue(buf: Buffer, pos: number): number {
  if (pos >= buf.length) return -1;
  const type = buf[pos];
  const eol = buf.indexOf(CRLF, pos);
  if (eol < 0) return -1;
  const after = eol + 2;
  switch (type) {
    case 0x24: // $ bulk string
    case 0x21: // ! bulk error
    case 0x3d: {
      // = verbatim string
      const len = Number(buf.toString('latin1', pos + 1, eol));
      if (len < 0) return after;
      const end = after + len + 2;
      return end <= buf.length ? end : -1;
    }
    case 0x2a: // * array
    case 0x7e: // ~ set
    case 0x3e: // > push
    case 0x25: // % map
    case 0x7c: {
      // | attribute (followed by the value it describes)
      let n = Number(buf.toString('latin1', pos + 1, eol));
      if (n < 0) return after;
      if (type === 0x25 || type === 0x7c) n *= 2;
      let p = after;
      for (let i = 0; i < n; i++) {
        p = skipValue(buf, p);
        if (p < 0) return -1;
      }
      return type === 0x7c ? skipValue(buf, p) : p;
    }
    default: // + - : _ , # ( : one line
      return after;
  }
}

/**
 * The command at `pos` (a RESP array of bulk strings, or an inline command): its name, its first
 * arguments, the SHA-1 of the script it names or carries, and where it ends; undefined when `buf`
 * does not hold all of it yet.
 */
export function readCommand(
  buf: Buffer,
  pos: number,
): { end: number; name: string; args: string[]; sha?: string } | undefined {
  if (pos >= buf.length) return undefined;
  const eol = buf.indexOf(CRLF, pos);
  if (eol < 0) return undefined;
  if (buf[pos] !== 0x2a) {
    const words = buf.toString('utf8', pos, eol).trim().split(/\s+/);
    return { end: eol + 2, name: (words[0] ?? '').toUpperCase(), args: words.slice(1, 1 + KEPT_ARGS) };
  }
  const n = Number(buf.toString('latin1', pos + 1, eol));
  let p = eol + 2;
  const parts: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const head = buf.indexOf(CRLF, p);
    if (head < 0) return undefined;
    const len = Number(buf.toString('latin1', p + 1, head));
    const start = head + 2;
    if (start + len + 2 > buf.length) return undefined;
    if (i <= KEPT_ARGS) parts.push(buf.subarray(start, start + len));
    p = start + len + 2;
  }
  const name = (parts[0]?.toString('latin1') ?? '').toUpperCase();
  const args = parts.slice(1);
  const sub = args[0]?.toString('latin1').toUpperCase();
  const sha =
    name === 'EVALSHA' || name === 'EVALSHA_RO'
      ? args[0]?.toString('latin1').toLowerCase()
      : name === 'EVAL' || name === 'EVAL_RO'
        ? sha1(args[0])
        : name === 'SCRIPT' && sub === 'LOAD'
          ? sha1(args[1])
          : undefined;
  return {
    end: p,
    name,
    args: args.map((a) => a.toString('utf8', 0, Math.min(a.length, ARG_CHARS))),
    ...(sha ? { sha } : {}),
  };
}

const sha1 = (b: Buffer | undefined) => (b ? createHash('sha1').update(b).digest('hex') : undefined);

/** Forwards chunks `delay()` ms after each came, in order (a delay that shrinks never reorders). */
class DelayLine {
  private readonly queue: { at: number; chunk: Buffer }[] = [];
  private last = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (chunk: Buffer) => void,
    private readonly delay: () => number,
  ) {}

  push(chunk: Buffer): void {
    const now = nowMs();
    const at = Math.max(now + this.delay(), this.last);
    this.last = at;
    if (this.queue.length === 0 && at <= now) return this.write(chunk);
    this.queue.push({ at, chunk });
    this.arm();
  }

  private arm(): void {
    if (this.timer || this.queue.length === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        const now = nowMs();
        // Node's timers have a millisecond's grain: half a millisecond early is on time.
        while (this.queue.length && this.queue[0]!.at <= now + 0.5) this.write(this.queue.shift()!.chunk);
        this.arm();
      },
      Math.max(0, this.queue[0]!.at - nowMs()),
    );
  }
}

interface Link extends TapConnection {
  client: net.Socket;
  server: net.Socket;
  up: Buffer;
  down: Buffer;
  pending: TappedCommand[];
}

export class RespTap {
  /** Every command sent through the tap, in the order they came. */
  readonly commands: TappedCommand[] = [];
  /** Every reply handed to a client, in order. */
  readonly replies: TappedReply[] = [];
  readonly connections: TapConnection[] = [];
  private latencyMs = 0;
  private readonly links = new Set<Link>();

  private constructor(
    private readonly listener: net.Server,
    readonly port: number,
  ) {}

  /** Starts the tap on a free port of 127.0.0.1, in front of `target` (on 127.0.0.1). */
  static async start(target: { port: number }): Promise<RespTap> {
    const port = await freePort();
    const listener = net.createServer({ noDelay: true });
    const tap = new RespTap(listener, port);
    listener.on('connection', (client) => tap.carry(client, target.port));
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(port, '127.0.0.1', () => resolve());
    });
    return tap;
  }

  /** `url` (redis://…) with its host and port replaced by the tap's. */
  via(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Delay added to each chunk, each way, from the time it came (0: none). */
  latency(ms: number): void {
    this.latencyMs = Math.max(0, ms);
  }

  /** When the last command came through (0: none yet). */
  get lastCommandAt(): number {
    return this.commands.at(-1)?.sentAt ?? 0;
  }

  /** The connection a command or reply was on. */
  connection(id: number): TapConnection | undefined {
    return this.connections[id - 1];
  }

  async stop(): Promise<void> {
    for (const link of this.links) {
      link.client.destroy();
      link.server.destroy();
    }
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }

  private carry(client: net.Socket, targetPort: number): void {
    const server = net.connect({ host: '127.0.0.1', port: targetPort, noDelay: true });
    const link: Link = {
      id: this.connections.length + 1,
      subscriber: false,
      client,
      server,
      up: Buffer.alloc(0),
      down: Buffer.alloc(0),
      pending: [],
    };
    this.connections.push(link);
    this.links.add(link);
    const delay = () => this.latencyMs;
    const upstream = new DelayLine((chunk) => server.destroyed || server.write(chunk), delay);
    const downstream = new DelayLine((chunk) => {
      if (client.destroyed) return;
      this.readReplies(link, chunk);
      client.write(chunk);
    }, delay);
    client.on('data', (chunk: Buffer) => {
      this.readCommands(link, chunk);
      upstream.push(chunk);
    });
    server.on('data', (chunk: Buffer) => downstream.push(chunk));
    const close = () => {
      this.links.delete(link);
      client.destroy();
      server.destroy();
    };
    for (const socket of [client, server]) {
      socket.on('error', close);
      socket.on('close', close);
    }
  }

  private readCommands(link: Link, chunk: Buffer): void {
    const at = nowMs();
    link.up = link.up.length ? Buffer.concat([link.up, chunk]) : chunk;
    let pos = 0;
    for (let c = readCommand(link.up, pos); c; c = readCommand(link.up, pos)) {
      pos = c.end;
      const command: TappedCommand = {
        conn: link.id,
        name: c.name,
        args: c.args,
        ...(c.sha ? { sha: c.sha } : {}),
        sentAt: at,
      };
      this.commands.push(command);
      if (c.name === 'CLIENT' && c.args[0]?.toUpperCase() === 'SETNAME') link.name = c.args[1];
      if (/^[PS]?SUBSCRIBE$/.test(c.name)) link.subscriber = true;
      if (!link.subscriber) link.pending.push(command);
    }
    link.up = link.up.subarray(pos);
  }

  private readReplies(link: Link, chunk: Buffer): void {
    const at = nowMs();
    link.down = link.down.length ? Buffer.concat([link.down, chunk]) : chunk;
    let pos = 0;
    for (let end = skipValue(link.down, pos); end >= 0; end = skipValue(link.down, pos)) {
      pos = end;
      // A subscribed connection's commands from before it subscribed are answered first.
      const answers = link.pending.shift();
      if (answers) answers.answeredAt = at;
      this.replies.push({ conn: link.id, at, ...(answers ? { answers } : {}) });
    }
    link.down = link.down.subarray(pos);
  }
}
