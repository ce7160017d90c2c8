import { execFileSync } from 'node:child_process';
import { canConnect, waitFor } from '@mgw/testing';

/** One process as `ps` lists it. */
export interface ProcessRow {
  pid: number;
  ppid: number;
  /** Its command line. */
  command: string;
}

/** Every live process (zombies left out: an orphan's zombie waits for a reaper that may never come). */
function processes(): ProcessRow[] {
  const out = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && !m[3]!.startsWith('Z'))
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), command: m[4]! }));
}

/** `root` and every live process below it, as `ps` sees them now. */
export function processTree(root: number): ProcessRow[] {
  const all = processes();
  const tree = all.filter((p) => p.pid === root);
  for (let i = 0; i < tree.length; i++) {
    tree.push(...all.filter((p) => p.ppid === tree[i]!.pid));
  }
  return tree;
}

/**
 * Waits until none of `tree` is alive any more and nothing listens on `ports` (127.0.0.1); fails
 * naming what is left.
 */
export async function waitUntilGone(tree: ProcessRow[], ports: number[], timeoutMs = 40_000): Promise<void> {
  const left = async () => {
    const alive = new Set(processes().map((p) => p.pid));
    const procs = tree.filter((p) => alive.has(p.pid)).map((p) => `${p.pid} ${p.command}`);
    const open = (
      await Promise.all(ports.map(async (port) => ((await canConnect('127.0.0.1', port)) ? [port] : [])))
    ).flat();
    return { procs, open };
  };
  let last = await left();
  await waitFor(
    async () => {
      last = await left();
      return last.procs.length === 0 && last.open.length === 0;
    },
    { timeoutMs, intervalMs: 200, what: 'every process of the tree gone and its ports free' },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; left: ${JSON.stringify(last)}`);
  });
}
