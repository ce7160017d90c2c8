/**
 * `npm start` stops when its parent goes: npm killed with SIGKILL, say, re-parents the
 * supervisor (start.mjs), which then stops everything as for SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { env, say } from './start-context.mjs';

/**
 * npm (or whatever started this) gone — killed with SIGKILL, or a shell between it and here
 * killed — re-parents this process: that is a stop, as SIGTERM is. When a shell sits between npm
 * and here (a `start` script without `exec`, another script-shell), npm's own death re-parents
 * only that shell, so its parent is watched too. Read once a second; the timer keeps nothing alive.
 */
export function watchParent(stopAll) {
  const parent = process.ppid;
  const viaShell = env.npm_lifecycle_event !== undefined && /^(sh|dash|bash|zsh)$/.test(commandOf(parent));
  const grandparent = viaShell ? parentOf(parent) : undefined;
  const timer = setInterval(() => {
    const gone =
      process.ppid !== parent
        ? parent
        : grandparent !== undefined && parentOf(parent) !== grandparent
          ? grandparent
          : 0;
    if (!gone) return;
    clearInterval(timer);
    say(`its parent (pid ${gone}) is gone; stopping everything`);
    void stopAll(1);
  }, 1_000);
  timer.unref();
}

/** A process's parent, from /proc (Linux) or ps; undefined once it is gone. */
function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    const ps = spawnSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' });
    return ps.status === 0 ? Number(ps.stdout.trim()) : undefined;
  }
}

/** A process's command name (`sh`, `node`…), or '' when it cannot be read. */
function commandOf(pid) {
  const ps = spawnSync('ps', ['-o', 'comm=', '-p', String(pid)], { encoding: 'utf8' });
  return ps.status === 0 ? ps.stdout.trim() : '';
}
