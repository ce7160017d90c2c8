import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';

/** The repository's root (where eslint.config.js is), with its trailing slash. */
export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

let shared: ESLint | undefined;

/**
 * One ESLint on the repository's configuration for every lint test a mocha worker runs: loading
 * eslint.config.js (typescript-eslint and its parser) costs a second or two of CPU, paid once.
 */
export function eslint(): ESLint {
  return (shared ??= new ESLint({ cwd: ROOT }));
}

/** The messages of linting `code` as if it were the file at `filePath` (from the root). */
export async function lintAs(filePath: string, code: string): Promise<ESLint.LintResult['messages']> {
  const [result] = await eslint().lintText(code, { filePath: `${ROOT}${filePath}` });
  return result!.messages;
}
