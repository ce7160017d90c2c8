import net from 'node:net';
import { freePort } from './net.js';

/**
 * What the proxy does to the traffic it carries:
 * - `pass`: forwards both ways at once (plus `latencyMs`, if set);
 * - `blackhole`: a link whose packets vanish: nothing is read or forwarded either way and no
 *   connection is closed; what the peers wrote waits in the kernel's buffers, as TCP
 *   retransmissions would hold it, and flows again when the link heals (`pass`). A connection
 *   made meanwhile is accepted but not carried on until then (a SYN that goes unanswered);
 * - `reset`: every connection is cut with a TCP reset as it comes, and the open ones at once.
 */
export type FaultMode = 'pass' | 'blackhole' | 'reset';

export interface FaultProxy {
  /** The port the proxy listens on, on 127.0.0.1. */
  port: number;
  /** `url` with its host and port replaced by the proxy's (a redis:// URL, say). */
  via(url: string): string;
  /** Switches every connection, open and new, to `mode`. */
  set(mode: FaultMode): void;
  /**
   * Blackholes the link right after the first chunk a client sends that holds `pattern` reached
   * the server: that command runs, its answer (and everything after) waits for the heal. Resolves
   * when it happened.
   */
  blackholeAfter(pattern: string): Promise<void>;
  readonly mode: FaultMode;
  /** Delay added to each chunk, each way (order kept); 0 for none. */
  latency(ms: number): void;
  /** Connections carried now. */
  readonly connections: number;
  /** Closes the listener and every connection. */
  stop(): Promise<void>;
}

interface Link {
  client: net.Socket;
  server?: net.Socket;
  /** Set while the link waits for a blackhole to heal before connecting upstream. */
  pending: boolean;
}

/**
 * A userspace TCP proxy on 127.0.0.1 in front of `target` (also on 127.0.0.0/8), whose faults a
 * test switches on and off: a blackholed link, a storm of resets, latency. Bounded by the test:
 * it carries only what its clients send and stops with `stop()`.
 */
export async function startFaultProxy(target: { host?: string; port: number }): Promise<FaultProxy> {
  const host = target.host ?? '127.0.0.1';
  if (!host.startsWith('127.') && host !== 'localhost') {
    throw new Error(`fault proxy: targets on 127.0.0.0/8 only, not ${host}`);
  }
  const links = new Set<Link>();
  let mode: FaultMode = 'pass';
  let latencyMs = 0;
  let trigger: { pattern: Buffer; fired: () => void } | undefined;

  /** Forwards `from`'s data to `to`, delayed by the latency in force, in order. */
  const pipe = (from: net.Socket, to: net.Socket, upstream: boolean) => {
    let queue = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      if (upstream && trigger && chunk.includes(trigger.pattern)) {
        const { fired } = trigger;
        trigger = undefined;
        to.write(chunk);
        api.set('blackhole');
        fired();
        return;
      }
      if (latencyMs <= 0) {
        to.write(chunk);
        return;
      }
      const delay = latencyMs;
      queue = queue.then(
        () =>
          new Promise<void>((resolve) =>
            setTimeout(() => {
              if (!to.destroyed) to.write(chunk);
              resolve();
            }, delay),
          ),
      );
    });
    from.on('end', () => void queue.then(() => to.end()));
  };

  const cut = (link: Link) => {
    links.delete(link);
    link.client.resetAndDestroy();
    link.server?.resetAndDestroy();
  };

  const connectUpstream = (link: Link) => {
    link.pending = false;
    const server = net.connect({ host, port: target.port });
    link.server = server;
    server.on('error', () => cut(link));
    link.client.on('error', () => cut(link));
    server.on('close', () => cut(link));
    link.client.on('close', () => cut(link));
    pipe(link.client, server, true);
    pipe(server, link.client, false);
    if (mode === 'blackhole') {
      link.client.pause();
      server.pause();
    } else link.client.resume();
  };

  const listener = net.createServer({ pauseOnConnect: true }, (client) => {
    const link: Link = { client, pending: true };
    links.add(link);
    client.on('error', () => cut(link));
    if (mode === 'reset') cut(link);
    else if (mode === 'pass') connectUpstream(link);
    // blackhole: accepted, carried once the link heals
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(port, '127.0.0.1', () => resolve());
  });

  const api: FaultProxy = {
    port,
    blackholeAfter(pattern: string) {
      return new Promise<void>((fired) => (trigger = { pattern: Buffer.from(pattern), fired }));
    },
    via(url: string) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    set(next: FaultMode) {
      mode = next;
      for (const link of [...links]) {
        if (next === 'reset') cut(link);
        else if (next === 'blackhole') {
          link.client.pause();
          link.server?.pause();
        } else if (link.pending) connectUpstream(link);
        else {
          link.client.resume();
          link.server?.resume();
        }
      }
    },
    get mode() {
      return mode;
    },
    latency(ms: number) {
      latencyMs = Math.max(0, ms);
    },
    get connections() {
      return links.size;
    },
    async stop() {
      trigger = undefined;
      for (const link of [...links]) cut(link);
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
  return api;
}
