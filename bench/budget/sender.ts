/**
 * The sender's figures of the cost budget (`cost.ts`): instructions per message sent to a contact
 * the device has a Signal session with (`known`), and to one it has never written to (`new`: the
 * prekey fetch and the session's setup included), receipts handled within the count.
 *
 * One stack (built services, the simulator as a process, pacing off, no sender), a device linked,
 * then the built sender under callgrind with instrumentation off (`countedProcess`). Uncounted: the
 * sender's start, the link, and WARM rounds (new contacts, then the same contacts again) so that
 * the JIT settles. Then `windows` pairs of counted windows, each a round of SENDER_CONTACTS
 * messages (a list through `POST /send`): one to contacts it has written to, one to contacts it has
 * not. Each window ends when every contact has the message and the receipts the simulator sends
 * back have been handled (SETTLE_MS more).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  countedProcess,
  senderBenchStack,
  sleep,
  UNDER_VALGRIND_ENV,
  waitFor,
  type Instructions,
} from '@mgw/testing';

const CONTACTS = Number(process.env.BUDGET_SENDER_CONTACTS ?? 10);
const WARM = 3;
/** After a round has arrived: its receipts are handled inside the count too. */
const SETTLE_MS = 1500;
const SLOW_MS = 300_000;

export type SenderFigure = 'known' | 'new';

export async function senderFigures(windows: number): Promise<Record<SenderFigure, Instructions>[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mgw-budget-sender-'));
  const stack = await senderBenchStack(UNDER_VALGRIND_ENV);
  try {
    // The sender's environment names no HOST of its own (only the API's does): vgdb finds it by ours.
    const counted = countedProcess(dir, 'sender', process.env);
    const sender = await stack.startService('sender', {}, { wrapper: counted.argv, readyTimeoutMs: SLOW_MS });
    await stack.linkByQr('15557770001', 'Budget Gateway');
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
      const before = await Promise.all(to.map(async (p) => (await stack.inbox(p)).length));
      const res = await stack.api('POST', '/send', { to, text: `a round of the budget ${batch}` });
      if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
      await waitFor(
        async () => (await Promise.all(to.map((p) => stack.inbox(p)))).every((m, i) => m.length > before[i]!),
        { timeoutMs: SLOW_MS, intervalMs: 250, what: 'a round delivered' },
      );
      await sleep(SETTLE_MS);
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
    const out: Record<SenderFigure, Instructions>[] = [];
    for (let w = 0; w < windows; w++) {
      const to = fresh();
      const created = per(await counted.count(sender.child.pid!, () => round(to)));
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
