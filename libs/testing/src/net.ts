import net from 'node:net';

/** A free TCP port on 127.0.0.1 (the OS picks it; it is free when this resolves). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
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
