/**
 * What live AsyncLocalStorage instances cost every await in the process.
 *
 * Every Baileys socket creates its own AsyncLocalStorage (`addTransactionCapability`) and enters
 * it for each key-store transaction. On Node 20 an entered instance joins a process-wide list
 * that the async-hooks `init` callback walks for every new promise, timer or socket request, and
 * it never leaves that list (Baileys never calls `disable()`), so each device — and each
 * reconnect, which builds a new socket — makes every later `await` dearer. Node 24 propagates
 * the context with AsyncContextFrame instead, whose cost does not depend on the instance count.
 *
 * A fixed amount of async work (awaited async calls, setImmediate hops, sequential ioredis GETs)
 * is timed with N = 0…300 instances, each in a fresh child process, and reported as
 * cost(N)/cost(0) of the same Node binary in the same run; nothing is asserted.
 *
 *   BENCH_NODES   comma-separated Node executables, each optionally followed by flags
 *                 (default: the running one), e.g.
 *                 "/usr/bin/node,.node24/bin/node,.node24/bin/node --no-async-context-frame"
 *   BENCH_COUNTS  instance counts (default 0,1,10,100,300)
 *   REDIS_URL     a private Redis for the GET workload (one is started when unset)
 */
import { spawnSync } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedisServer } from '@mgw/testing';

const AWAITS = Number(process.env.BENCH_AWAITS ?? 50_000);
const IMMEDIATES = Number(process.env.BENCH_IMMEDIATES ?? 10_000);
const GETS = Number(process.env.BENCH_GETS ?? 1_000);
const REPEATS = 5;

interface TxContext {
  cache: Record<string, unknown>;
  mutations: Record<string, unknown>;
  dbQueries: number;
}
type Timings = Record<string, number>;

/** One socket's storage after a finished transaction, entered as Baileys' `transaction` does. */
async function enteredStorage(): Promise<AsyncLocalStorage<TxContext>> {
  const storage = new AsyncLocalStorage<TxContext>();
  await storage.run({ cache: {}, mutations: {}, dbQueries: 0 }, async () => {
    await Promise.resolve();
  });
  return storage;
}

const hop = async (i: number) => i;

async function awaits(): Promise<void> {
  for (let i = 0; i < AWAITS; i++) await hop(i);
}

async function immediates(): Promise<void> {
  for (let i = 0; i < IMMEDIATES; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function timed(work: () => Promise<void>): Promise<number> {
  await work(); // warm-up: JIT and inline caches
  const samples: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    await work();
    samples.push(performance.now() - t0);
  }
  // the least disturbed run: the machine is shared, so other runs measure other processes too
  return Math.min(...samples);
}

/** Child: set up the instances described by BENCH_CHILD and time each workload. */
async function child(spec: string): Promise<void> {
  const [kind, countText] = spec.split(':') as [string, string];
  const count = Number(countText);
  const kept: AsyncLocalStorage<TxContext>[] = [];
  for (let i = 0; i < count; i++) {
    if (kind === 'created') kept.push(new AsyncLocalStorage<TxContext>());
    else if (kind === 'entered') kept.push(await enteredStorage());
    else await enteredStorage(); // 'dropped': the socket is gone, its storage unreferenced
  }
  if (kind === 'dropped') (globalThis as { gc?: () => void }).gc?.();
  const redis = new Redis(process.env.REDIS_URL!, { lazyConnect: true });
  await redis.connect();
  await redis.set('bench:als', 'x');
  const gets = async () => {
    for (let i = 0; i < GETS; i++) await redis.get('bench:als');
  };
  const result: Timings = {
    awaits: await timed(awaits),
    immediates: await timed(immediates),
    gets: await timed(gets),
  };
  // the same work inside one socket's transaction (its store is set while it runs)
  if (kept[0] && kind === 'entered') {
    const tx = { cache: {}, mutations: {}, dbQueries: 0 };
    result.awaitsInTx = await kept[0].run(tx, () => timed(awaits));
  }
  await redis.quit();
  console.log(JSON.stringify({ node: process.version, result }));
}

function runChild(node: string[], spec: string, redisUrl: string): { node: string; result: Timings } {
  const [exe, ...flags] = node as [string, ...string[]];
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(exe, [...flags, '--expose-gc', '--conditions=development', '--import', 'tsx', self], {
    env: { ...process.env, BENCH_CHILD: spec, REDIS_URL: redisUrl },
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (r.status !== 0) throw new Error(`${node.join(' ')} ${spec}: exit ${r.status}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { node: string; result: Timings };
}

const pad = (text: string, width: number) => text.padStart(width);

async function parent(): Promise<void> {
  const nodes = (process.env.BENCH_NODES ?? process.execPath)
    .split(',')
    .map((entry) => entry.trim().split(/\s+/));
  const counts = (process.env.BENCH_COUNTS ?? '0,1,10,100,300').split(',').map(Number);
  const most = Math.max(...counts);
  const server = process.env.REDIS_URL ? undefined : await startRedisServer();
  const redisUrl = process.env.REDIS_URL ?? server!.url;
  try {
    console.log(
      `async work: ${AWAITS} awaited async calls, ${IMMEDIATES} setImmediate hops, ${GETS} sequential ioredis GETs;`,
    );
    console.log(
      `fastest of ${REPEATS} runs after a warm-up; each row is a fresh process; ratio = cost(N)/cost(0)`,
    );
    for (const node of nodes) {
      const rows: Array<[string, Timings]> = [];
      let version = '';
      for (const n of counts) {
        const { node: v, result } = runChild(node, `entered:${n}`, redisUrl);
        version = v;
        rows.push([`${n} entered`, result]);
      }
      for (const kind of ['created', 'dropped']) {
        rows.push([`${most} ${kind}`, runChild(node, `${kind}:${most}`, redisUrl).result]);
      }
      const base = rows[0]![1];
      const flags = node.slice(1).join(' ');
      console.log(`\n${version}${flags ? ` ${flags}` : ''} (${node[0]})`);
      console.log(
        `${'instances'.padEnd(14)}${pad('awaits ms', 11)}${pad('ratio', 9)}${pad('immed. ms', 11)}${pad('ratio', 8)}` +
          `${pad('GETs ms', 9)}${pad('ratio', 7)}${pad('in-tx ratio', 13)}`,
      );
      for (const [label, t] of rows) {
        const ratio = (key: string) => (t[key]! / base[key]!).toFixed(2);
        const inTx = t.awaitsInTx === undefined ? '-' : (t.awaitsInTx / base.awaits!).toFixed(2);
        console.log(
          `${label.padEnd(14)}${pad(t.awaits!.toFixed(0), 11)}${pad(ratio('awaits'), 9)}` +
            `${pad(t.immediates!.toFixed(0), 11)}${pad(ratio('immediates'), 8)}` +
            `${pad(t.gets!.toFixed(0), 9)}${pad(ratio('gets'), 7)}${pad(inTx, 13)}`,
        );
      }
    }
    console.log(
      '\n"entered": each instance ran one transaction (as every Baileys socket does at login); "created": never ' +
        'entered; "dropped": entered, then unreferenced and garbage-collected (a closed socket). "in-tx": the awaits ' +
        "inside one instance's run(), against awaits with 0 instances.",
    );
  } finally {
    await server?.stop();
  }
}

if (process.env.BENCH_CHILD) await child(process.env.BENCH_CHILD);
else await parent();
process.exit(0);
