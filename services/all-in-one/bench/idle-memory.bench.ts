/**
 * A small install's fixed cost: one linked account, idle after start-up, in the all-in-one process
 * against the four services as processes of their own (its baseline, in the same run). Run as
 * `npm start` runs them: the built services (run `npm run build` first; a stale build stops the
 * bench), the simulator as a process of its own, a private Redis.
 *
 * Each layout: start, link one phone by QR, idle BENCH_IDLE_S (15) s, then print each process's
 * RSS (from /proc) before and after two full collections (forced through the inspector each
 * process opens on 127.0.0.1, `--inspect=127.0.0.1:0`), and the Redis connections the gateway
 * holds. Nothing is asserted; the goal of issue 30 (all-in-one ≤ 200 MiB after a GC) is printed
 * beside the figures.
 */
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { Stack, type ServiceProcess } from '@mgw/testing';

const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 15);
const GOAL_MIB = 200;

const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

/** Two full collections in `proc`, through the inspector it printed the address of. */
async function collectGarbage(proc: ServiceProcess): Promise<void> {
  const url = proc.output.map((l) => /ws:\/\/\S+/.exec(l)?.[0]).find(Boolean);
  if (!url) throw new Error(`${proc.name} printed no inspector address`);
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  for (let id = 1; id <= 2; id++) {
    ws.send(JSON.stringify({ id, method: 'HeapProfiler.collectGarbage' }));
    await new Promise((resolve) => ws.once('message', resolve));
  }
  ws.close();
}

async function measure(allInOne: boolean): Promise<{ before: number; after: number }> {
  const stack = await Stack.start({
    built: true,
    privateRedis: true,
    allInOne,
    notifier: true,
    simulatorProcess: true,
    env: { NODE_OPTIONS: '--inspect=127.0.0.1:0', LOG_LEVEL: 'warn' },
  });
  try {
    await stack.linkByQr('15550990101', 'Idle Account');
    await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000));
    const clients = String(await stack.redis.client('LIST'))
      .split('\n')
      .filter((l) => /name=mgw-/.test(l)).length;
    const before = stack.processes.map((p) => rssMiB(p.child.pid!));
    for (const p of stack.processes) await collectGarbage(p);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = stack.processes.map((p) => rssMiB(p.child.pid!));
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const each = (xs: number[]) =>
      stack.processes.map((p, i) => `${p.name.split('#')[0]} ${xs[i]!.toFixed(0)}`).join(', ');
    console.log(
      `${allInOne ? 'all-in-one    ' : 'four processes'}: RSS after a GC ${sum(after).toFixed(0)} MiB (${each(after)}); ` +
        `before it ${sum(before).toFixed(0)} MiB; ${clients} named Redis connections`,
    );
    return { before: sum(before), after: sum(after) };
  } finally {
    await stack.stop();
  }
}

console.log(`one linked account, idle ${IDLE_S} s, built services, Node ${process.version}`);
const four = await measure(false);
const one = await measure(true);
console.log(
  `all-in-one / four processes: ${(one.after / four.after).toFixed(2)} after a GC ` +
    `(${(one.before / four.before).toFixed(2)} before); goal: all-in-one ≤ ${GOAL_MIB} MiB after a GC — ` +
    `${one.after <= GOAL_MIB ? 'met' : 'NOT met'} (${one.after.toFixed(0)} MiB)`,
);
process.exit(0);
