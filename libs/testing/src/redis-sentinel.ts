/**
 * A real, throw-away Redis Sentinel setup for tests: a master `redis-server`, replicas of it
 * (`--replicaof`), and three `redis-sentinel` processes watching them, all on free loopback ports,
 * with passwords on the data nodes and on the sentinels (as deployments have them). Like the
 * cluster nodes, every process gets a watchdog that kills it when this process dies, however.
 */
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import {
  adminConnection,
  freePorts,
  info,
  leftAtExit,
  pollUntil,
  spawnWatched,
} from './redis-cluster-node.js';
import { localServerArgs } from './redis-server.js';
import { canConnect } from './net.js';

export interface RedisSentinelOptions {
  /** The master group name the sentinels monitor. @defaultValue 'mymaster' */
  name?: string;
  /** Replicas of the master (a failover needs one). @defaultValue 1 */
  replicas?: number;
  /** `down-after-milliseconds`: how long the master may not answer before it is failed. @defaultValue 1000 */
  downAfterMs?: number;
  /** `failover-timeout`. @defaultValue 5000 */
  failoverTimeoutMs?: number;
  /** @defaultValue 30000 */
  startTimeoutMs?: number;
  /**
   * The sentinels' program: `redis-sentinel`, or `redis-server` in sentinel mode (`--sentinel`).
   * @defaultValue `redis-sentinel` when it is on PATH, else `redis-server`
   */
  sentinelProgram?: 'redis-sentinel' | 'redis-server';
}

export interface SentinelDataNode {
  port: number;
  /** As last seen: at start, and after `waitForNewMaster`. */
  role: 'master' | 'replica';
  alive: boolean;
}

export interface SentinelHandle {
  /** `127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`, for REDIS_SENTINELS. */
  readonly sentinels: string;
  readonly name: string;
  /** The data nodes' `requirepass` (REDIS_URL carries it). */
  readonly password: string;
  /** The sentinels' `requirepass` (REDIS_SENTINEL_PASSWORD). */
  readonly sentinelPassword: string;
  readonly nodes: readonly SentinelDataNode[];
  /** The master's port, as a quorum of live sentinels reports it now. */
  masterPort(): Promise<number>;
  /** `SENTINEL FAILOVER <name>`: a graceful switch to a replica, asked of one sentinel. */
  failover(): Promise<void>;
  /**
   * SIGSTOP / SIGCONT of the sentinel at `index` of `sentinels`: one that accepts connections but
   * never answers (a frozen pod, a black-holed network).
   */
  pauseSentinel(index: number): void;
  resumeSentinel(index: number): void;
  /** Kills a data node (default SIGKILL) and waits for its process to end. */
  killNode(port: number, signal?: NodeJS.Signals): Promise<void>;
  /**
   * Waits until every live sentinel names a master other than `oldMasterPort`, that node says it
   * is master and takes a write, and every other live data node replicates it with its link up.
   */
  waitForNewMaster(oldMasterPort: number, timeoutMs?: number): Promise<{ port: number; ms: number }>;
  /** Kills every process and removes their files; safe to call twice. */
  stop(): Promise<void>;
}

interface Proc {
  port: number;
  kind: 'data' | 'sentinel';
  child: ChildProcess;
  watchdog: ChildProcess;
  exited: Promise<unknown>;
  alive: boolean;
  role: 'master' | 'replica';
  /** A paused sentinel is left out of the checks (it would not answer them). */
  paused?: boolean;
  admin?: Redis;
}

export async function startRedisSentinel(options: RedisSentinelOptions = {}): Promise<SentinelHandle> {
  const opts: Required<RedisSentinelOptions> = {
    name: 'mymaster',
    replicas: 1,
    downAfterMs: 1000,
    failoverTimeoutMs: 5000,
    startTimeoutMs: 30_000,
    sentinelProgram: onPath('redis-sentinel') ? 'redis-sentinel' : 'redis-server',
    ...options,
  };
  const started = Date.now();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-sentinel-'));
  leftAtExit().dirs.add(dir);
  const password = 'data-secret';
  const sentinelPassword = 'sentinel-secret';
  const ports = await freePorts(1 + opts.replicas + 3);
  const [masterPort, ...rest] = ports as [number, ...number[]];
  const replicaPorts = rest.slice(0, opts.replicas);
  const sentinelPorts = rest.slice(opts.replicas);
  const procs: Proc[] = [];
  const handle = makeHandle(procs, dir, opts, password, sentinelPassword, sentinelPorts);
  try {
    // repl-diskless-sync-delay 0: the default waits 5 s for more replicas before a full sync.
    const dataArgs = (port: number) => [
      ...[...localServerArgs(port, dir), '--dbfilename', `${port}.rdb`],
      ...['--logfile', path.join(dir, `redis-${port}.log`), '--save', '', '--appendonly', 'no'],
      ...['--requirepass', password, '--masterauth', password, '--replica-announce-ip', '127.0.0.1'],
      ...['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'],
    ];
    procs.push(await spawnProc('redis-server', dataArgs(masterPort), port(masterPort, 'data'), dir));
    for (const p of replicaPorts) {
      const args = [...dataArgs(p), '--replicaof', '127.0.0.1', String(masterPort)];
      procs.push({ ...(await spawnProc('redis-server', args, port(p, 'data'), dir)), role: 'replica' });
    }
    for (const p of sentinelPorts) {
      const conf = path.join(dir, `sentinel-${p}.conf`);
      // Sentinel rewrites its config file as it learns the topology, so it must be its own file.
      await writeFile(
        conf,
        [
          `port ${p}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `logfile ${path.join(dir, `sentinel-${p}.log`)}`,
          `requirepass ${sentinelPassword}`,
          `sentinel announce-ip 127.0.0.1`,
          `sentinel monitor ${opts.name} 127.0.0.1 ${masterPort} 2`,
          `sentinel auth-pass ${opts.name} ${password}`,
          `sentinel sentinel-pass ${sentinelPassword}`,
          `sentinel down-after-milliseconds ${opts.name} ${opts.downAfterMs}`,
          `sentinel failover-timeout ${opts.name} ${opts.failoverTimeoutMs}`,
          `sentinel parallel-syncs ${opts.name} 1`,
          '',
        ].join('\n'),
      );
      const [command, ...args] = sentinelCommand(conf, opts.sentinelProgram === 'redis-sentinel');
      procs.push(await spawnProc(command!, args, port(p, 'sentinel'), dir));
    }
    const deadline = started + opts.startTimeoutMs;
    // Ready: every replica in sync, and every sentinel sees the replicas and the other sentinels.
    await pollUntil('the replicas in sync', deadline - Date.now(), async () => {
      for (const r of procs.filter((p) => p.kind === 'data' && p.role === 'replica')) {
        const repl = info(await admin(r, password).info('replication'));
        if (repl.master_link_status !== 'up' || repl.master_sync_in_progress !== '0') return false;
      }
      return true;
    });
    await pollUntil(
      'every sentinel to see the replicas and the other sentinels',
      deadline - Date.now(),
      async () => {
        for (const s of procs.filter((p) => p.kind === 'sentinel')) {
          const m = pairs(
            (await admin(s, sentinelPassword).call('SENTINEL', 'MASTER', opts.name)) as string[],
          );
          if (Number(m['num-slaves']) !== opts.replicas || Number(m['num-other-sentinels']) !== 2)
            return false;
        }
        return true;
      },
    );
  } catch (err) {
    const logs = await readLogs(dir);
    await handle.stop();
    throw new Error(`Redis Sentinel did not start: ${(err as Error).message}\n${logs}`);
  }
  return handle;
}

const port = (p: number, kind: Proc['kind']) => ({ port: p, kind });

/**
 * How a sentinel of `conf` is started: `redis-sentinel`, or `redis-server <conf> --sentinel` (the
 * same program in sentinel mode) where Debian's `redis-sentinel` package is not installed — a
 * machine with Redis runs the Sentinel tests without it.
 */
function sentinelCommand(conf: string, viaSentinel: boolean): string[] {
  return viaSentinel ? ['redis-sentinel', conf] : ['redis-server', conf, '--sentinel'];
}

/** Whether `program` is an executable file in one of PATH's folders. */
function onPath(program: string): boolean {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .some((dir) => {
      try {
        accessSync(path.join(dir, program), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

async function spawnProc(
  command: string,
  args: string[],
  { port: p, kind }: { port: number; kind: Proc['kind'] },
  dir: string,
): Promise<Proc> {
  const { child, watchdog, exited } = spawnWatched(command, args);
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const proc: Proc = { port: p, kind, child, watchdog, exited, alive: true, role: 'master' };
  leftAtExit().procs.add(proc);
  for (const deadline = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 20))) {
    if (spawnError || child.exitCode !== null || Date.now() > deadline) {
      watchdog.kill('SIGKILL');
      child.kill('SIGKILL');
      leftAtExit().procs.delete(proc);
      const why = spawnError
        ? spawnError.message
        : child.exitCode !== null
          ? `exited ${child.exitCode}`
          : 'timeout';
      throw new Error(`could not start ${command} on port ${p} (${why}):\n${await readLogs(dir)}`);
    }
    if (await canConnect('127.0.0.1', p)) return proc;
  }
}

async function readLogs(dir: string): Promise<string> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.log'));
  const tails = await Promise.all(
    names.map(
      async (n) => `--- ${n}\n${(await readFile(path.join(dir, n), 'utf8').catch(() => '')).slice(-800)}`,
    ),
  );
  return tails.join('\n');
}

/**
 * An admin connection that never retries; a new one once it closed (Sentinel kills every normal
 * client of a node it promotes or demotes, so that clients ask again where the master is).
 */
function admin(p: Proc, password: string): Redis {
  if (p.admin?.status === 'end') p.admin = undefined;
  p.admin ??= adminConnection(p.port, password);
  return p.admin;
}

/** A flat `[k1, v1, k2, v2, …]` reply as an object. */
function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

function makeHandle(
  procs: Proc[],
  dir: string,
  opts: Required<RedisSentinelOptions>,
  password: string,
  sentinelPassword: string,
  sentinelPorts: number[],
): SentinelHandle {
  const sentinelProcs = () => procs.filter((p) => p.kind === 'sentinel' && p.alive && !p.paused);
  const dataProcs = () => procs.filter((p) => p.kind === 'data');
  const askMaster = async (s: Proc) =>
    Number(
      (
        (await admin(s, sentinelPassword).call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', opts.name)) as string[]
      )[1],
    );
  let stopped = false;
  return {
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    name: opts.name,
    password,
    sentinelPassword,
    get nodes() {
      return dataProcs().map(({ port: p, role, alive }) => ({ port: p, role, alive }));
    },
    async masterPort() {
      const answers = await Promise.all(sentinelProcs().map((s) => askMaster(s).catch(() => 0)));
      const counts = new Map<number, number>();
      for (const a of answers) if (a) counts.set(a, (counts.get(a) ?? 0) + 1);
      const [best] = [...counts].sort((a, b) => b[1] - a[1]);
      if (!best || best[1] < 2)
        throw new Error(`no quorum of sentinels names a master: ${answers.join(', ')}`);
      return best[0];
    },
    async failover() {
      const reply = await admin(sentinelProcs()[0]!, sentinelPassword).call(
        'SENTINEL',
        'FAILOVER',
        opts.name,
      );
      if (reply !== 'OK') throw new Error(`SENTINEL FAILOVER answered ${String(reply)}`);
    },
    pauseSentinel(index) {
      const s = procs.filter((p) => p.kind === 'sentinel')[index]!;
      s.child.kill('SIGSTOP');
      s.paused = true;
    },
    resumeSentinel(index) {
      const s = procs.filter((p) => p.kind === 'sentinel')[index]!;
      s.child.kill('SIGCONT');
      s.paused = false;
    },
    async killNode(p, signal = 'SIGKILL') {
      const proc = dataProcs().find((d) => d.port === p);
      if (!proc) throw new Error(`no data node on port ${p}`);
      proc.child.kill(signal);
      await proc.exited;
      proc.alive = false;
      proc.admin?.disconnect();
    },
    async waitForNewMaster(oldMasterPort, timeoutMs = 30_000) {
      const from = Date.now();
      let newPort = 0;
      let seen = 'nothing yet';
      const check = async (): Promise<boolean> => {
        const named = await Promise.all(sentinelProcs().map(askMaster));
        newPort = named[0]!;
        seen = `sentinels name ${named.join(', ')}`;
        if (newPort === oldMasterPort || named.some((n) => n !== newPort)) return false;
        const master = dataProcs().find((d) => d.port === newPort && d.alive);
        if (!master) return false;
        const role = info(await admin(master, password).info('replication')).role;
        seen += `; ${newPort} says ${role}`;
        if (role !== 'master') return false;
        if ((await admin(master, password).set('sentinel-kit:probe', '1')) !== 'OK') return false;
        for (const other of dataProcs().filter((d) => d.alive && d !== master)) {
          const repl = info(await admin(other, password).info('replication'));
          seen += `; ${other.port} says ${repl.role} of ${repl.master_port} (link ${repl.master_link_status})`;
          if (repl.role !== 'slave' || Number(repl.master_port) !== newPort) return false;
          if (repl.master_link_status !== 'up' || repl.master_sync_in_progress !== '0') return false;
        }
        return true;
      };
      try {
        await pollUntil(`a new master in place of ${oldMasterPort}`, timeoutMs, () =>
          check().catch((err: Error) => {
            seen += `; ${err.message}`;
            return false;
          }),
        );
      } catch (err) {
        throw new Error(`${(err as Error).message} (last seen: ${seen})`);
      }
      for (const d of dataProcs()) d.role = d.port === newPort ? 'master' : 'replica';
      return { port: newPort, ms: Date.now() - from };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const p of procs) {
        p.admin?.disconnect();
        p.watchdog.kill('SIGKILL');
        if (p.alive) p.child.kill('SIGKILL');
        p.alive = false;
      }
      await Promise.all(procs.map((p) => p.exited));
      for (const p of procs) leftAtExit().procs.delete(p);
      await rm(dir, { recursive: true, force: true });
      leftAtExit().dirs.delete(dir);
    },
  };
}
