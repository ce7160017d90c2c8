/**
 * What the n8n test needs installed, cached between runs: n8n itself from the npm registry (in
 * `${XDG_CACHE_HOME:-$HOME/.cache}/messenger-gateway/n8n-<version>`, keyed by its version) and the
 * repository's community node package (integrations/n8n) installed, built and packed as a tarball
 * (its node_modules keyed by its lockfile, the tarball by its sources). Test processes that need
 * them at once take a lock (a directory made atomically), so one installs and the others wait; a
 * marker written only after an install succeeded says the cache is whole.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sleep } from './net.js';
import { nodeAtLeast, PINNED_NODE_DIR } from './node-runtime.js';
import { pidAlive } from './server-process.js';
import { REPO_ROOT } from './simulator-process.js';

const execFileP = promisify(execFile);

/** The n8n the test runs (2.41.3 needs a package the registry CI reaches does not carry). */
export const N8N_VERSION = '2.41.1';
/** n8n's `engines`: Node 24 (the test runs it there whichever Node runs mocha). */
export const N8N_NODE_MIN = '24.0.0';
/** The community node package, its own npm package (not a workspace of the root). */
export const N8N_NODES_DIR = path.join(REPO_ROOT, 'integrations/n8n');

/** What an install of n8n in the cache did; the marker holds it, and a cache with another is redone. */
const N8N_RECIPE = {
  n8n: N8N_VERSION,
  steps: ['npm install --ignore-scripts', 'npm rebuild sqlite3'],
};
const N8N_MARKER = '.mgw-n8n-install.json';

export function cacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'messenger-gateway');
}

/** Runs a program; rejects with its last lines of output (and the reason) when it fails. */
export async function runLogged(
  file: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number; what: string },
): Promise<string> {
  try {
    const { stdout, stderr } = await execFileP(file, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      timeout: opts.timeoutMs,
      maxBuffer: 256 * 1024 * 1024,
      killSignal: 'SIGKILL',
    });
    return `${stdout}${stderr}`;
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string; killed?: boolean; code?: unknown };
    const tail = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim().split('\n').slice(-40).join('\n');
    const why = e.killed ? `timed out after ${opts.timeoutMs / 1000} s` : `failed (${String(e.code)})`;
    throw new Error(`${opts.what}: \`${path.basename(file)} ${args.join(' ')}\` ${why}\n${tail}`, {
      cause: err,
    });
  }
}

/**
 * Runs `fn` holding the lock `dir` (made with mkdir, which is atomic): other processes wait, up
 * to `timeoutMs`. A lock whose owner died (its pid is gone), or that names no owner a minute
 * after it was made, is taken over.
 */
export async function withLock<T>(
  dir: string,
  what: string,
  timeoutMs: number,
  fn: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  await mkdir(path.dirname(dir), { recursive: true });
  for (;;) {
    try {
      await mkdir(dir);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number((await readFile(path.join(dir, 'pid'), 'utf8').catch(() => '')) || 0);
    const made = (await stat(dir).catch(() => undefined))?.mtimeMs ?? 0;
    if ((owner > 0 && !pidAlive(owner)) || (owner === 0 && Date.now() - made > 60_000)) {
      await rm(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: waited ${timeoutMs / 1000} s for the lock ${dir} (held by pid ${owner || '?'})`,
      );
    }
    await sleep(2_000);
  }
  await writeFile(path.join(dir, 'pid'), String(process.pid));
  try {
    return await fn();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** PATH with `bin` first: npm (a `#!/usr/bin/env node` script) and what it runs then use that Node. */
const pathWith = (bin: string) => [bin, process.env.PATH ?? ''].join(path.delimiter);

/**
 * `--nodedir` for node-gyp when npm has none and this machine has Node's headers in /usr (Debian's
 * nodejs-dev): sqlite3 is built from its sources (its prebuilt binaries are downloads from GitHub),
 * and node-gyp would otherwise download the headers too. sqlite3 is a Node-API addon, so a build
 * against these headers loads on Node 24.
 */
async function nodedirArgs(): Promise<string[]> {
  const configured = (
    await runLogged('npm', ['config', 'get', 'nodedir'], { timeoutMs: 30_000, what: 'npm config' })
  ).trim();
  if (configured && configured !== 'undefined' && configured !== 'null') return [];
  return existsSync('/usr/include/node/node_api.h') ? ['--nodedir=/usr'] : [];
}

export interface N8nInstall {
  /** The cache directory (package.json, node_modules). */
  dir: string;
  /** n8n's entry point: run it with `node`. */
  bin: string;
  /** The Node that runs it (24 or later). */
  node: string;
}

async function installed(dir: string): Promise<boolean> {
  const marker = await readFile(path.join(dir, N8N_MARKER), 'utf8').catch(() => '');
  try {
    const recipe = (JSON.parse(marker) as { recipe?: unknown }).recipe;
    return JSON.stringify(recipe) === JSON.stringify(N8N_RECIPE);
  } catch {
    return false;
  }
}

/**
 * n8n from the npm registry in the cache, installed once per version: `npm install` without
 * install scripts (one of its dependencies, @confluentinc/kafka-javascript, downloads zlib in
 * its script, which a CI with the registry only cannot reach; n8n does not need it to start),
 * then sqlite3's native binding built (`npm rebuild sqlite3`), which n8n's default database needs.
 * Rejects with the reason when any step fails: the test then fails, it never skips.
 */
export async function ensureN8n(): Promise<N8nInstall> {
  const node = await nodeAtLeast(N8N_NODE_MIN);
  const dir = path.join(cacheRoot(), `n8n-${N8N_VERSION}`);
  const result = { dir, node, bin: path.join(dir, 'node_modules/n8n/bin/n8n') };
  if (await installed(dir)) return result;
  return withLock(`${dir}.lock`, `installing n8n ${N8N_VERSION}`, 25 * 60_000, async () => {
    if (await installed(dir)) return result; // another test process installed it meanwhile
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const manifest = { name: 'mgw-n8n-host', private: true, dependencies: { n8n: N8N_VERSION } };
    await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const env = { ...process.env, PATH: pathWith(path.dirname(node)) };
    await runLogged('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], {
      cwd: dir,
      env,
      timeoutMs: 20 * 60_000,
      what: `installing n8n ${N8N_VERSION} into ${dir}`,
    });
    // Built with the Node npm finds first on this PATH (the machine's, whose headers node-gyp can use).
    const machinePath = (process.env.PATH ?? '')
      .split(path.delimiter)
      .filter((p) => path.resolve(p) !== path.join(PINNED_NODE_DIR, 'bin'))
      .join(path.delimiter);
    await runLogged('npm', ['rebuild', 'sqlite3', '--loglevel=error', ...(await nodedirArgs())], {
      cwd: dir,
      env: { ...process.env, PATH: machinePath },
      timeoutMs: 15 * 60_000,
      what: 'building sqlite3 for n8n',
    });
    await runLogged(node, ['-e', `require(${JSON.stringify(path.join(dir, 'node_modules/sqlite3'))})`], {
      timeoutMs: 60_000,
      what: `loading sqlite3 on Node ${N8N_NODE_MIN}+`,
    });
    await writeFile(
      path.join(dir, N8N_MARKER),
      `${JSON.stringify({ recipe: N8N_RECIPE, installedAt: new Date().toISOString() }, null, 2)}\n`,
    );
    return result;
  });
}

const sha256 = (parts: Array<string | Buffer>) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
};

/** The package's sources (what its build and pack read), for the tarball's cache key. */
async function sourceFiles(dir: string, rel = ''): Promise<string[]> {
  const entries = await readdir(path.join(dir, rel), { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const p = rel ? `${rel}/${entry.name}` : entry.name;
    if (['node_modules', 'dist'].includes(entry.name) || entry.name.startsWith('.')) continue;
    if (entry.isDirectory()) files.push(...(await sourceFiles(dir, p)));
    else files.push(p);
  }
  return files;
}

/**
 * integrations/n8n's dev dependencies, installed with `npm ci` when its lockfile changed since the
 * last install (a stamp in its node_modules); install scripts are skipped (a dependency of the
 * lint plugin runs `npx only-allow pnpm` in one). Answers the Node 24 PATH its tools run with.
 */
export async function installN8nNodesDeps(): Promise<{ env: NodeJS.ProcessEnv; node: string }> {
  const node = await nodeAtLeast(N8N_NODE_MIN);
  const env = { ...process.env, PATH: pathWith(path.dirname(node)) };
  const lockHash = sha256([
    await readFile(path.join(N8N_NODES_DIR, 'package.json')),
    await readFile(path.join(N8N_NODES_DIR, 'package-lock.json')),
  ]);
  const stamp = path.join(N8N_NODES_DIR, 'node_modules', '.mgw-npm-ci');
  const fresh = async () => (await readFile(stamp, 'utf8').catch(() => '')) === lockHash;
  if (await fresh()) return { env, node };
  await withLock(
    path.join(cacheRoot(), 'n8n-nodes-deps.lock'),
    'installing integrations/n8n',
    20 * 60_000,
    async () => {
      if (await fresh()) return;
      await runLogged('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], {
        cwd: N8N_NODES_DIR,
        env,
        timeoutMs: 15 * 60_000,
        what: 'installing integrations/n8n (npm ci)',
      });
      await writeFile(stamp, lockHash);
    },
  );
  return { env, node };
}

/**
 * The community node package built (`n8n-node build`, through `npm pack`'s prepack) and packed,
 * as a user installs it: a tarball in the cache, made again when a source file changed.
 */
export async function packN8nNodes(): Promise<{ tarball: string }> {
  const { env } = await installN8nNodesDeps();
  const files = await sourceFiles(N8N_NODES_DIR);
  const key = sha256(
    await Promise.all(
      files.map(async (f) => `${f}\0${sha256([await readFile(path.join(N8N_NODES_DIR, f))])}\n`),
    ),
  );
  const tarball = path.join(cacheRoot(), 'n8n-nodes', `n8n-nodes-messenger-gateway-${key.slice(0, 16)}.tgz`);
  if (existsSync(tarball)) return { tarball };
  await withLock(
    path.join(cacheRoot(), 'n8n-nodes-pack.lock'),
    'packing integrations/n8n',
    10 * 60_000,
    async () => {
      if (existsSync(tarball)) return;
      await mkdir(path.dirname(tarball), { recursive: true });
      // Packed beside the cache entry (one file system: the rename is atomic).
      const out = await mkdtemp(path.join(path.dirname(tarball), '.pack-'));
      try {
        await runLogged('npm', ['pack', '--pack-destination', out, '--loglevel=error'], {
          cwd: N8N_NODES_DIR,
          env,
          timeoutMs: 10 * 60_000,
          what: 'building and packing integrations/n8n (npm pack)',
        });
        const [packed] = (await readdir(out)).filter((f) => f.endsWith('.tgz'));
        if (!packed) throw new Error(`npm pack wrote no tarball into ${out}`);
        await rename(path.join(out, packed), tarball);
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    },
  );
  return { tarball };
}
