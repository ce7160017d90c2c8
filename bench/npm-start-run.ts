/**
 * What the repository-level benches share: `npm start` run as a newcomer runs it (sandbox mode, its
 * own Redis and data directory, free ports), timed to its `ready:` line, its service processes
 * found and measured, and one device linked through the sandbox's simulated phone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort, run, waitFor } from '@mgw/testing';
import { processTree } from '../test/support/process-tree.js';

export interface GatewayRun {
  child: ChildProcess;
  /** Everything it printed so far. */
  output: () => string;
  /** From the spawn of `npm start` to its `ready:` line. */
  readyMs: number;
  api: string;
  sandbox: string;
  env: NodeJS.ProcessEnv;
  stop: () => Promise<void>;
}

/** The environment of a sandbox `npm start` on free ports, its data (and Redis) in `dataDir`. */
export async function sandboxEnv(
  dataDir: string,
  extra: Record<string, string> = {},
): Promise<NodeJS.ProcessEnv> {
  const [redis, api, sandbox, m0, m1, m2, m3] = await Promise.all(
    Array.from({ length: 7 }, () => freePort()),
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: `redis://127.0.0.1:${redis}`,
    MGW_DATA_DIR: dataDir,
    PORT: String(api),
    SANDBOX_PORT: String(sandbox),
    API_METRICS_PORT: String(m0),
    CONNECTION_METRICS_PORT: String(m1),
    SENDER_METRICS_PORT: String(m2),
    NOTIFIER_METRICS_PORT: String(m3),
    MESSENGER_SANDBOX: '1',
    ...extra,
  };
  for (const name of ['MESSENGER_SANDBOX_URL', 'MGW_ENCRYPTION_KEY', 'ADMIN_PASSWORD', 'HOST'])
    delete env[name];
  return env;
}

/** Runs `npm start` in `root` with `env` until it prints `ready:` (or fails after `timeoutMs`). */
export async function startGateway(
  root: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 600_000,
): Promise<GatewayRun> {
  let output = '';
  const started = Date.now();
  const child = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ready: line within ${timeoutMs} ms\n${output}`)),
      timeoutMs,
    );
    const read = (d: Buffer) => {
      output += d.toString();
      if (/^\[start\] ready: /m.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}) before ready:\n${output}`));
    });
  });
  return {
    child,
    output: () => output,
    readyMs: Date.now() - started,
    api: `http://127.0.0.1:${env.PORT}`,
    sandbox: `http://127.0.0.1:${env.SANDBOX_PORT}`,
    env,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The gateway's service processes under `npm start` (its simulator and Redis left out): name -> pid. */
export function servicePids(run: GatewayRun): Map<string, number> {
  const pids = new Map<string, number>();
  for (const row of processTree(run.child.pid!)) {
    const m = /services\/([a-z-]+)\/dist\/main\.js/.exec(row.command);
    if (m) pids.set(m[1]!, row.pid);
  }
  return pids;
}

/** A process's resident memory (VmRSS), MiB. */
export function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/** Links one device through the sandbox's simulated phone (token CLI, /connect, the phone scans). */
export async function linkOneDevice(root: string, gw: GatewayRun, phone = '15550000001'): Promise<string> {
  const out = await run(
    process.execPath,
    [`${root}/services/api/dist/cli/token.js`, 'create', '--name', 'bench'],
    gw.env,
  );
  const token = out.trim().split('\n').pop()!;
  const call = async (method: string, p: string) => {
    const res = await fetch(`${gw.api}/api/messenger/v1${p}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
    });
    return (await res.json()) as { qrCode?: string; status?: string };
  };
  const connect = await call('POST', '/connect');
  const qr = connect.qrCode;
  const link = await fetch(`${gw.sandbox}/phone/link`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ qr, phone, name: 'Bench Account' }),
  });
  if (!link.ok) throw new Error(`the simulated phone did not link: ${link.status} ${await link.text()}`);
  await waitFor(async () => (await call('GET', '/status')).status === 'connected', {
    timeoutMs: 60_000,
    what: 'the device connected',
  });
  return token;
}
