import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { canConnect, freePort, waitFor } from './net.js';

/**
 * Private message brokers for the broker relay's tests and bench: a `rabbitmq-server` node and a
 * `nats-server` with JetStream (Debian's packages; `.ci/run` installs them), each on free ports
 * of 127.0.0.1 with its files in a temp directory. A server that cannot start rejects with the
 * reason (and the tail of its output): the test fails, it never skips.
 *
 * `kill()` is a crash (SIGKILL to its whole process group), keeping the data directory;
 * `restart()` starts it again on the same ports and data (durable exchanges, JetStream streams and
 * their messages come back); `stop()` ends it and removes its directory.
 */
export interface BrokerServerHandle {
  url: string;
  port: number;
  /** Crashes it (SIGKILL), keeping its data. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data (after `kill`). */
  restart(): Promise<void>;
  /** Stops it and removes its files. */
  stop(): Promise<void>;
}

/** The real RabbitMQ start script (Debian's /usr/sbin one switches to the `rabbitmq` user when run as root). */
const RABBITMQ_SERVER = ['/usr/lib/rabbitmq/bin/rabbitmq-server', '/usr/sbin/rabbitmq-server'].find((p) =>
  existsSync(p),
);

interface Proc {
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

function launch(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Proc {
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

function killGroup(p: Proc, signal: NodeJS.Signals): void {
  if (p.child.exitCode !== null || p.child.signalCode !== null || p.child.pid === undefined) return;
  try {
    process.kill(-p.child.pid, signal);
  } catch {
    // already gone
  }
}

async function stopGracefully(p: Proc, graceMs: number): Promise<void> {
  killGroup(p, 'SIGTERM');
  const timer = setTimeout(() => killGroup(p, 'SIGKILL'), graceMs);
  await p.exited;
  clearTimeout(timer);
  // A helper left in the group (epmd is not: it runs on its own).
  killGroup(p, 'SIGKILL');
}

async function waitListening(p: Proc, port: number, what: string, timeoutMs: number): Promise<void> {
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

/**
 * A private RabbitMQ node (no plugins, guest allowed from 127.0.0.1): its own node name, AMQP and
 * distribution ports, Erlang cookie, data and logs in a temp directory. The machine's own RabbitMQ
 * (5672) and epmd (4369) are left alone: the node registers its unique name with the running epmd.
 */
export async function startRabbitMqServer(): Promise<BrokerServerHandle> {
  if (!RABBITMQ_SERVER)
    throw new Error('could not start rabbitmq-server: not installed (Debian package rabbitmq-server)');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-rabbitmq-'));
  const port = await freePort();
  let distPort = await freePort();
  while (distPort === port) distPort = await freePort();
  const node = `mgw-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}@localhost`;
  await mkdir(path.join(dir, 'mnesia'), { recursive: true });
  await mkdir(path.join(dir, 'log'), { recursive: true });
  await writeFile(path.join(dir, 'enabled_plugins'), '[].\n');
  await writeFile(
    path.join(dir, 'rabbitmq.conf'),
    [
      `listeners.tcp.default = 127.0.0.1:${port}`,
      'loopback_users = none',
      'log.console = true',
      'log.file = false',
    ].join('\n') + '\n',
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // A cookie of its own (the Erlang VM writes $HOME/.erlang.cookie).
    HOME: dir,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: path.join(dir, 'rabbitmq'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
    RABBITMQ_PID_FILE: path.join(dir, 'rabbitmq.pid'),
  };
  let proc: Proc;
  const boot = async () => {
    proc = launch(RABBITMQ_SERVER, [], env, dir);
    await waitListening(proc, port, 'rabbitmq-server', 60_000);
  };
  await boot().catch(async (err: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    port,
    async kill() {
      killGroup(proc, 'SIGKILL');
      await proc.exited;
    },
    restart: boot,
    async stop() {
      await stopGracefully(proc, 10_000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A private `nats-server` with JetStream (`-js -sd <dir>`) on a free port of 127.0.0.1. */
export async function startNatsServer(): Promise<BrokerServerHandle> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-nats-'));
  const port = await freePort();
  let proc: Proc;
  const boot = async () => {
    proc = launch(
      'nats-server',
      ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir],
      process.env,
      dir,
    );
    await waitListening(proc, port, 'nats-server', 20_000);
  };
  await boot().catch(async (err: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async kill() {
      killGroup(proc, 'SIGKILL');
      await proc.exited;
    },
    restart: boot,
    async stop() {
      await stopGracefully(proc, 5000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
