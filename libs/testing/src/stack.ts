/**
 * End-to-end harness: the real services as separate processes, a real Redis, and the WhatsApp
 * Web simulator (in this process, or its own with `simulatorProcess`), wired together exactly as
 * `MESSENGER_SANDBOX=1 npm start` wires them; the services run from the build as `npm start` runs
 * them when it is fresh (`npm test` builds first), else from their sources through tsx (`built`,
 * `MGW_TEST_RUN_FROM`: see runFromBuild). Each stack gets its own Redis database, flushed at start, so stacks never see
 * each other's devices, queues or tokens.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import {
  SANDBOX_NUMBER,
  SANDBOX_VERIFY_TOKEN,
  subscribeWhenReady,
  type CloudSimHandle,
} from '@mgw/cloud-sim';
import type { InboxMessage, SimulatorHandle } from '@mgw/messenger-sim';
import { Encryption, TokenStore } from '@mgw/store';
import { nodeArgsOf } from '@mgw/testing/node-args';
import { fastLink, type FastLinked } from './fast-link.js';
import { freePort, waitFor } from './net.js';
import type { ClusterHandle } from './redis-cluster.js';
import type { SentinelHandle } from './redis-sentinel.js';
import { startStackRedis, type StackRedis } from './stack-redis.js';
import {
  entryArgs,
  ORPHAN_GUARD_ARGS,
  REPO_ROOT as ROOT,
  runFromBuild,
  TSX_ARGS,
  type SimulatorEndpoint,
} from './simulator-process.js';
import { StackClient } from './stack-client.js';
import type { ServiceName, ServiceProcess, StackOptions } from './stack-options.js';
import { startStackEnv } from './stack-env.js';
import { noteStarted } from './stack-timing.js';

export type { InboxMessage };

export type { ServiceName, ServiceProcess, StackOptions } from './stack-options.js';

/** A running stack: its processes, its Redis and how to start, stop and crash them (calls: StackClient). */
export class Stack extends StackClient {
  readonly processes: ServiceProcess[] = [];
  /** Where the services run from unless `startService` says otherwise (`serviceRoot`). */
  private serviceRoot = ROOT;

  readonly redis: Redis | Cluster;
  readonly redisUrl: string;

  private constructor(
    simulator: SimulatorEndpoint & { handle?: SimulatorHandle },
    private readonly backing: StackRedis,
    readonly deviceId: string,
    private readonly env: Record<string, string>,
    private readonly built = false,
    private readonly cloudSim?: CloudSimHandle,
  ) {
    super(simulator);
    this.redis = backing.client;
    this.redisUrl = backing.url;
  }

  /** The in-process simulator (not with `simulatorProcess`: use `simulator` and `simApi`). */
  get sim(): SimulatorHandle {
    if (!this.simulator.handle) {
      throw new Error(
        'this stack runs the simulator as its own process: use stack.simulator and stack.simApi',
      );
    }
    return this.simulator.handle;
  }

  /** Stops the cloud simulator's subscription attempts (see `start`). */
  private stopSubscribing: () => void = () => undefined;
  private subscribed?: Promise<void>;

  /**
   * Resolves once the Cloud API simulator's app is subscribed to the gateway's Meta endpoint (a
   * device holds the sandbox's verify token): from then on what contacts write reaches the gateway.
   */
  cloudSubscribed(timeoutMs = 30_000): Promise<void> {
    if (!this.subscribed) return Promise.reject(new Error('this stack subscribes no Cloud API webhooks'));
    return Promise.race([
      this.subscribed,
      new Promise<void>((_, reject) =>
        setTimeout(
          () => reject(new Error(`the Cloud API simulator did not subscribe within ${timeoutMs} ms`)),
          timeoutMs,
        ).unref(),
      ),
    ]);
  }

  /** The Cloud API simulator (`cloud` option): the Graph API the services' CLOUD_GRAPH_URL names. */
  get cloud(): CloudSimHandle {
    if (!this.cloudSim) throw new Error('this stack was started without cloud');
    return this.cloudSim;
  }

  private sealer?: Encryption;

  /** Seals and opens values as the stack's services do (their MGW_ENCRYPTION_KEY). */
  get encryption(): Encryption {
    return (this.sealer ??= Encryption.fromEnv({ ...process.env, ...this.env }));
  }

  /**
   * Links an account by the fast link (benches and tests: fast-link.ts) — the stack's device, or
   * the one `token` acts on — and waits for `connected`, as `linkByQr` does: the simulator
   * provisions the companion and the link's records are written as the connection service
   * writes them after pair-success. `fastLinkMany(stack, …)` links thousands at once.
   */
  async fastLink(phone: string, name = 'E2E Account', token = this.token): Promise<FastLinked> {
    const deviceId = token === this.token ? this.deviceId : await this.deviceOf(token);
    const linked = await fastLink(this, { phone, deviceId, name });
    await this.waitForStatus('connected', 30_000, token);
    return linked;
  }

  /** The device an API token acts on (the test kit's tokens all name one). */
  private async deviceOf(token: string): Promise<string> {
    const check = await new TokenStore(this.redis).verify(token);
    if (!check.ok) throw new Error(`not a token of this stack (${check.reason})`);
    if (!check.token.deviceId) throw new Error('the token names no device');
    return check.token.deviceId;
  }

  /** The stack's Redis Cluster (`redisCluster` option). */
  get cluster(): ClusterHandle {
    if (!this.backing.cluster) throw new Error('this stack was started without redisCluster');
    return this.backing.cluster;
  }

  /** The stack's Redis Sentinel setup (`redisSentinel` option). */
  get sentinel(): SentinelHandle {
    if (!this.backing.sentinel) throw new Error('this stack was started without redisSentinel');
    return this.backing.sentinel;
  }

  static async start(opts: StackOptions = {}): Promise<Stack> {
    noteStarted('stack');
    const backing = await startStackRedis(opts);
    let env: Awaited<ReturnType<typeof startStackEnv>>;
    try {
      env = await startStackEnv(opts, backing.env);
    } catch (err) {
      await backing.stop();
      throw err;
    }
    const built = opts.built ?? runFromBuild();
    const stack = await Stack.startServices(
      new Stack(env.sim, backing, env.deviceId, env.env, built, env.cloud),
      opts,
    );
    // As the sandbox's CLI does: the simulator's app subscribes to the gateway's Meta endpoint once
    // a device holds the sandbox's verify token.
    if (env.cloud && stack.apiUrl && opts.cloudWebhooks !== false) {
      let done = () => undefined as void;
      stack.subscribed = new Promise<void>((resolve) => (done = resolve));
      stack.stopSubscribing = subscribeWhenReady(
        env.cloud,
        `${stack.apiUrl}/api/cloud/v1/webhook`,
        done,
        250,
      );
    }
    return stack;
  }

  private static async startServices(stack: Stack, opts: StackOptions): Promise<Stack> {
    stack.serviceRoot = opts.serviceRoot ?? ROOT;
    try {
      // `senders` sender processes (0: none holds the devices); the all-in-one process hosts one.
      const senders = (count: number) => Array.from({ length: Math.max(0, count) }, () => 'sender' as const);
      const services: ServiceName[] = opts.allInOne
        ? ['all-in-one', ...senders((opts.senders ?? 1) - 1)]
        : [
            'api',
            'connection',
            ...senders(opts.senders ?? 1),
            ...(opts.notifier ? (['notifier'] as const) : []),
          ];
      await Promise.all(services.map((name) => stack.startService(name)));
      stack.token = await stack.createToken(stack.deviceId);
    } catch (err) {
      await stack.stop();
      throw err;
    }
    return stack;
  }

  /**
   * Starts one service process and waits until its /readyz answers 200. `run.wrapper` starts it
   * under another program (`['valgrind', '--tool=callgrind', …]`, followed by node and its
   * arguments), given `run.readyTimeoutMs` to become ready (60 s: four services starting at once under a
   * loaded CI run took over 30); `run.root` runs it from that
   * tree (`REPO_ROOT`: this checkout) instead of the stack's `serviceRoot`.
   */
  async startService(
    name: ServiceName,
    env: Record<string, string> = {},
    run: { wrapper?: readonly string[]; readyTimeoutMs?: number; root?: string } = {},
  ): Promise<ServiceProcess> {
    // A port this stack drew can still be taken by another process before the service binds it:
    // then it starts again on new ones (twice at most). A PORT given is kept, and its error shown.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startServiceOnce(name, env, run);
      } catch (err) {
        const taken = err instanceof PortTakenError;
        if (!taken || env.PORT || attempt === 3) throw taken ? err.cause : err;
      }
    }
  }

  private async startServiceOnce(
    name: ServiceName,
    env: Record<string, string>,
    run: { wrapper?: readonly string[]; readyTimeoutMs?: number; root?: string },
  ): Promise<ServiceProcess> {
    const root = run.root ?? this.serviceRoot;
    // A PORT given keeps the service's address (an API restarted where its clients reconnect).
    const port = env.PORT ? Number(env.PORT) : await freePort();
    const withApi = name === 'api' || name === 'all-in-one';
    const metricsPort = withApi ? await freePort() : port;
    const portEnv = withApi
      ? { PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: String(metricsPort) }
      : { METRICS_PORT: String(port) };
    const args = [
      ...ORPHAN_GUARD_ARGS,
      ...nodeArgsOf(name),
      ...this.entryIn(root, `services/${name}`, 'main'),
    ];
    const [command, ...commandArgs] = [...(run.wrapper ?? []), process.execPath, ...args];
    const child = spawn(command!, commandArgs, {
      cwd: root,
      env: { ...process.env, ...this.env, ...portEnv, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    const collect = (d: Buffer) => {
      for (const line of d.toString().split('\n')) if (line) output.push(line);
      if (output.length > 5000) output.splice(0, output.length - 5000);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const proc: ServiceProcess = {
      name: `${name}#${this.processes.length}`,
      child,
      port,
      metricsPort,
      output,
      exited,
    };
    this.processes.push(proc);
    if (withApi) this.apiUrl = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        if (child.exitCode !== null) {
          const exit = new Error(`${name} exited with ${child.exitCode}:\n${output.slice(-30).join('\n')}`);
          if (!output.some((line) => line.includes('EADDRINUSE'))) throw exit;
          this.processes.splice(this.processes.indexOf(proc), 1);
          throw new PortTakenError(exit);
        }
        // The all-in-one process is ready on its ops port once every part is.
        const probe = name === 'all-in-one' ? metricsPort : port;
        const res = await fetch(`http://127.0.0.1:${probe}/readyz`).catch(() => undefined);
        return res?.status === 200;
      },
      // MGW_TEST_READY_TIMEOUT_MS: a longer wait on a machine shared by many test runs.
      {
        timeoutMs: run.readyTimeoutMs ?? Number(process.env.MGW_TEST_READY_TIMEOUT_MS ?? 60_000),
        what: `${name} ready`,
      },
    );
    return proc;
  }

  senders(): ServiceProcess[] {
    return this.processes.filter(
      (p) => p.name.startsWith('sender') && p.child.exitCode === null && p.child.signalCode === null,
    );
  }

  /**
   * Makes the device `token` acts on the Cloud API simulator's sandbox number (`PUT /cloud`, as a
   * client does; the stack's `cloud` option): throws with the answer unless it is taken. The
   * device then holds the sandbox's verify token, so the simulator's app subscribes (cloudSubscribed).
   */
  async configureSandboxCloud(token: string): Promise<void> {
    const put = await this.api(
      'PUT',
      '/cloud',
      {
        phoneNumberId: SANDBOX_NUMBER.id,
        wabaId: SANDBOX_NUMBER.wabaId,
        accessToken: SANDBOX_NUMBER.accessToken,
        appSecret: SANDBOX_NUMBER.appSecret,
        verifyToken: SANDBOX_VERIFY_TOKEN,
      },
      token,
    );
    if (put.status !== 200) throw new Error(`PUT /cloud answered ${put.status}: ${JSON.stringify(put.body)}`);
  }

  /** Creates an API token with the real token CLI; returns its value (the CLI's last line). */
  async createToken(deviceId?: string): Promise<string> {
    const args = [...this.entryIn(this.serviceRoot, 'services/api', 'cli/token'), 'create', '--name', 'e2e'];
    if (deviceId) args.push('--device', deviceId);
    const out = await run(process.execPath, args, { ...process.env, ...this.env });
    const last = out.trim().split('\n').pop() ?? '';
    if (!last) throw new Error('token CLI printed nothing');
    return last.trim();
  }

  /** Runs a CLI of the repository (e.g. `services/api/src/cli/encryption.ts`) with the stack's environment. */
  runCli(entry: string, args: string[]): Promise<string> {
    return run(process.execPath, [...TSX_ARGS, entry, ...args], { ...process.env, ...this.env });
  }

  /** A package's entry point in `root`: this checkout's (sources or build), another tree's build. */
  private entryIn(root: string, pkgDir: string, entry: string): string[] {
    return root === ROOT
      ? entryArgs(pkgDir, entry, this.built)
      : [path.join(root, pkgDir, 'dist', `${entry}.js`)];
  }

  /** Log lines of every process, for a failing test's report. */
  dumpLogs(lines = 40): string {
    return this.processes.map((p) => `--- ${p.name}\n${p.output.slice(-lines).join('\n')}`).join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.processes.map(async (p) => {
        if (p.child.exitCode !== null || p.child.signalCode !== null) return;
        p.child.kill('SIGTERM');
        const timer = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
        await p.exited;
        clearTimeout(timer);
      }),
    );
    await this.simulator.close();
    this.stopSubscribing();
    await this.cloudSim?.close();
    await this.backing.stop();
  }

  /** Crashes the stack's private Redis (SIGKILL); its data stays on disk for `restartRedis`. */
  async killRedis(): Promise<void> {
    await this.backing.kill();
  }

  /** Starts the private Redis again on the same port, from its AOF. */
  async restartRedis(): Promise<void> {
    await this.backing.restart();
  }
}

/** Runs a command from the repository root; resolves with its stdout, rejects with its stderr. */
export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')}: ${code}\n${err}`)),
    );
  });
}

/** A service exited because a port drawn for it was taken meanwhile (`cause`: its exit). */
class PortTakenError extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}
