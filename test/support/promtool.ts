import { spawn } from 'node:child_process';

const INSTALL_HINT =
  'promtool is missing: install Debian\'s "prometheus" package ' +
  '(apt-get install -y --no-install-recommends prometheus) or put a promtool binary from a Prometheus ' +
  'release on PATH; .ci/run installs it';

/**
 * Lints a Prometheus text exposition with `promtool check metrics` (names, HELP, TYPE, units,
 * counter suffixes). Resolves when promtool is silent and exits 0; otherwise throws with its output.
 * Serve it our own registry only: prom-client's default Node metrics do not pass the linter.
 */
export function checkMetricsExposition(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'ENOENT' ? new Error(INSTALL_HINT) : err),
    );
    child.on('close', (code) => {
      if (code === 0 && output.trim() === '') resolve();
      else reject(new Error(`promtool check metrics (exit ${code}) found problems:\n${output.trim()}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(text);
  });
}

/**
 * Keeps only the metric families whose name starts with `prefix` (HELP, TYPE and sample lines).
 * A service's /metrics also carries prom-client's default Node metrics, some of which promtool
 * rejects (gauges named `*_total`): scrape, filter with this, then `checkMetricsExposition`.
 */
export function ownMetricFamilies(text: string, prefix = 'mgw_'): string {
  const kept = text.split('\n').filter((line) => {
    const name = line.startsWith('# ') ? line.split(' ')[2] : line.split(/[{\s]/)[0];
    return !!name && name.startsWith(prefix);
  });
  return kept.length ? kept.join('\n') + '\n' : '';
}
