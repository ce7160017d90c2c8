import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@mgw/testing';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

export interface ApiProcess {
  url: string;
  metricsUrl: string;
  output: string[];
  stop(): Promise<void>;
}

/**
 * The real API (`services/api/src/main.ts`) as a process of its own, for measurements the test
 * process must not disturb (its event loop, its timings): the client is this process, the server
 * is that one.
 */
export async function startApiProcess(env: Record<string, string> = {}): Promise<ApiProcess> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    ['--conditions=development', '--import', 'tsx', 'services/api/src/main.ts'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output: string[] = [];
  const collect = (d: Buffer) => output.push(...d.toString().split('\n').filter(Boolean));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`api exited:\n${output.join('\n')}`);
      return (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200;
    },
    { timeoutMs: 30_000, what: 'the api process ready' },
  );
  return {
    url,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
