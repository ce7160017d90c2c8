import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { TSX_ARGS, waitFor } from '../src/index.js';

/** Alive and not a zombie (an orphan's new parent may be slow to reap it, or never do). */
const isRunning = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

describe('testing: the processes a stack starts do not outlive the process that started them', function () {
  this.timeout(90_000);

  it('When the process holding a stack is SIGKILLed, then its services and its simulator process stop by themselves within seconds', async () => {
    const holder = spawn(
      process.execPath,
      [...TSX_ARGS, path.join(import.meta.dirname, 'fixtures/stack-orphan.ts')],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((r) => holder.once('exit', r));
    let out = '';
    holder.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await waitFor(() => out.includes('\n'), { timeoutMs: 60_000, what: 'the stack to start' });
      const started = JSON.parse(out) as { services: number[]; simulator: number };
      const pids = [...started.services, started.simulator];
      expect(started.services).to.have.length(3);
      expect(pids.every(isRunning), 'running before the kill').to.equal(true);

      holder.kill('SIGKILL');
      await exited;
      const killedAt = Date.now();
      await waitFor(() => pids.every((pid) => !isRunning(pid)), {
        timeoutMs: 20_000,
        intervalMs: 100,
        what: `the orphans ${pids.join(', ')} to stop`,
      });
      console.log(`      (${pids.length} orphans stopped within ${Date.now() - killedAt} ms)`);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
