/**
 * The sender's cost per message as instructions, against a bare Baileys socket's, counted by
 * valgrind's callgrind: the list-delivery and fleet benches' CPU ratio in a measure that does not
 * move with the machine's load (CPU time per message swings by a fifth between runs on a shared
 * machine; an instruction count does not).
 *
 * - gateway: the built sender, run under callgrind, holding one linked device; lists of the same
 *   BENCH_CG_CONTACTS contacts (20) through POST /send, pacing off;
 * - baseline: a bare Baileys socket in a process of its own (support/bare-rounds.ts), run under
 *   callgrind too, sending the same rounds to as many other contacts, 8 in flight as the sender.
 *
 * Each side sends a round that sets up the Signal sessions and BENCH_CG_WARM rounds (3) before its
 * counters are reset, then BENCH_CG_ROUNDS measured rounds (5), each until every contact has the
 * message and 3 s more, so the receipts that come back are handled within the count. The figure
 * per message is the main thread's (JS, I/O; V8's compiler threads keep compiling under valgrind)
 * and all threads'. Needs `valgrind` (Debian package); skipped without it. Minutes: valgrind runs
 * Node some 20-50× slower. The ratio is reported, never asserted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  callgrindDump,
  callgrindWrapper,
  sleep,
  valgrindAvailable,
  waitFor,
  type Instructions,
} from '@mgw/testing';
import { sideStack, UNDER_VALGRIND_ENV } from './support/tracing-sides.js';

const CONTACTS = Number(process.env.BENCH_CG_CONTACTS ?? 20);
const WARM = Number(process.env.BENCH_CG_WARM ?? 3);
const ROUNDS = Number(process.env.BENCH_CG_ROUNDS ?? 5);
/** After a round has arrived: the receipts coming back are handled by the counted process too. */
const SETTLE_MS = 3000;
const UNDER_VALGRIND_MS = 600_000;

if (!valgrindAvailable()) {
  console.log('instructions per message: skipped (valgrind is not installed)');
  process.exit(0);
}

const dir = mkdtempSync(path.join(tmpdir(), 'mgw-callgrind-'));
const stack = await sideStack('off', undefined, UNDER_VALGRIND_ENV);
const contacts = (prefix: string) =>
  Array.from({ length: CONTACTS }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

/** Waits until each contact has `count` messages, then lets the receipts settle. */
async function delivered(to: string[], count: number): Promise<void> {
  await waitFor(
    async () => (await Promise.all(to.map((p) => stack.inbox(p)))).every((m) => m.length >= count),
    {
      timeoutMs: UNDER_VALGRIND_MS,
      intervalMs: 250,
      what: `round ${count} delivered`,
    },
  );
  await sleep(SETTLE_MS);
}

/** Runs the session round and the warm-up, resets the counters, runs the measured rounds: per message. */
async function count(name: string, pid: number, round: (n: number) => Promise<void>): Promise<Instructions> {
  for (let n = 1; n <= 1 + WARM; n++) await round(n);
  await callgrindDump(dir, name, pid);
  for (let n = 2 + WARM; n <= 1 + WARM + ROUNDS; n++) await round(n);
  const counted = await callgrindDump(dir, name, pid);
  const messages = ROUNDS * CONTACTS;
  return { total: counted.total / messages, mainThread: counted.mainThread / messages };
}

try {
  // gateway: the sender under callgrind holds the device linked here
  const sender = await stack.startService(
    'sender',
    {},
    { wrapper: callgrindWrapper(dir, 'sender'), readyTimeoutMs: UNDER_VALGRIND_MS },
  );
  await stack.linkByQr('15557770001', 'Bench Gateway');
  await stack.waitForStatus('connected', UNDER_VALGRIND_MS);
  const gatewayTo = contacts('1555778');
  const gateway = await count('sender', sender.child.pid!, async (n) => {
    const res = await stack.api('POST', '/send', { to: gatewayTo, text: `round ${n}` });
    if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
    await delivered(gatewayTo, n);
  });

  // baseline: a bare socket under callgrind, the same rounds to other contacts
  const bareTo = contacts('1555779');
  const script = fileURLToPath(new URL('./support/bare-rounds.ts', import.meta.url));
  // Node strips the script's types itself; without the development condition its imports are the
  // built packages, as the sender's are. Node 20 cannot strip types: tsx does it there.
  const strip = (process.features as { typescript?: unknown }).typescript ? [] : ['--import', 'tsx'];
  const [command, ...args] = [...callgrindWrapper(dir, 'bare'), process.execPath, ...strip, script];
  const bare = spawn(command!, args, {
    env: {
      ...process.env,
      BARE_SIM_INFO: JSON.stringify(stack.simulator.info),
      BARE_SIM_CONTROL_URL: stack.simulator.controlUrl,
      BARE_CONTACTS: bareTo.join(','),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: bare.stdout! })[Symbol.asyncIterator]();
  const expectLine = async (want: string) => {
    for (;;) {
      const next = await lines.next();
      if (next.done) throw new Error(`the bare socket exited before "${want}"`);
      if (next.value === want) return;
    }
  };
  try {
    await expectLine('linked');
    const baseline = await count('bare', bare.pid!, async (n) => {
      bare.stdin!.write(`round ${n}\n`);
      await expectLine(`sent ${n}`);
      await delivered(bareTo, n);
    });
    const m = (i: number) => `${(i / 1e6).toFixed(2)} M`;
    console.log(
      `instructions per message (callgrind; ${ROUNDS} rounds × ${CONTACTS} contacts with sessions set up, ` +
        `after ${WARM} warm-up rounds; pacing off; receipts included; ${process.version}):`,
    );
    console.log(
      `  sender ${m(gateway.mainThread)} main thread (${m(gateway.total)} all threads), ` +
        `bare socket ${m(baseline.mainThread)} (${m(baseline.total)})`,
    );
    console.log(
      `  ratio sender/bare socket: ${(gateway.mainThread / baseline.mainThread).toFixed(2)}x main thread, ` +
        `${(gateway.total / baseline.total).toFixed(2)}x all threads`,
    );
  } finally {
    bare.stdin!.end();
    bare.kill('SIGKILL');
  }
} finally {
  // The sender under valgrind is slow to stop: it is killed, its counts are taken.
  for (const p of stack.processes) if (p.name.startsWith('sender')) p.child.kill('SIGKILL');
  await stack.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
