/**
 * The sender's figures of the cost budget (`cost.ts`): instructions per message sent to a contact
 * the device has a Signal session with (`known`), and to one it has never written to (`new`: the
 * prekey fetch and the session's setup included), its delivery receipt handled within the count.
 *
 * One stack (built services, the simulator as a process, pacing off, no sender), then the built
 * sender under callgrind with instrumentation off (`countedProcess`). Uncounted: the sender's
 * start, the link (the fast link: `fastLink`), and WARM rounds (new contacts, then the same contacts again) so that the JIT
 * settles. Then `windows` pairs of counted windows, each a round of SENDER_CONTACTS (50) messages
 * (a list through `POST /send`): one to contacts it has not written to, then one to the same
 * contacts again. Before each window the sender collects its whole heap (`settle-heap.mjs`:
 * SIGUSR2, `global.gc()`), so that no window inherits another's garbage. A window ends as soon as
 * every message of its round reads `delivered` (the sender has handled its receipt), not after a
 * fixed wait.
 *
 * What runs on its own clock is kept out of the windows, as far as the sender's settings reach
 * (QUIET_SENDER_ENV): its lease renewals and liveness beats (the renewer thread, whose rounds the
 * main thread hears), its scans for unowned devices and the media sweeps come every half hour or
 * hour, not every few seconds. What no setting moves stays in: the renewer's 500 ms sign of life
 * (a store to shared memory), the queue-depth gauges (every 5 s), the Redis subscription's
 * check (10 s), BullMQ's stalled-job check (15 s) and Baileys' keep-alive (30 s). Their cost grows
 * with a window's wall time, which a loaded machine stretches: docs/benchmarks.md "The cost budget"
 * says how much.
 *
 * BUDGET_PLANT_SENDER=<iterations> loads `planted-cost.mjs` into the sender: a loop of that many
 * iterations on each of its socket writes.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  countedProcess,
  fastLink,
  senderBenchStack,
  UNDER_VALGRIND_ENV,
  waitFor,
  type Instructions,
} from '@mgw/testing';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONTACTS = Number(process.env.BUDGET_SENDER_CONTACTS ?? 50);
const WARM = Number(process.env.BUDGET_SENDER_WARM ?? 2);
const SLOW_MS = 600_000;

/**
 * The bench's sender only: every timer a setting reaches, out of a window's way (an hour's lease
 * renewed every half hour, a liveness beat every 150 s, a scan and a media sweep an hour apart).
 * The link still reaches the sender at once: it hears of a new device on the devices channel.
 */
export const QUIET_SENDER_ENV = {
  LEASE_TTL_MS: '3600000',
  LEASE_RENEW_MS: '1800000',
  SENDER_LIVENESS_TTL_MS: '1800000',
  LEASE_SCAN_MS: '3600000',
  MEDIA_SWEEP_INTERVAL_MS: '3600000',
};

export type SenderFigure = 'known' | 'new';

export async function senderFigures(windows: number): Promise<Record<SenderFigure, Instructions>[]> {
  // Every service refuses to start without a key for data at rest.
  process.env.MGW_ENCRYPTION_KEY ||= `bench:${randomBytes(32).toString('base64')}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'mgw-budget-sender-'));
  const stack = await senderBenchStack(UNDER_VALGRIND_ENV);
  try {
    // The sender's environment names no HOST of its own (only the API's does): vgdb finds it by ours.
    const counted = countedProcess(dir, 'sender', process.env);
    const plant = process.env.BUDGET_PLANT_SENDER;
    const settleFile = path.join(dir, 'settled');
    const preload = [
      '--expose-gc',
      `--import ${path.join(HERE, 'settle-heap.mjs')}`,
      ...(plant ? [`--import ${path.join(HERE, 'planted-cost.mjs')}`] : []),
    ];
    const env: Record<string, string> = {
      ...QUIET_SENDER_ENV,
      MGW_SETTLE_FILE: settleFile,
      NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', ...preload].join(' ').trim(),
      ...(plant ? { MGW_PLANTED_WRITE_ITERATIONS: plant } : {}),
    };
    const sender = await stack.startService('sender', env, {
      wrapper: counted.argv,
      readyTimeoutMs: SLOW_MS,
    });
    // The fast link (no QR to expire while a loaded machine runs valgrind), then the sender's
    // connect, slow under valgrind.
    await fastLink(stack, { phone: '15557770001', deviceId: stack.deviceId, name: 'Budget Gateway' });
    await stack.waitForStatus('connected', SLOW_MS);
    let batch = 0;
    const fresh = () => {
      batch += 1;
      return Array.from(
        { length: CONTACTS },
        (_, i) => `1555${String(batch).padStart(3, '0')}${String(i).padStart(4, '0')}`,
      );
    };
    const round = async (to: string[]) => {
      const res = await stack.api<{ messageIds: string[] }>('POST', '/send', {
        to,
        text: `a round of the budget ${batch}`,
      });
      if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
      const pending = new Set(res.body.messageIds);
      await waitFor(
        async () => {
          for (const id of [...pending]) {
            const record = (await stack.api<{ data?: { status?: string } }>('GET', `/messages/${id}`)).body
              .data;
            const status = record?.status;
            if (status === 'delivered' || status === 'read') pending.delete(id);
            else if (status === 'failed') throw new Error(`a message failed: ${JSON.stringify(record)}`);
            else break;
          }
          return pending.size === 0;
        },
        { timeoutMs: SLOW_MS, intervalMs: 250, what: 'a round delivered' },
      );
    };
    for (let i = 0; i < WARM; i++) {
      const to = fresh();
      await round(to);
      await round(to);
    }
    const per = (c: Instructions) => ({
      mainThread: Math.round(c.mainThread / CONTACTS),
      total: Math.round(c.total / CONTACTS),
    });
    // A full collection before each window (settle-heap.mjs), uncounted.
    let settled = 0;
    const settle = async () => {
      settled += 1;
      process.kill(sender.child.pid!, 'SIGUSR2');
      await waitFor(() => existsSync(settleFile) && readFileSync(settleFile, 'utf8') === String(settled), {
        timeoutMs: SLOW_MS,
        intervalMs: 100,
        what: 'the sender collected',
      });
    };
    const out: Record<SenderFigure, Instructions>[] = [];
    for (let w = 0; w < windows; w++) {
      const to = fresh();
      await settle();
      const created = per(await counted.count(sender.child.pid!, () => round(to)));
      await settle();
      const known = per(await counted.count(sender.child.pid!, () => round(to)));
      out.push({ new: created, known });
    }
    return out;
  } finally {
    // The sender under valgrind is slow to stop: it is killed, its counts are taken.
    for (const p of stack.processes) if (p.name.startsWith('sender')) p.child.kill('SIGKILL');
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run alone (`node --import tsx bench/budget/sender.ts`): the figures of BUDGET_RUNS windows.
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await senderFigures(Number(process.env.BUDGET_RUNS ?? 3))));
  process.exit(0);
}
