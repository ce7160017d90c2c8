import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface ScriptRun {
  code: number | null;
  /** The JSON lines it wrote to stdout (its log). */
  lines: Record<string, unknown>[];
  stderr: string;
}

/**
 * Runs an ES module's source in a child Node process from the repository root (so `@mgw/*`
 * resolve to their sources): for what a test cannot do in mocha's own process, such as signals,
 * crashes and process.exit.
 */
export async function runScript(script: string): Promise<ScriptRun> {
  const child = spawn(
    process.execPath,
    ['--conditions=development', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, lines, stderr };
}
