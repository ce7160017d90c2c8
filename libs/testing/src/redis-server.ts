import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { canConnect, freePort, waitFor } from './net.js';

export { canConnect };

export interface RedisServerOptions {
  /** Port on 127.0.0.1; a free one when omitted. */
  port?: number;
  /**
   * Keep the data in this directory with AOF on (`npm start`); without it the server keeps
   * nothing on disk and its throw-away directory is removed on stop (tests, benchmarks).
   */
  dataDir?: string;
  /** Extra `redis-server` arguments, e.g. ['--maxmemory', '64mb']. */
  args?: string[];
  /**
   * It stops once the process that started it is gone, however that died (`npm start`): it runs
   * under a small Node process with the orphan guard (orphan-guard-run.mjs). `kill()` then kills
   * that process, not redis-server: a crash test leaves this option out.
   */
  stopWithParent?: boolean;
}

/** libs/testing, from src/ or dist/ alike. */
const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const guardedCommand = (command: string, args: string[]): [string, string[]] => [
  process.execPath,
  [
    '--import',
    pathToFileURL(path.join(PACKAGE_DIR, 'orphan-guard.mjs')).href,
    path.join(PACKAGE_DIR, 'orphan-guard-run.mjs'),
    command,
    ...args,
  ],
];

/** A redis-server's arguments for a private one: on `port` of 127.0.0.1 only, its files in `dir`. */
export function localServerArgs(port: number, dir: string): string[] {
  return ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir];
}

export interface RedisServerHandle {
  url: string;
  port: number;
  /** Stops it (SIGTERM: a clean shutdown); the throw-away directory goes too. */
  stop(): Promise<void>;
  /** Kills it as a crash would (SIGKILL), keeping its data directory (for a restart). */
  kill(): Promise<void>;
}

/**
 * Starts a private `redis-server` bound to 127.0.0.1 — the one way the project starts one (the
 * test harness, `npm start` and `npm run bench` all use it). Resolves once it accepts connections.
 */
export async function startRedisServer(opts: RedisServerOptions = {}): Promise<RedisServerHandle> {
  const port = opts.port ?? (await freePort());
  const persistent = opts.dataDir !== undefined;
  const dir = persistent ? opts.dataDir! : await mkdtemp(path.join(os.tmpdir(), 'mgw-redis-'));
  if (persistent) mkdirSync(dir, { recursive: true });
  const persistence = persistent
    ? ['--appendonly', 'yes', '--maxmemory-policy', 'noeviction']
    : ['--save', '', '--appendonly', 'no'];
  const args = [...localServerArgs(port, dir), ...persistence, ...(opts.args ?? [])];
  const [command, argv] = opts.stopWithParent ? guardedCommand('redis-server', args) : ['redis-server', args];
  const child = spawn(command, argv, { stdio: 'ignore' });
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  try {
    await waitFor(
      async () => {
        if (spawnError) throw new Error(`could not start redis-server (${spawnError.message})`);
        if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
        return canConnect('127.0.0.1', port);
      },
      { timeoutMs: 10_000, intervalMs: 50, what: `redis-server on port ${port}` },
    );
  } catch (err) {
    // SIGKILL would leave a guarded redis-server without its guard to stop it.
    child.kill(opts.stopWithParent ? 'SIGTERM' : 'SIGKILL');
    throw err;
  }
  const exited = new Promise((r) => child.once('exit', r));
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      if (!persistent) await rm(dir, { recursive: true, force: true });
    },
  };
}
