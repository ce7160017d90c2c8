import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository's root (this file is `libs/testing/src/…` or, built, `libs/testing/dist/…`). */
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Where `.ci/run` unpacks the Node of `.node-version` (git-ignored). */
export const PINNED_NODE_DIR = path.join(REPO_ROOT, '.node24');

/** `a >= b` for dotted versions (`22.5.0`). */
function atLeast(a: string, b: string): boolean {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return true;
}

async function versionOf(bin: string): Promise<string | undefined> {
  if (!existsSync(bin)) return undefined;
  try {
    return (await run(bin, ['-p', 'process.versions.node'], { timeout: 10_000 })).stdout.trim();
  } catch {
    return undefined;
  }
}

/**
 * A Node binary of version `min` or later, for a program the tests start that needs a newer Node
 * than the machine's (fauxqs needs 22.5 for `node:sqlite`; the suite itself also runs on Node 20):
 * this process's own Node when new enough; else the repository's `.node24/bin/node`; else that
 * one unpacked now the way `.ci/run` does it — the registry's `node-linux-<arch>` package of the
 * version in `.node-version` (the official binary, no install script, checked by `npm pack`
 * against the registry's integrity hash). Unpacked in a directory of its own and moved into place
 * with one rename, so test processes doing it at once do not see half a file. Rejects with the
 * reason when none can be had (the test then fails; it never skips).
 */
export async function nodeAtLeast(min: string): Promise<string> {
  if (atLeast(process.versions.node, min)) return process.execPath;
  const pinned = path.join(PINNED_NODE_DIR, 'bin', 'node');
  const have = await versionOf(pinned);
  if (have && atLeast(have, min)) return pinned;
  const version = (await readFile(path.join(REPO_ROOT, '.node-version'), 'utf8')).trim();
  if (!atLeast(version, min))
    throw new Error(`.node-version (${version}) is older than the Node ${min} needed`);
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch as string];
  if (process.platform !== 'linux' || !arch)
    throw new Error(
      `no Node ${min} here (this is Node ${process.versions.node}) and no package for ${process.platform}-${process.arch}`,
    );
  await mkdir(PINNED_NODE_DIR, { recursive: true });
  const work = await mkdtemp(path.join(PINNED_NODE_DIR, '.unpack-'));
  try {
    const tarball = (
      await run('npm', ['pack', '--silent', `node-linux-${arch}@${version}`], { cwd: work, timeout: 300_000 })
    ).stdout
      .trim()
      .split('\n')
      .pop()!;
    await run(
      'tar',
      ['-xzf', path.join(work, tarball), '-C', work, '--strip-components=1', 'package/bin/node'],
      {
        timeout: 120_000,
      },
    );
    await mkdir(path.dirname(pinned), { recursive: true });
    await rename(path.join(work, 'bin', 'node'), pinned);
  } catch (err) {
    throw new Error(
      `no Node ${min} here (this is Node ${process.versions.node}) and unpacking node-linux-${arch}@${version} into ${PINNED_NODE_DIR} failed: ${(err as Error).message}`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const got = await versionOf(pinned);
  if (!got || !atLeast(got, min))
    throw new Error(`${pinned} is Node ${got ?? '(none)'}, not ${min} or later`);
  return pinned;
}
