/**
 * What every service of a stack (stack.ts) starts with: the simulator's address (the simulator
 * is started here, in this process or its own) and the settings of a test run — no pacing, the
 * account-safety caps off, short leases, rate limits out of the way — under the suite's own `env`.
 */
import { SANDBOX_NUMBER, startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { startSimulator, type SimulatorHandle } from '@mgw/messenger-sim';
import {
  requireFreshBuild,
  runFromBuild,
  startSimulatorProcess,
  type SimulatorEndpoint,
} from './simulator-process.js';
import type { StackOptions } from './stack-options.js';

/**
 * Starts the stack's simulators (the Cloud API's too, with `cloud`); answers them, the stack's
 * device id and its services' environment.
 */
export async function startStackEnv(opts: StackOptions, redisEnv: Record<string, string>) {
  if (opts.built) requireFreshBuild();
  if (opts.simulatorProcess && opts.sim) throw new Error('sim options need the in-process simulator');
  const sim: SimulatorEndpoint & { handle?: SimulatorHandle } = opts.simulatorProcess
    ? await startSimulatorProcess({ built: opts.built ?? runFromBuild() })
    : await startSimulator({ port: 0, ...opts.sim }).then((handle) => ({ ...handle, handle }));
  let cloud: CloudSimHandle | undefined;
  try {
    if (opts.cloud)
      cloud = await startCloudSim(opts.cloud === true ? { numbers: [{ ...SANDBOX_NUMBER }] } : opts.cloud);
  } catch (err) {
    await sim.close();
    throw err;
  }
  const deviceId = opts.deviceId ?? `e2e-${Math.random().toString(36).slice(2, 8)}`;
  const env = {
    ...redisEnv,
    MESSENGER_SANDBOX_URL: sim.controlUrl,
    // Sandbox mode (MESSENGER_SANDBOX_URL) lets the Graph client reach the simulator on loopback.
    ...(cloud ? { CLOUD_GRAPH_URL: cloud.url } : {}),
    SEND_MIN_GAP_MS: '0',
    SEND_GAP_JITTER_MS: '0',
    SEND_BACKOFF_MS: '200',
    // Account-safety caps off unless a suite turns them on (services/sender/test/e2e/account-safety).
    SEND_DAILY_CAP: '0',
    SEND_WARMUP_CAPS: 'off',
    SEND_FIRST_CONTACT_CAP: '0',
    LEASE_TTL_MS: '6000',
    LEASE_RENEW_MS: '1000',
    LEASE_SCAN_MS: '500',
    LOG_LEVEL: 'info',
    NODE_ENV: 'test',
    RATE_LIMIT_SEND: '100000',
    RATE_LIMIT_OTP: '100000',
    RATE_LIMIT_STATUS: '100000',
    RATE_LIMIT_CONNECT: '100000',
    RATE_LIMIT_DISCONNECT: '100000',
    RATE_LIMIT_MESSAGES: '100000',
    RATE_LIMIT_CONTACTS: '100000',
    ...opts.env,
  };
  return { sim, cloud, deviceId, env };
}
