/**
 * A real n8n for the tests, headless on 127.0.0.1: n8n from the npm registry (n8n-install.ts) on
 * Node 24, with its own user folder (database, settings) in the temp directory, and the
 * repository's community node package installed the way n8n installs a community package — the
 * packed tarball unpacked into `<user folder>/.n8n/nodes/node_modules/n8n-nodes-messenger-gateway`,
 * which n8n scans at start. Workflows and credentials are imported with n8n's CLI, a manual
 * workflow runs with `n8n execute`, and the running n8n is driven through its REST API (the owner
 * account is set up on first use).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitFor } from './net.js';
import { ensureN8n, packN8nNodes, runLogged, type N8nInstall } from './n8n-install.js';
import { ORPHAN_GUARD_ARGS } from './simulator-process.js';

export { ensureN8n, packN8nNodes, installN8nNodesDeps, N8N_VERSION, N8N_NODES_DIR } from './n8n-install.js';
export type { N8nInstall } from './n8n-install.js';

const PACKAGE = 'n8n-nodes-messenger-gateway';
/** Printed once n8n has started: its routes are up and its published workflows activated. */
const STARTED_LINE = 'Editor is now accessible via';

/** What `n8n execute --rawOutput` prints: the run's data, per node. */
export interface N8nRun {
  status?: string;
  data: {
    resultData: {
      error?: { message: string; description?: string };
      runData: Record<
        string,
        Array<{
          executionStatus?: string;
          error?: { message: string; description?: string };
          data?: {
            main?: Array<Array<{ json: Record<string, unknown>; binary?: Record<string, unknown> }> | null>;
          };
        }>
      >;
    };
  };
}

export class N8nHost {
  /** Everything the running n8n printed (its log), for failure reports. */
  readonly output: string[] = [];
  private child?: ChildProcess;
  private exited?: Promise<number | null>;
  private cookie?: string;

  private constructor(
    readonly install: N8nInstall,
    /** The user folder (N8N_USER_FOLDER): `.n8n/` holds the database and the installed package. */
    readonly home: string,
    readonly port: number,
    private readonly encryptionKey: string,
  ) {}

  /** Where n8n answers, and the base of its production webhook URLs (N8N_WEBHOOK_URL). */
  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  /**
   * A user folder with the package installed as n8n installs a community package (unpacked, its
   * package.json without dev and peer dependencies, listed in `.n8n/nodes/package.json`); n8n
   * itself and the tarball are installed and built first when the cache lacks them.
   */
  static async create(opts: { install?: N8nInstall; nodesTarball?: string } = {}): Promise<N8nHost> {
    const install = opts.install ?? (await ensureN8n());
    const tarball = opts.nodesTarball ?? (await packN8nNodes()).tarball;
    const home = await mkdtemp(path.join(os.tmpdir(), 'mgw-n8n-'));
    try {
      const nodesDir = path.join(home, '.n8n', 'nodes');
      const packageDir = path.join(nodesDir, 'node_modules', PACKAGE);
      await mkdir(packageDir, { recursive: true });
      await runLogged('tar', ['-xzf', tarball, '-C', packageDir, '--strip-components=1'], {
        timeoutMs: 60_000,
        what: `unpacking ${tarball}`,
      });
      const manifestFile = path.join(packageDir, 'package.json');
      const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as Record<string, unknown>;
      delete manifest.devDependencies;
      delete manifest.peerDependencies;
      delete manifest.optionalDependencies;
      await writeFile(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
      const installed = {
        name: 'installed-nodes',
        private: true,
        dependencies: { [PACKAGE]: manifest.version },
      };
      await writeFile(path.join(nodesDir, 'package.json'), `${JSON.stringify(installed, null, 2)}\n`);
      return new N8nHost(install, home, await freePort(), randomBytes(24).toString('base64'));
    } catch (err) {
      await rm(home, { recursive: true, force: true });
      throw err;
    }
  }

  /**
   * n8n's environment: only what it needs (not the test process's), offline and quiet — no
   * telemetry, version checks, templates, banners or community node catalogue, none of which a CI
   * without internet reaches — and its task broker on a port of its own (each n8n process starts one).
   */
  private async env(): Promise<NodeJS.ProcessEnv> {
    return {
      PATH: process.env.PATH,
      HOME: this.home,
      N8N_USER_FOLDER: this.home,
      N8N_PORT: String(this.port),
      N8N_LISTEN_ADDRESS: '127.0.0.1',
      N8N_HOST: '127.0.0.1',
      N8N_PROTOCOL: 'http',
      N8N_WEBHOOK_URL: this.url,
      N8N_EDITOR_BASE_URL: this.url,
      N8N_ENCRYPTION_KEY: this.encryptionKey,
      N8N_RUNNERS_BROKER_PORT: String(await freePort()),
      N8N_RUNNERS_TASK_TIMEOUT: '60',
      N8N_DIAGNOSTICS_ENABLED: 'false',
      N8N_PERSONALIZATION_ENABLED: 'false',
      N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
      N8N_TEMPLATES_ENABLED: 'false',
      N8N_DYNAMIC_BANNERS_ENABLED: 'false',
      N8N_VERIFIED_PACKAGES_ENABLED: 'false',
      N8N_UNVERIFIED_PACKAGES_ENABLED: 'true',
      N8N_DISABLED_MODULES: 'mcp-registry',
      N8N_SECURE_COOKIE: 'false',
      N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '10',
    };
  }

  /** Runs an n8n CLI command against this user folder (not while n8n runs: they share the database). */
  async cli(args: string[], timeoutMs = 180_000): Promise<string> {
    return runLogged(this.install.node, [this.install.bin, ...args], {
      cwd: this.home,
      env: await this.env(),
      timeoutMs,
      what: `n8n ${args[0]}`,
    });
  }

  private async cliWithFile(command: string, name: string, content: unknown): Promise<void> {
    const file = path.join(this.home, name);
    await writeFile(file, JSON.stringify(content));
    try {
      await this.cli([command, `--input=${file}`]);
    } finally {
      await rm(file, { force: true }); // credentials hold a token: not left beside the database
    }
  }

  /** `n8n import:credentials`: each `{ id, name, type, data }` (data in the clear; n8n encrypts it). */
  async importCredentials(credentials: object[]): Promise<void> {
    await this.cliWithFile('import:credentials', 'credentials.json', credentials);
  }

  /**
   * `n8n import:workflow` of these workflows (imported inactive), in one call: the file holds them
   * as an array, as `export:workflow --all` writes it. Each CLI call starts n8n's whole app (10-20 s
   * of CPU on a quiet machine, minutes beside the parallel suite), so the calls are few.
   */
  async importWorkflows(workflows: object[]): Promise<void> {
    await this.cliWithFile('import:workflow', 'workflows.json', workflows);
  }

  /** `n8n publish:workflow`: active from the next start (n8n 2's activation). */
  async publish(workflowId: string): Promise<void> {
    await this.cli(['publish:workflow', `--id=${workflowId}`]);
  }

  /**
   * `n8n execute --id`: runs a workflow from its manual trigger and answers its run data — also
   * when the run failed (n8n then exits 1 and prints the run data with the error), so a test can
   * read the error a node raised.
   */
  async execute(workflowId: string): Promise<N8nRun> {
    let out: string;
    try {
      out = await this.cli(['execute', `--id=${workflowId}`, '--rawOutput']);
    } catch (err) {
      const cause = (err as Error & { cause?: { stdout?: string } }).cause;
      out = cause?.stdout ?? '';
      if (!/^\{$/m.test(out)) throw err;
    }
    const start = out.search(/^\{$/m);
    const end = out.indexOf('\n}', start);
    if (start < 0 || end < start) throw new Error(`n8n execute printed no run data:\n${out.slice(-4000)}`);
    return JSON.parse(out.slice(start, end + 2)) as N8nRun;
  }

  /** Starts n8n and waits until it has started (its published workflows activated). */
  async start(timeoutMs = 180_000): Promise<void> {
    if (this.child) throw new Error('n8n runs already');
    const child = spawn(this.install.node, [...ORPHAN_GUARD_ARGS, this.install.bin, 'start'], {
      cwd: this.home,
      env: await this.env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const keep = (chunk: Buffer) => {
      this.output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      if (this.output.length > 5_000) this.output.splice(0, this.output.length - 5_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    try {
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`n8n exited with ${child.exitCode}`);
          if (!this.output.some((line) => line.includes(STARTED_LINE))) return false;
          return (await fetch(`${this.url}healthz`).catch(() => undefined))?.status === 200;
        },
        { timeoutMs, intervalMs: 250, what: `n8n ${this.install.dir} to start on port ${this.port}` },
      );
    } catch (err) {
      const log = this.output.slice(-60).join('\n');
      await this.stop();
      throw new Error(`${(err as Error).message}; its last output:\n${log}`, { cause: err });
    }
  }

  /** Stops n8n (SIGTERM: it stops its task runner and its triggers; SIGKILL after 30 s). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      this.child = undefined;
      return;
    }
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await this.exited;
    clearTimeout(timer);
    this.child = undefined;
    this.cookie = undefined;
  }

  /** Stops n8n and removes its user folder. */
  async dispose(): Promise<void> {
    await this.stop();
    await rm(this.home, { recursive: true, force: true });
  }

  /** The running n8n's REST API (`/rest/…`) as its owner, set up on first use. */
  async rest<T = Record<string, unknown>>(
    method: string,
    pathAndQuery: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    if (!this.cookie) this.cookie = await this.setUpOwner();
    return this.request<T>(method, pathAndQuery, body, this.cookie);
  }

  private async request<T>(
    method: string,
    pathAndQuery: string,
    body: unknown,
    cookie?: string,
  ): Promise<{ status: number; body: T; setCookie: string[] }> {
    const res = await fetch(`${this.url}${pathAndQuery.replace(/^\//, '')}`, {
      method,
      headers: {
        'browser-id': 'mgw-n8n-test',
        ...(cookie ? { cookie } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: answered as text
    }
    return { status: res.status, body: parsed as T, setCookie: res.headers.getSetCookie() };
  }

  private async setUpOwner(): Promise<string> {
    const owner = {
      email: 'owner@example.com',
      firstName: 'Test',
      lastName: 'Owner',
      password: `Aa1-${randomBytes(12).toString('base64url')}`,
    };
    const setup = await this.request('POST', '/rest/owner/setup', owner);
    const auth = setup.setCookie.map((c) => c.split(';')[0]!).find((c) => c.startsWith('n8n-auth='));
    if (setup.status !== 200 || !auth) {
      throw new Error(
        `n8n's owner setup answered ${setup.status}: ${JSON.stringify(setup.body).slice(0, 500)}`,
      );
    }
    return auth;
  }
}
