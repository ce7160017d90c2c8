import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { canConnect, freePort, waitFor } from './net.js';

/** Credentials a test proxy demands (none: it lets every local client through). */
export interface ProxyCredentials {
  user: string;
  pass: string;
}

export interface ProxyServerHandle {
  kind: 'http' | 'socks5';
  port: number;
  /** The proxy's URL, with its credentials (or the ones given, e.g. wrong ones). */
  url(credentials?: ProxyCredentials | null): string;
  /**
   * The targets (`host:port`) the proxy connected clients to, in order, as its own log says:
   * tinyproxy's `Request …: CONNECT host:port`, microsocks' `connected to host:port`.
   */
  targets(): Promise<string[]>;
  /** Stops it (SIGTERM), waits for its exit and removes its directory; a stopped proxy refuses. */
  stop(): Promise<void>;
}

/**
 * Starts Debian's `tinyproxy` (HTTP CONNECT) on a free port of 127.0.0.1, its configuration and
 * log in a temporary directory: local clients only, every CONNECT port allowed (no `ConnectPort`
 * line), `BasicAuth` when `credentials` are given. Throws with the reason when it cannot start
 * (not installed: `.ci/run` installs it), never skips.
 */
export async function startTinyproxy(credentials?: ProxyCredentials): Promise<ProxyServerHandle> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-tinyproxy-'));
  const port = await freePort();
  const log = path.join(dir, 'tinyproxy.log');
  const conf = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 120',
    `LogFile "${log}"`,
    'LogLevel Connect',
    'MaxClients 200',
    'Allow 127.0.0.1',
    ...(credentials ? [`BasicAuth ${credentials.user} ${credentials.pass}`] : []),
  ];
  await writeFile(path.join(dir, 'tinyproxy.conf'), conf.join('\n') + '\n');
  // -d: stays in the foreground, so stop() ends it.
  const child = spawn('tinyproxy', ['-d', '-c', path.join(dir, 'tinyproxy.conf')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return started('http', child, port, dir, credentials, async () => {
    const text = await readFile(log, 'utf8').catch(() => '');
    return [...text.matchAll(/Request \(file descriptor \d+\): CONNECT (\S+) HTTP/g)].map((m) => m[1]!);
  });
}

/**
 * Starts Debian's `microsocks` (SOCKS5) on a free port of 127.0.0.1, with `-u user -P pass`
 * when `credentials` are given; its log is what it prints. Throws with the reason when it cannot
 * start, never skips.
 */
export async function startMicrosocks(credentials?: ProxyCredentials): Promise<ProxyServerHandle> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-microsocks-'));
  const port = await freePort();
  const args = ['-i', '127.0.0.1', '-p', String(port)];
  if (credentials) args.push('-u', credentials.user, '-P', credentials.pass);
  const child = spawn('microsocks', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout?.on('data', (b: Buffer) => output.push(b.toString()));
  child.stderr?.on('data', (b: Buffer) => output.push(b.toString()));
  return started('socks5', child, port, dir, credentials, async () =>
    [...output.join('').matchAll(/connected to (\S+)/g)].map((m) => m[1]!),
  );
}

async function started(
  kind: 'http' | 'socks5',
  child: ChildProcess,
  port: number,
  dir: string,
  credentials: ProxyCredentials | undefined,
  targets: () => Promise<string[]>,
): Promise<ProxyServerHandle> {
  const name = kind === 'http' ? 'tinyproxy' : 'microsocks';
  let failure: string | undefined;
  const printed: string[] = [];
  child.stderr?.on('data', (b: Buffer) => printed.push(b.toString()));
  child.once(
    'error',
    (err) => (failure = `${name} did not start: ${err.message} (is it installed? .ci/run installs it)`),
  );
  child.once(
    'exit',
    (code, signal) => (failure ??= `${name} exited (${code ?? signal}): ${printed.join('').trim()}`),
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitFor(async () => failure !== undefined || (await canConnect('127.0.0.1', port)), {
      timeoutMs: 10_000,
      what: `${name} on port ${port}`,
    });
  } catch (err) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  if (failure) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(failure);
  }
  return {
    kind,
    port,
    url: (given = credentials) =>
      `${kind}://${given ? `${encodeURIComponent(given.user)}:${encodeURIComponent(given.pass)}@` : ''}127.0.0.1:${port}`,
    targets,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
