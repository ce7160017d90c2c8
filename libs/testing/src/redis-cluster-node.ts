/**
 * The processes behind `redis-cluster.ts`: one `redis-server --cluster-enabled yes` per node, an
 * admin connection to it, and what its CLUSTER NODES / INFO replies say.
 *
 * Every node gets a watchdog (`sh` blocked reading a pipe from this process) that SIGKILLs the
 * node when the pipe closes, i.e. when this process dies in any way, even by SIGKILL. A normal
 * exit (mocha's `--exit` included) also kills the nodes and removes their dirs, synchronously.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './net.js';
import { localServerArgs } from './redis-server.js';

export interface NodeSettings {
  nodeTimeoutMs: number;
  persistence: boolean;
}

export interface LiveNode {
  port: number;
  role: 'master' | 'replica';
  pid: number;
  alive: boolean;
  busPort: number;
  dir: string;
  child: ChildProcess;
  watchdog: ChildProcess;
  exited: Promise<unknown>;
  killedAt?: number;
  slots: [number, number][];
  admin?: Redis;
}

const exitProcs = new Set<{ child: ChildProcess; watchdog: ChildProcess }>();
const exitDirs = new Set<string>();
let exitHookInstalled = false;

/**
 * What a normal exit of this process (mocha's `--exit` included) kills and removes, synchronously
 * (the watchdogs cover a death by SIGKILL): add a process with its watchdog, or a dir; delete
 * what was stopped and removed cleanly.
 */
export function leftAtExit(): { procs: typeof exitProcs; dirs: typeof exitDirs } {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const p of exitProcs) {
        // ChildProcess.kill is synchronous and skips a process already reaped.
        p.watchdog.kill('SIGKILL');
        p.child.kill('SIGKILL');
      }
      for (const dir of exitDirs) rmSync(dir, { recursive: true, force: true });
    });
  }
  return { procs: exitProcs, dirs: exitDirs };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Distinct free ports (each drawn as `freePort` draws it, below the ephemeral range). */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/**
 * Spawns a server process with its watchdog: a pipe from this process whose EOF (this process
 * died, however) makes the watchdog kill the server — and remove `removeDir`, when given.
 */
export function spawnWatched(
  command: string,
  args: string[],
  removeDir?: string,
): { child: ChildProcess; watchdog: ChildProcess; exited: Promise<unknown> } {
  const child = spawn(command, args, { stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  const kill = 'read _; kill -9 "$1" 2>/dev/null';
  const [script, dirArg] =
    removeDir === undefined ? [kill, []] : [`${kill}; sleep 0.2; rm -rf "$2"`, [removeDir]];
  const watchdog = spawn('sh', ['-c', script, 'sh', String(child.pid ?? 0), ...dirArg], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  return { child, watchdog, exited };
}

export async function spawnNode(port: number, busPort: number, opts: NodeSettings): Promise<LiveNode> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `mgw-cluster-${port}-`));
  const persistence = opts.persistence
    ? ['--appendonly', 'yes', '--appendfsync', 'everysec']
    : ['--appendonly', 'no'];
  // cluster-port: the default bus port (port + 10000) may be taken or beyond 65535.
  // repl-diskless-sync-delay 0: the default waits 5 s for more replicas before a full sync.
  const args = [
    ...localServerArgs(port, dir),
    ...['--logfile', path.join(dir, 'redis.log')],
    ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-port', String(busPort)],
    ...['--cluster-node-timeout', String(opts.nodeTimeoutMs), '--cluster-announce-ip', '127.0.0.1'],
    ...['--cluster-allow-replica-migration', 'no', '--save', '', ...persistence],
    ...['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'],
  ];
  const { child, watchdog, exited } = spawnWatched('redis-server', args, dir);
  const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
  const node: LiveNode = {
    port,
    busPort,
    dir,
    child,
    watchdog,
    exited,
    pid: child.pid ?? 0,
    role: 'master',
    alive: true,
    slots: [],
  };
  const { procs, dirs } = leftAtExit();
  procs.add(node);
  dirs.add(dir);
  try {
    await Promise.race([spawnError, waitForListen(node)]);
  } catch (err) {
    watchdog.kill('SIGKILL');
    child.kill('SIGKILL');
    await exited;
    await rm(dir, { recursive: true, force: true });
    procs.delete(node);
    dirs.delete(dir);
    throw err;
  }
  return node;
}

async function waitForListen(node: LiveNode): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20)) {
    if (node.child.exitCode !== null) break;
    const up = await new Promise<boolean>((resolve) => {
      const sock = net.connect(node.port, '127.0.0.1');
      sock.once('connect', () => {
        sock.end();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (up) return;
  }
  const log = await readFile(path.join(node.dir, 'redis.log'), 'utf8').catch(() => '');
  throw new Error(`redis-server on ${node.port} did not start:\n${log.slice(-2000)}`);
}

/** A connection for the test kit's own checks of a local node: it never retries, and gives up within a second. */
export function adminConnection(port: number, password?: string): Redis {
  return new Redis({
    host: '127.0.0.1',
    port,
    ...(password === undefined ? {} : { password }),
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    // A paused node must not hang the polls that ask it.
    commandTimeout: 1000,
  }).on('error', () => {});
}

export function admin(node: LiveNode): Redis {
  node.admin ??= adminConnection(node.port);
  return node.admin;
}

/** Kills the node (if alive) and its watchdog, then removes its dir. */
export async function destroyNode(n: LiveNode): Promise<void> {
  n.watchdog.kill('SIGKILL');
  if (n.alive) n.child.kill('SIGKILL');
  n.alive = false;
  n.admin?.disconnect();
  await n.exited;
  await rm(n.dir, { recursive: true, force: true });
  leftAtExit().procs.delete(n);
  leftAtExit().dirs.delete(n.dir);
}

export async function clusterNodes(n: LiveNode): Promise<NodeView[]> {
  return parseNodes((await admin(n).cluster('NODES')) as string);
}

export async function clusterInfo(n: LiveNode): Promise<Record<string, string>> {
  return info((await admin(n).cluster('INFO')) as string);
}

export interface NodeView {
  port: number;
  id: string;
  master: boolean;
  myself: boolean;
  failed: boolean;
  masterId?: string;
  slots: [number, number][];
}

/** Parses CLUSTER NODES: `<id> <ip:port@bus> <flags> <master|-> <ping> <pong> <epoch> <link> <slots…>`. */
export function parseNodes(text: string): NodeView[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, addr, flags, masterId, , , , , ...ranges] = line.split(' ');
      const flagList = flags!.split(',');
      return {
        id: id!,
        port: Number(addr!.split('@')[0]!.split(':')[1]),
        master: flagList.includes('master'),
        myself: flagList.includes('myself'),
        failed: flagList.some((f) => ['fail', 'fail?', 'handshake', 'noaddr'].includes(f)),
        masterId: masterId === '-' ? undefined : masterId,
        slots: ranges
          .filter((r) => !r.startsWith('['))
          .map((r) => r.split('-').map(Number))
          .map(([a, b]) => [a!, b ?? a!] as [number, number]),
      };
    });
}

export function info(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((l) => l.includes(':'))
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)]),
  );
}

export async function pollUntil(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}
