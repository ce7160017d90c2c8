import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * A free TCP port on 127.0.0.1, free when this resolves. It is drawn below the kernel's ephemeral
 * range (`ip_local_port_range`), where the OS would put it for `listen(0)`: every outgoing
 * connection of every process here takes its local port from that range too, so a port the OS
 * picked could be taken by some client's socket before the service we start binds it (a CI run
 * failed on `EADDRINUSE` so). Below the range only another `freePort` can collide, and it probes;
 * but a probe says nothing of a port another caller drew and has not bound yet (a service still
 * starting). So this process never hands out a port twice, and each parallel mocha worker draws
 * from a slice of its own (in a CI run an API's port was also another service's metrics port:
 * that service's `/readyz` answered for the API, which could not bind it, and its 404s after).
 */
export async function freePort(): Promise<number> {
  const [low, high] = portSlice();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || BLOCKED_BY_FETCH.has(port)) continue;
    // Taken before the probe: a concurrent call must not draw it while this one probes.
    handOut(port);
    if (await canListen(port)) return port;
  }
  return handOut(await listenOn(0));
}

/**
 * The ports fetch refuses to connect to (the Fetch standard's "bad ports", in undici and
 * Chromium alike: `fetch failed (bad port)`); a CI-like run drew 10080 for an API once.
 */
export const BLOCKED_BY_FETCH: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** The ports this process handed out, oldest first (the last HANDED_OUT_KEPT are never drawn again). */
const handedOut = new Set<number>();
const HANDED_OUT_KEPT = 1_000;
/** How many slices the range is cut into for parallel workers (mocha's ids grow when a worker is replaced). */
const WORKER_SLICES = 8;

function handOut(port: number): number {
  handedOut.add(port);
  if (handedOut.size > HANDED_OUT_KEPT) handedOut.delete(handedOut.values().next().value!);
  return port;
}

/** This process's part of the range below the ephemeral one: its mocha worker's slice, else all of it. */
function portSlice(): [number, number] {
  const [low, high] = belowEphemeral();
  const worker = Number(process.env.MOCHA_WORKER_ID ?? NaN);
  if (!Number.isInteger(worker) || worker < 0) return [low, high];
  const size = Math.floor((high - low) / WORKER_SLICES);
  const start = low + (worker % WORKER_SLICES) * size;
  return [start, start + size];
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

/** POSTs `body` to `url` with `token`; answers whether it was accepted (202), false on a network error. */
export const acceptedPost = (url: string, token: string, body: string): Promise<boolean> =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
  }).then(
    (r) => r.status === 202,
    () => false,
  );
