/**
 * What a stack is asked for and what it runs (`Stack` in stack.ts): apart from the stack, which
 * its client (stack-client.ts) and its environment (stack-env.ts) serve and which imports them.
 */
import type { ChildProcess } from 'node:child_process';
import type { CloudSimOptions } from '@mgw/cloud-sim';
import type { startSimulator } from '@mgw/messenger-sim';
import type { StackRedisOptions } from './stack-redis.js';

export type ServiceName = 'api' | 'connection' | 'sender' | 'notifier' | 'all-in-one';

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  /** The service's HTTP port: `PORT` for the api, `METRICS_PORT` for the others. */
  port: number;
  /** The port of /metrics, /healthz and /readyz (`METRICS_PORT`; for the api, apart from `port`). */
  metricsPort: number;
  /** Everything the process printed (JSON log lines), for assertions and failure reports. */
  output: string[];
  exited: Promise<number | null>;
}

/** `privateRedis`, `redisCluster`, `redisSentinel`: where the stack's Redis is (`stack-redis.ts`). */
export interface StackOptions extends StackRedisOptions {
  /** How many sender processes to start (default 1). */
  senders?: number;
  /** Also start the notifier (webhook deliveries); off by default, as most suites send no events. */
  notifier?: boolean;
  /**
   * Run the api, connection, sender and notifier as the one all-in-one process
   * (`services/all-in-one`) instead of a process each; `senders` above 1 adds sender processes
   * beside it.
   */
  allInOne?: boolean;
  /** Extra environment for every service. */
  env?: Record<string, string>;
  /**
   * Also run the Cloud API simulator (in this process; `stack.cloud`) and point the services'
   * CLOUD_GRAPH_URL at it: `true` for the sandbox's number (SANDBOX_NUMBER), or its options.
   */
  cloud?: true | CloudSimOptions;
  /**
   * With `cloud`: whether the simulator's app subscribes to the gateway's Meta endpoint, as the
   * sandbox does (default true: it asks every 250 ms, an API request and log line each, until a
   * device holds the sandbox's verify token). False for suites that need the Graph API only.
   */
  cloudWebhooks?: boolean;
  /** Simulator options (in-process simulator only). */
  sim?: Parameters<typeof startSimulator>[0];
  /**
   * Run the simulator as its own process (its CLI, as `npm start` does), so its CPU is not this
   * process's; `stack.sim` is then unavailable (use `simulator` and `simApi`).
   */
  simulatorProcess?: boolean;
  /**
   * Run the services (and the simulator process, and the token CLI) from the build, as `npm start`
   * and the image do (true: throws unless the build is fresh), or from their sources through tsx
   * (false). Unset: runFromBuild() decides (the build when it is fresh).
   */
  built?: boolean;
  /** Device the stack's token acts on (default: a fresh id). */
  deviceId?: string;
  /**
   * Run the services and the token CLI from the build of another tree of this repository — an
   * earlier release, for an upgrade test (`buildPreviousVersion`) — as
   * `node <serviceRoot>/services/<name>/dist/main.js`, with the same environment and ports; the
   * simulator stays this checkout's. `startService(name, env, { root: REPO_ROOT })` then starts
   * this checkout's service on the same stack.
   */
  serviceRoot?: string;
}
