/**
 * The sender's cost per message as instructions, against a bare Baileys socket's, counted by
 * valgrind's callgrind: the list-delivery and fleet benches' CPU ratio in a measure that does not
 * move with the machine's load (CPU time per message swings by a fifth between runs on a shared
 * machine; an instruction count does not).
 *
 * - gateway: the built sender, run under callgrind, holding one linked device; lists of the same
 *   BENCH_CG_CONTACTS contacts (20) through POST /send, pacing off;
 * - baseline: a bare Baileys socket in a process of its own (support/bare-rounds.ts), run under
 *   callgrind too, sending the same rounds to as many other contacts, 8 in flight as the sender;
 * - control: a second bare socket, of an account of its own, to other contacts: what two equal
 *   sides differ by (the noise floor).
 *
 * Each side sends a round that sets up the Signal sessions and BENCH_CG_WARM rounds (3), then
 * BENCH_CG_ROUNDS measured rounds (5, rounded up to a multiple of the sides) in turns whose order
 * rotates each round (libs/testing side-by-side.ts), each turn counted alone (its counters dumped
 * right before and after) until every contact has the message and 3 s more, so the receipts that
 * come back are handled within the count. The figure
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
import { callgrindDump, callgrindWrapper, SideBySide, sleep, valgrindAvailable, waitFor } from '@mgw/testing';
import { sideStack, UNDER_VALGRIND_ENV } from './support/tracing-sides.js';

const CONTACTS = Number(process.env.BENCH_CG_CONTACTS ?? 20);
const WARM = Number(process.env.BENCH_CG_WARM ?? 3);
const ROUNDS = Number(process.env.BENCH_CG_ROUNDS ?? 5);
/** After a round has arrived: the receipts coming back are handled by the counted process too. */
const SETTLE_MS = 3000;
const UNDER_VALGRIND_MS = 600_000;
type Side = 'bare' | 'control' | 'sender';

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

/** A counted process and how to make it send round `n` (until delivered and settled). */
interface Counted {
  name: string;
  pid: number;
  round: (n: number) => Promise<void>;
}

/** A bare socket under callgrind (support/bare-rounds.ts), linked as `phone`, sending to `to`. */
async function bareSide(name: string, phone: string, to: string[]): Promise<Counted & { stop(): void }> {
  const script = fileURLToPath(new URL('./support/bare-rounds.ts', import.meta.url));
  // Node strips the script's types itself; without the development condition its imports are the
  // built packages, as the sender's are. Node 20 cannot strip types: tsx does it there.
  const strip = (process.features as { typescript?: unknown }).typescript ? [] : ['--import', 'tsx'];
  const [command, ...args] = [...callgrindWrapper(dir, name), process.execPath, ...strip, script];
  const bare = spawn(command!, args, {
    env: {
      ...process.env,
      BARE_SIM_INFO: JSON.stringify(stack.simulator.info),
      BARE_SIM_CONTROL_URL: stack.simulator.controlUrl,
      BARE_CONTACTS: to.join(','),
      BARE_PHONE: phone,
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: bare.stdout! })[Symbol.asyncIterator]();
  const expectLine = async (want: string) => {
    for (;;) {
      const next = await lines.next();
      if (next.done) throw new Error(`${name}: the bare socket exited before "${want}"`);
      if (next.value === want) return;
    }
  };
  await expectLine('linked');
  return {
    name,
    pid: bare.pid!,
    round: async (n) => {
      bare.stdin!.write(`round ${n}\n`);
      await expectLine(`sent ${n}`);
      await delivered(to, n);
    },
    stop: () => {
      bare.stdin!.end();
      bare.kill('SIGKILL');
    },
  };
}

const bares: { stop(): void }[] = [];
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
  // The baseline: a bare socket under callgrind, the same rounds to other contacts; the control,
  // a second one of an account of its own, to others again.
  const bare = await bareSide('bare', '15558990001', contacts('1555779'));
  bares.push(bare);
  const control = await bareSide('control', '15558990002', contacts('1555780'));
  bares.push(control);
  const sides: Record<Side, Counted> = {
    sender: {
      name: 'sender',
      pid: sender.child.pid!,
      round: async (n) => {
        const res = await stack.api('POST', '/send', { to: gatewayTo, text: `round ${n}` });
        if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
        await delivered(gatewayTo, n);
      },
    },
    bare,
    control,
  };
  // The round that sets up the sessions and the warm-up rounds, each side in turn, uncounted.
  const next = { sender: 1, bare: 1, control: 1 };
  for (let n = 1; n <= 1 + WARM; n++)
    for (const side of Object.keys(sides) as Side[]) await sides[side].round(next[side]++);
  const rounds = new SideBySide<Side>({
    baseline: 'bare',
    control: 'control',
    others: ['sender'],
    rounds: ROUNDS,
  });
  // Each turn counted alone: a dump right before it (the counters since then dropped), one after.
  await rounds.run(async (side) => {
    const s = sides[side];
    await callgrindDump(dir, s.name, s.pid);
    await s.round(next[side]++);
    const counted = await callgrindDump(dir, s.name, s.pid);
    return { total: counted.total / CONTACTS, mainThread: counted.mainThread / CONTACTS };
  });
  console.log(
    `instructions per message (callgrind; rounds of ${CONTACTS} contacts with sessions set up, after ${WARM} ` +
      `warm-up rounds; pacing off; receipts included; ${process.version}); ${rounds.describe()} (bare: a bare Baileys socket):`,
  );
  for (const [metric, label] of [
    ['mainThread', 'main thread instructions/message'],
    ['total', 'all threads instructions/message'],
  ] as const)
    for (const line of rounds.report({ metric, label })) console.log(`  ${line}`);
} finally {
  for (const b of bares) b.stop();
  // The sender under valgrind is slow to stop: it is killed, its counts are taken.
  for (const p of stack.processes) if (p.name.startsWith('sender')) p.child.kill('SIGKILL');
  await stack.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
