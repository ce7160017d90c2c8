/**
 * An earlier release of the gateway, built, for the upgrade-in-place test (test/e2e/
 * upgrade-in-place.test.ts): its services run from that tree (`Stack`'s `serviceRoot`) against a
 * Redis that this checkout's services then take over.
 *
 * The tree comes from the repository's history (`git archive`: nothing is written into the
 * checkout or its `.git`), is installed with `npm ci` (offline first: the cache is warm right after
 * the checkout's own `npm ci`) and built with `npm run build`, in the system temp directory. The
 * built tree is kept there, keyed by commit, platform and CPU, and reused by every later run — CI
 * runs the suite on two Node versions in a row, and the tree serves both: its build is plain
 * JavaScript and the native addons in its `node_modules` are Node-API builds, one binary for every
 * Node (the same reason `.ci/run` shares one `node_modules` between them). A tree is built under a
 * temporary name and renamed once complete, so an interrupted build is never taken for a cache.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pidAlive } from './server-process.js';
import { REPO_ROOT } from './simulator-process.js';

/**
 * The release the upgrade test starts from: the last one production may still run, so an upgrade
 * from it to this code must lose nothing. Move it forward (any commit of this repository's
 * history; a short hash is fine) when a release that production has rolled out changed a stored
 * format — Redis keys, records, scripts' data, job payloads, auth state — and say which versions
 * upgrade in place in docs/operations.md ("Upgrades"); docs/development.md ("Upgrades in place")
 * says how, and what to do when a change cannot read the old format.
 */
export const UPGRADE_BASE_COMMIT = 'a684f5a';

export interface PreviousVersion {
  /** The full commit id. */
  commit: string;
  /** The commit as given (e.g. `e93f0ad`), for messages. */
  name: string;
  /** The built tree: `<root>/services/<name>/dist/main.js` are its services. */
  root: string;
  /** True when this call found the tree built by an earlier run. */
  cached: boolean;
}

/**
 * The tree of `commit` (default {@link UPGRADE_BASE_COMMIT}), installed and built; reuses the
 * cached one. Throws, saying how to fix it, when git or the commit is missing (a shallow clone).
 */
export async function buildPreviousVersion(
  commit: string = UPGRADE_BASE_COMMIT,
  log: (line: string) => void = () => undefined,
): Promise<PreviousVersion> {
  const full = await resolveCommit(commit);
  const root = path.join(os.tmpdir(), `mgw-previous-${full}-${process.platform}-${process.arch}`);
  if (existsSync(path.join(root, BUILT_MARK))) return { commit: full, name: commit, root, cached: true };
  await removeAbandonedBuilds(path.basename(root));
  const work = await mkdtemp(`${root}.partial-${process.pid}-`);
  try {
    log(`building ${commit} in ${work} (git archive, npm ci, npm run build)`);
    await extract(full, work);
    await sh('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], work);
    await sh('npm', ['run', 'build'], work);
    await writeFile(path.join(work, BUILT_MARK), `${full}\n`);
    await rename(work, root).catch(async (err: NodeJS.ErrnoException) => {
      // Another run finished the same build first: use its tree.
      if (!existsSync(path.join(root, BUILT_MARK))) throw err;
      await rm(work, { recursive: true, force: true });
    });
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw new Error(`building the upgrade base ${commit} failed: ${(err as Error).message}`);
  }
  return { commit: full, name: commit, root, cached: false };
}

/** Written last into a complete tree (before its rename): its presence means "built". */
const BUILT_MARK = '.mgw-built';

/** The full id of `commit` in the checkout's history; a clear error when it cannot be had. */
async function resolveCommit(commit: string): Promise<string> {
  const howToFix =
    'the upgrade test builds that release from the repository history: run it in a full git clone ' +
    '(`git fetch --unshallow`; on CI, check out with the full history, e.g. fetch-depth: 0)';
  let out: string;
  try {
    out = await sh('git', ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`], REPO_ROOT);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error(
        `git is not installed, so the upgrade base ${commit} cannot be read: install git; ${howToFix}`,
      );
    // `--quiet` says nothing of a missing commit; anything git did say (not a repository, an
    // unsafe directory) is the better reason.
    const said = (err as Error).message.split('\n').slice(1).join(' ').trim();
    throw new Error(
      `commit ${commit} (the upgrade base) is not in this checkout's history — a shallow clone, or not a git checkout: ${howToFix}` +
        (said ? ` (git: ${said})` : ''),
    );
  }
  return out.trim();
}

/** Removes half-built trees of this cache entry whose builder process is gone. */
async function removeAbandonedBuilds(base: string): Promise<void> {
  const tmp = os.tmpdir();
  const prefix = `${base}.partial-`;
  for (const name of await readdir(tmp)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number.parseInt(name.slice(prefix.length), 10);
    if (!pidAlive(pid)) await rm(path.join(tmp, name), { recursive: true, force: true });
  }
}

/** `git archive <commit> | tar -x -C <dir>`: the commit's files, read from the history only. */
function extract(commit: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const git = spawn('git', ['archive', '--format=tar', commit], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
    let errors = '';
    git.stderr.on('data', (d: Buffer) => (errors += d.toString()));
    tar.stderr.on('data', (d: Buffer) => (errors += d.toString()));
    git.stdout.pipe(tar.stdin);
    const codes = [git, tar].map(
      (child) =>
        new Promise<number | null>((done) => {
          child.once('error', (err) => {
            errors += `${err.message}\n`;
            done(-1);
          });
          child.once('exit', done);
        }),
    );
    void Promise.all(codes).then(([g, t]) =>
      g === 0 && t === 0 ? resolve() : reject(new Error(`git archive | tar: ${g}, ${t}\n${errors}`)),
    );
  });
}

/**
 * Runs a command in `cwd`; resolves with its stdout, rejects with the tail of its output. The
 * parent's npm script variables are dropped (they describe this checkout's run, not the tree's),
 * and Nx (lerna's engine) starts no daemon that would outlive the build.
 */
function sh(cmd: string, args: string[], cwd: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' };
  for (const key of Object.keys(env)) {
    if (/^npm_(package|lifecycle)_/.test(key) || key === 'INIT_CWD') delete env[key];
  }
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let all = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      all = (all + d.toString()).slice(-4000);
    });
    child.stderr.on('data', (d: Buffer) => (all = (all + d.toString()).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${all}`)),
    );
  });
}
