import net from 'node:net';

/** Whether something accepts TCP connections at host:port. */
export function canConnect(host, port) {
  return new Promise((resolve) => {
    const sock = net.connect(port, host);
    sock.setTimeout(1000);
    sock.once('connect', () => (sock.end(), resolve(true)));
    sock.once('error', () => resolve(false));
    sock.once('timeout', () => (sock.destroy(), resolve(false)));
  });
}

/** Polls `check` until it is true; throws after `timeoutMs`. */
export async function waitUntil(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}
