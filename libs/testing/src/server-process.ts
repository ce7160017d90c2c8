import { spawn, type ChildProcess } from 'node:child_process';
import { canConnect, waitFor } from './net.js';

/**
 * The servers the test kit runs as child processes (broker-servers.ts, sqs-server.ts): each in a
 * process group of its own, its output's tail kept for the error that says why it did not start.
 */
export interface Proc {
  child: ChildProcess;
  exited: Promise<void>;
  output: () => string;
}

/**
 * Servers running: killed when this process exits, or is stopped by SIGTERM, SIGINT or SIGHUP
 * (they run in their own process groups, so nothing else would stop them; the signal is raised
 * again afterwards, so the process still ends as it would have).
 */
const live = new Set<Proc>();
let guarded = false;
/** Installs the exit and signal hooks, once, when the first server starts (importing the kit installs nothing). */
function guardLive(): void {
  if (guarded) return;
  guarded = true;
  const killLive = () => live.forEach((p) => killGroup(p, 'SIGKILL'));
  process.once('exit', killLive);
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
    process.once(signal, () => {
      killLive();
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
}

export function launch(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Proc {
  guardLive();
  // Its own process group: a kill reaches the Erlang VM and its helpers, not only the start script.
  const child = spawn(command, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  child.on('error', (err) => keep(Buffer.from(`\n[spawn error] ${err.message}\n`)));
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  const proc = { child, exited, output: () => out };
  live.add(proc);
  void exited.then(() => live.delete(proc));
  return proc;
}

export function killGroup(p: Proc, signal: NodeJS.Signals): void {
  if (p.child.exitCode !== null || p.child.signalCode !== null || p.child.pid === undefined) return;
  try {
    process.kill(-p.child.pid, signal);
  } catch {
    // already gone
  }
}

export async function stopGracefully(p: Proc, graceMs: number): Promise<void> {
  killGroup(p, 'SIGTERM');
  const timer = setTimeout(() => killGroup(p, 'SIGKILL'), graceMs);
  await p.exited;
  clearTimeout(timer);
  // A helper left in the group (epmd is not: it runs on its own).
  killGroup(p, 'SIGKILL');
}

export async function waitListening(p: Proc, port: number, what: string, timeoutMs: number): Promise<void> {
  try {
    await waitFor(
      async () => {
        if (p.child.exitCode !== null || p.child.signalCode !== null)
          throw new Error(`${what} exited (${p.child.exitCode ?? p.child.signalCode})`);
        return canConnect('127.0.0.1', port);
      },
      { timeoutMs, intervalMs: 100, what: `${what} on port ${port}` },
    );
  } catch (err) {
    killGroup(p, 'SIGKILL');
    throw new Error(`could not start ${what}: ${(err as Error).message}\n--- its output ---\n${p.output()}`);
  }
}

/** Whether a process with this pid exists (signal 0 only asks; EPERM: it exists, another user's). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
