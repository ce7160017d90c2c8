import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one of the API's CLIs (`services/api/src/cli/<name>.ts`) from the checkout's root the way
 * its `npm run -s` script does, with the environment given (by default this process's, silenced).
 */
export function runApiCli(
  name: 'token' | 'encryption',
  args: string[],
  env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' },
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=development', '--import', 'tsx', `services/api/src/cli/${name}.ts`, ...args],
      { cwd: ROOT, env },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs the token CLI the way `npm run -s token --` does. */
export const tokenCli = (...args: string[]) => runApiCli('token', args);

/** The last line of a CLI's output (where the token CLI prints a new token's value). */
export const lastLine = (s: string) => s.trimEnd().split('\n').at(-1)!;
