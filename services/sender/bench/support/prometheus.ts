/**
 * A real Prometheus server for a bench: the `prometheus` binary from PATH (Debian's `prometheus`
 * package; .ci/run installs it) on a free 127.0.0.1 port, with a config written to a temporary
 * directory that also holds its storage. It scrapes the given targets and evaluates the given rule
 * files as they are; `stop` kills it and removes the directory. It runs under `timeout`, so it
 * stops by itself even if the bench that started it dies without stopping it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitFor } from '@mgw/testing';

export interface PrometheusOptions {
  /** Scrape jobs: job name → `host:port` targets (all on 127.0.0.1). */
  jobs: Record<string, string[]>;
  /** Rule files, loaded unchanged (absolute paths). */
  ruleFiles: string[];
  /** Scrape and rule-evaluation interval (s). */
  intervalS: number;
  /** The server is killed after this long (s) whatever happens to this process. */
  lifetimeS: number;
}

/** One alert of /api/v1/alerts (pending or firing). */
export interface PrometheusAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
  value: string;
}

export interface PrometheusHandle {
  url: string;
  /** An instant query: each series' labels and value. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** The pending and firing alerts. */
  alerts(): Promise<PrometheusAlert[]>;
  /** The alerting rules as loaded: name, query and `for` (s). */
  alertingRules(): Promise<{ name: string; query: string; duration: number }[]>;
  /** The server's version. */
  version(): Promise<string>;
  stop(): Promise<void>;
}

export async function startPrometheus(opts: PrometheusOptions): Promise<PrometheusHandle> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-bench-prometheus-'));
  const config = {
    global: { scrape_interval: `${opts.intervalS}s`, evaluation_interval: `${opts.intervalS}s` },
    rule_files: opts.ruleFiles,
    scrape_configs: Object.entries(opts.jobs).map(([job, targets]) => ({
      job_name: job,
      metrics_path: '/metrics',
      static_configs: [{ targets }],
    })),
  };
  // JSON is YAML: Prometheus reads it as its config.
  await writeFile(path.join(dir, 'prometheus.yml'), JSON.stringify(config, null, 2));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    'timeout',
    [
      '--kill-after=10',
      String(Math.ceil(opts.lifetimeS)),
      'prometheus',
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const output: string[] = [];
  child.stderr.on('data', (d: Buffer) => {
    output.push(...d.toString().split('\n').filter(Boolean));
    if (output.length > 200) output.splice(0, output.length - 200);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // This process may end without calling stop (an uncaught error ends it through process.exit).
  const killNow = () => child.kill('SIGKILL');
  process.once('exit', killNow);

  const stop = async () => {
    process.off('exit', killNow);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM'); // timeout passes it on to prometheus
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  async function api<T>(p: string): Promise<T> {
    const res = await fetch(`${url}${p}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${p}: ${body.error ?? res.status}`);
    return body.data;
  }

  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) {
          throw new Error(`prometheus exited with ${child.exitCode}:\n${output.slice(-20).join('\n')}`);
        }
        const res = await fetch(`${url}/-/ready`).catch(() => undefined);
        return res?.status === 200;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'prometheus ready' },
    );
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    url,
    async query(expr) {
      const data = await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
        `/api/v1/query?query=${encodeURIComponent(expr)}`,
      );
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async alerts() {
      return (await api<{ alerts: PrometheusAlert[] }>('/api/v1/alerts')).alerts;
    },
    async alertingRules() {
      const data = await api<{
        groups: { rules: { type: string; name: string; query: string; duration: number }[] }[];
      }>('/api/v1/rules?type=alert');
      return data.groups.flatMap((g) =>
        g.rules.map(({ name, query, duration }) => ({ name, query, duration })),
      );
    },
    async version() {
      return (await api<{ version: string }>('/api/v1/status/buildinfo')).version;
    },
    stop,
  };
}
