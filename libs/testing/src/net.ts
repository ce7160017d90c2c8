import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * A free TCP port on 127.0.0.1, free when this resolves. It is drawn below the kernel's ephemeral
 * range (`ip_local_port_range`), where the OS would put it for `listen(0)`: every outgoing
 * connection of every process here takes its local port from that range too, so a port the OS
 * picked could be taken by some client's socket before the service we start binds it (a CI run
 * failed on `EADDRINUSE` so). Below the range only another `freePort` can collide, and it probes.
 */
export async function freePort(): Promise<number> {
  const [low, high] = belowEphemeral();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await canListen(port)) return port;
  }
  return listenOn(0);
}

function belowEphemeral(): [number, number] {
  let start = 32768;
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) start = low;
  } catch {
    // Not Linux: the IANA dynamic range starts at 49152; 32768 stays below it as well.
  }
  return start > 12_000 ? [10_000, start] : [start, 65_535];
}

function canListen(port: number): Promise<boolean> {
  return listenOn(port).then(
    () => true,
    () => false,
  );
}

function listenOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      const bound = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(bound));
    });
  });
}

/** Whether something accepts TCP connections at host:port (1 s connect timeout). */
export function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, host);
    sock.setTimeout(1000);
    sock.once('connect', () => {
      sock.end();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
    sock.once('timeout', () => {
      sock.destroy();
      resolve(false);
    });
  });
}

/** Polls `check` until it returns true; bounded, never a fixed sleep. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  { timeoutMs = 20_000, intervalMs = 100, what = 'condition' } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Polls a synchronous probe until it yields a value (20 ms steps); bounded. */
export async function until<T>(
  probe: () => T | undefined | false,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  let value: T | undefined | false;
  await waitFor(() => Boolean((value = probe())), { timeoutMs, intervalMs: 20, what });
  return value as T;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
