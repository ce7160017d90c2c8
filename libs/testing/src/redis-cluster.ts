/**
 * A real, throw-away Redis Cluster for tests: `redis-server --cluster-enabled yes` on free
 * loopback ports, joined with `redis-cli --cluster create`. Standalone on purpose (node builtins
 * and ioredis only) so it can move into a test-kit package unchanged.
 * Nodes never outlive the test process (see `redis-cluster-node.ts`).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  admin,
  clusterInfo,
  clusterNodes,
  destroyNode,
  freePorts,
  info,
  pollUntil,
  spawnNode,
  type LiveNode,
  type NodeView,
} from './redis-cluster-node.js';

export interface RedisClusterOptions {
  /** Masters; `redis-cli --cluster create` refuses fewer than 3. @defaultValue 3 */
  masters?: number;
  /** @defaultValue 0 */
  replicasPerMaster?: number;
  /** `cluster-node-timeout`: how long a node may be unreachable before it is failed. @defaultValue 2000 */
  nodeTimeoutMs?: number;
  /** AOF with fsync every second; otherwise nothing is written to disk. @defaultValue false */
  persistence?: boolean;
  /** @defaultValue 30000 */
  startTimeoutMs?: number;
}

export interface ClusterNode {
  port: number;
  /** As last seen: at start, and after `waitForFailover`. */
  role: 'master' | 'replica';
  pid: number;
  alive: boolean;
}

export interface ClusterHandle {
  readonly nodes: readonly ClusterNode[];
  /** `127.0.0.1:p1,127.0.0.1:p2,...`: every node, for REDIS_CLUSTER_NODES. */
  readonly seeds: string;
  /** How long `startRedisCluster` took, in ms. */
  readonly startMs: number;
  /** Port of the master that serves the slot now (asked from a live node). */
  masterForSlot(slot: number): Promise<number>;
  masterForKey(key: string): Promise<number>;
  /** Ports of the replicas of a master, as the cluster sees them now. */
  replicasOf(masterPort: number): Promise<number[]>;
  /** Kills a node (default SIGKILL) and waits for its process to end. */
  killNode(port: number, signal?: NodeJS.Signals): Promise<void>;
  /** SIGSTOP / SIGCONT: a node that neither answers nor replicates, yet keeps its connections. */
  pauseNode(port: number): void;
  resumeNode(port: number): void;
  /** Waits until a replica of the killed master serves its slots and every live node says ok. */
  waitForFailover(
    oldMasterPort: number,
    timeoutMs?: number,
  ): Promise<{ newMasterPort: number; sinceKillMs: number }>;
  /** FLUSHALL on every live master, then waits for their replicas to have it. */
  flushAll(): Promise<void>;
  /** Kills every node and removes their dirs; safe to call twice. */
  stop(): Promise<void>;
}

export const SLOTS = 16384;

/** The cluster slot of a key (CRC16/XMODEM of the key or of its first non-empty `{tag}`). */
export function keySlot(key: string): number {
  let bytes = Buffer.from(key);
  const open = bytes.indexOf('{');
  if (open >= 0) {
    const close = bytes.indexOf('}', open + 1);
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % SLOTS;
}

/**
 * True when the node serves every slot and sees the whole expected topology, and, as a replica,
 * is in sync. redis-cli may return before every node has heard that the replicas are replicas.
 */
async function nodeReady(node: LiveNode, masters: number, replicas: number): Promise<boolean> {
  const ci = await clusterInfo(node);
  if (ci.cluster_state !== 'ok' || Number(ci.cluster_slots_ok) !== SLOTS) return false;
  const view = await clusterNodes(node);
  if (view.length !== masters + replicas || view.some((v) => v.failed)) return false;
  if (view.filter((v) => v.master && v.slots.length).length !== masters) return false;
  if (view.filter((v) => v.masterId).length !== replicas) return false;
  if (view.find((v) => v.myself)?.master) return true;
  const repl = info(await admin(node).info('replication'));
  return repl.master_link_status === 'up' && repl.master_sync_in_progress === '0';
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<ClusterHandle> {
  const opts: Required<RedisClusterOptions> = {
    masters: 3,
    replicasPerMaster: 0,
    nodeTimeoutMs: 2000,
    persistence: false,
    startTimeoutMs: 30_000,
    ...options,
  };
  if (opts.masters < 3) throw new Error('redis-cli --cluster create needs at least 3 masters');
  const started = Date.now();
  const total = opts.masters * (1 + opts.replicasPerMaster);
  const ports = await freePorts(total * 2);
  const settled = await Promise.allSettled(
    Array.from({ length: total }, (_, i) => spawnNode(ports[2 * i]!, ports[2 * i + 1]!, opts)),
  );
  const nodes = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const handle = makeHandle(nodes);
  try {
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const addrs = nodes.map((n) => `127.0.0.1:${n.port}`);
    await promisify(execFile)(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...addrs,
        '--cluster-replicas',
        String(opts.replicasPerMaster),
        '--cluster-yes',
      ],
      { timeout: opts.startTimeoutMs },
    );
    const deadline = started + opts.startTimeoutMs;
    await pollUntil('every node to report cluster_state:ok', deadline - Date.now(), async () =>
      (await Promise.all(nodes.map((n) => nodeReady(n, opts.masters, total - opts.masters)))).every(Boolean),
    );
    await refreshRoles(nodes);
  } catch (err) {
    await handle.stop();
    throw err;
  }
  return Object.assign(handle, { startMs: Date.now() - started });
}

async function clusterView(nodes: LiveNode[]): Promise<NodeView[]> {
  for (const n of nodes.filter((x) => x.alive)) {
    const view = await clusterNodes(n).catch(() => undefined);
    if (view) return view;
  }
  throw new Error('no live node answers CLUSTER NODES');
}

async function refreshRoles(nodes: LiveNode[]): Promise<void> {
  const view = await clusterView(nodes);
  for (const n of nodes) {
    const v = view.find((x) => x.port === n.port);
    if (!v || !n.alive) continue;
    n.role = v.master ? 'master' : 'replica';
    n.slots = v.slots;
  }
}

function makeHandle(nodes: LiveNode[]): ClusterHandle {
  const byPort = (port: number): LiveNode => {
    const n = nodes.find((x) => x.port === port);
    if (!n) throw new Error(`no node on port ${port}`);
    return n;
  };
  const masterForSlot = async (slot: number): Promise<number> => {
    const owner = (await clusterView(nodes)).find(
      (v) => v.master && !v.failed && v.slots.some(([a, b]) => slot >= a && slot <= b),
    );
    if (!owner) throw new Error(`no live master serves slot ${slot}`);
    return owner.port;
  };
  const replicasOf = async (masterPort: number): Promise<number[]> => {
    const view = await clusterView(nodes);
    const id = view.find((v) => v.port === masterPort)?.id;
    return view.filter((v) => v.masterId === id).map((v) => v.port);
  };
  let stopped = false;
  return {
    nodes,
    seeds: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    startMs: 0,
    masterForSlot,
    masterForKey: (key) => masterForSlot(keySlot(key)),
    replicasOf,
    async killNode(port, signal = 'SIGKILL') {
      const n = byPort(port);
      n.killedAt = Date.now();
      n.child.kill(signal);
      await n.exited;
      n.alive = false;
      n.admin?.disconnect();
      n.admin = undefined;
    },
    pauseNode: (port) => void byPort(port).child.kill('SIGSTOP'),
    resumeNode: (port) => void byPort(port).child.kill('SIGCONT'),
    async waitForFailover(oldMasterPort, timeoutMs = 30_000) {
      const old = byPort(oldMasterPort);
      const candidates = nodes.filter((n) => n.alive && n.role === 'replica');
      const firstSlot = old.slots[0]?.[0];
      if (firstSlot === undefined) throw new Error(`${oldMasterPort} served no slots`);
      let newMasterPort = 0;
      await pollUntil(`a replica to take over from ${oldMasterPort}`, timeoutMs, async () => {
        const live = nodes.filter((n) => n.alive);
        const infos = await Promise.all(live.map(async (n) => clusterInfo(n)));
        if (!infos.every((ci) => ci.cluster_state === 'ok')) return false;
        const owners = await Promise.all(
          live.map(async (n) => {
            const view = await clusterNodes(n);
            return view.find((v) => v.master && v.slots.some(([a, b]) => firstSlot >= a && firstSlot <= b))
              ?.port;
          }),
        );
        newMasterPort = owners[0] ?? 0;
        return owners.every((p) => p === newMasterPort) && candidates.some((c) => c.port === newMasterPort);
      });
      await refreshRoles(nodes);
      return { newMasterPort, sinceKillMs: Date.now() - (old.killedAt ?? Date.now()) };
    },
    async flushAll() {
      const masters = nodes.filter((n) => n.alive && n.role === 'master');
      await Promise.all(
        masters.map(async (m) => {
          await admin(m).flushall();
          const replicas = (await replicasOf(m.port)).filter((p) => byPort(p).alive);
          if (replicas.length) await admin(m).wait(replicas.length, 5000);
        }),
      );
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all(nodes.map(destroyNode));
    },
  };
}
