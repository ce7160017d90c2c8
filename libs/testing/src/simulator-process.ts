/**
 * The WhatsApp Web simulator as its own process (its CLI, as `MESSENGER_SANDBOX=1 npm start` runs
 * it), for benchmarks where the simulator's CPU must not be shared with the process driving them.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SimulatorInfo } from '@mgw/messenger-sim';
import { buildNeeded, isStale } from '../build-state.mjs';

/** The monorepo root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** How a TypeScript entry point runs from its sources. */
export const TSX_ARGS = ['--conditions=development', '--import', 'tsx'];
/**
 * Node options for a process the test kit starts and leaves running: it stops itself once this
 * process is gone, however this process died (see orphan-guard.mjs).
 */
export const ORPHAN_GUARD_ARGS = [
  '--import',
  pathToFileURL(path.join(REPO_ROOT, 'libs/testing/orphan-guard.mjs')).href,
];

/** A simulator's addresses and how to stop it, wherever it runs. */
export interface SimulatorEndpoint {
  controlUrl: string;
  info: SimulatorInfo;
  /** The simulator's own process id (absent when it runs in this process). */
  pid?: number;
  close(): Promise<void>;
}

/**
 * The command line of a package's entry point: the built JS (`dist/<entry>.js`, what `npm start`
 * and the image run) or the TypeScript source through tsx.
 */
export function entryArgs(pkgDir: string, entry: string, built: boolean): string[] {
  return built ? [`${pkgDir}/dist/${entry}.js`] : [...TSX_ARGS, `${pkgDir}/src/${entry}.ts`];
}

/**
 * Throws, saying how to fix it, unless every package's `dist/` exists and is newer than its
 * `src/` (the same rule as `npm start`): a run of built services must not run yesterday's code.
 */
export function requireFreshBuild(): void {
  const stale = ['libs', 'services']
    .flatMap((d) => readdirSync(path.join(REPO_ROOT, d)).map((p) => `${d}/${p}`))
    .filter((pkg) => isStale(path.join(REPO_ROOT, pkg)));
  if (stale.length > 0) {
    throw new Error(
      `the build is missing or older than the sources of ${stale.join(', ')}: run \`npm run build\` first`,
    );
  }
}

let fromBuild: boolean | undefined;

/**
 * Whether the processes the test kit starts (services, the simulator's CLI, the token CLI) run
 * from the build when a test does not say: `MGW_TEST_RUN_FROM=build` (the build must be fresh),
 * `MGW_TEST_RUN_FROM=sources` (TypeScript through tsx), or unset: the build when it is fresh
 * (`npm test` builds first), else the sources — so a source edited since the build is what runs.
 * A process from the build starts on about half the CPU (tsx hooks and compiles every import).
 */
export function runFromBuild(): boolean {
  if (fromBuild !== undefined) return fromBuild;
  const from = process.env.MGW_TEST_RUN_FROM ?? '';
  if (!['', 'build', 'sources'].includes(from))
    throw new Error(`MGW_TEST_RUN_FROM must be build or sources, not "${from}"`);
  if (from === 'build') requireFreshBuild();
  fromBuild = from === 'build' || (from === '' && !buildNeeded(REPO_ROOT));
  return fromBuild;
}

/** Starts the simulator's CLI on a free port and waits until it answers. */
export async function startSimulatorProcess(opts: { built: boolean }): Promise<SimulatorEndpoint> {
  const args = [...ORPHAN_GUARD_ARGS, ...entryArgs('libs/messenger-sim', 'cli', opts.built)];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, SANDBOX_PORT: '0', SANDBOX_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Always drained (a full pipe would stall the simulator); the tail is kept for errors.
  const output: string[] = [];
  const collect = (d: Buffer) => {
    for (const line of d.toString().split('\n')) if (line) output.push(line);
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const controlUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the simulator did not start within 30 s')), 30_000);
      const look = () => {
        const url = output.map((l) => /control API listening on (\S+)/.exec(l)?.[1]).find(Boolean);
        if (url) {
          clearTimeout(timer);
          resolve(url);
        }
      };
      child.stdout.on('data', look);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`the simulator exited with ${code}:\n${output.slice(-30).join('\n')}`));
      });
    });
    const res = await fetch(`${controlUrl}/info`);
    if (!res.ok) throw new Error(`simulator GET /info -> ${res.status}`);
    return { controlUrl, info: (await res.json()) as SimulatorInfo, pid: child.pid, close };
  } catch (err) {
    await close();
    throw err;
  }
}
