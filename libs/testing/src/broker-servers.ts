import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './net.js';
import { killGroup, launch, stopGracefully, waitListening, type Proc } from './server-process.js';

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
