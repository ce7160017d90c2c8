/**
 * `npm start` as a new user runs it: `MESSENGER_SANDBOX=1 npm start` (through npm) on a machine
 * where nothing listens at REDIS_URL. The supervisor builds, starts its own redis-server (and says
 * so), the simulator and the services; the README's sandbox walk-through then links a simulated
 * phone and sends a message through the built services; SIGINT (and, after the second start,
 * SIGTERM) sent to npm's pid alone stops every process of the tree. Without
 * MGW_ENCRYPTION_KEY it makes a key under its data directory once, and a second start reuses it;
 * that second start runs the all-in-one process (`--all-in-one`), which sends for the same account.
 * It prints `ready:` once every service answers /readyz: a /connect sent the moment that line
 * appears is served. A service that is not ready in time: npm-start-ready-timeout.test.ts.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { canConnect, freePort, run, waitFor, WebhookReceiver } from '@mgw/testing';
import { processTree, waitUntilGone } from '../support/process-tree.js';
import { READY_LINE } from '../support/npm-start.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The addresses a TCP port is listened on, as the kernel lists them (/proc/net/tcp and tcp6). */
function listeningOn(port: number): string[] {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const rows = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/\s+/)),
  );
  // local_address is the address in hex (byte order of the host: little-endian) and the port; 0A: LISTEN.
  return rows
    .filter((r) => r[1]?.endsWith(`:${hex}`) && r[3] === '0A')
    .map((r) => {
      const addr = r[1]!.split(':')[0]!;
      if (addr.length !== 8) return /^0+$/.test(addr) ? '::' : addr;
      return (addr.match(/../g) ?? [])
        .reverse()
        .map((b) => parseInt(b, 16))
        .join('.');
    });
}

/** POST /connect with a token, as a client would: its status and body. */
async function connect(
  api: string,
  token: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${api}/api/messenger/v1/connect`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The device's status, as GET /status answers it. */
async function status(api: string, token: string): Promise<unknown> {
  const res = await fetch(`${api}/api/messenger/v1/status`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await res.json()) as { status?: unknown }).status;
}

describe('npm start (sandbox mode, built services, its own Redis)', function () {
  this.timeout(300_000);
  let supervisor: ChildProcess;
  let output = '';
  let exited: Promise<number | null>;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  let api: string;
  let sandbox: string;
  let token: string;
  let ports: number[];
  /** The answer to the /connect sent as soon as `ready:` appeared, with the run's output then. */
  let atReady: { status: number; body: Record<string, unknown>; output: string };

  before(async () => {
    const [redisPort, apiPort, sandboxPort, cloudPort, m0, m1, m2, m3] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mgw-start-'));
    ports = [redisPort!, apiPort!, sandboxPort!];
    api = `http://127.0.0.1:${apiPort}`;
    sandbox = `http://127.0.0.1:${sandboxPort}`;
    env = {
      ...process.env,
      // nothing listens here: the supervisor must start redis-server itself
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      MGW_DATA_DIR: dataDir,
      PORT: String(apiPort),
      SANDBOX_PORT: String(sandboxPort),
      CLOUD_SANDBOX_PORT: String(cloudPort),
      API_METRICS_PORT: String(m0),
      CONNECTION_METRICS_PORT: String(m1),
      SENDER_METRICS_PORT: String(m2),
      NOTIFIER_METRICS_PORT: String(m3),
      MESSENGER_SANDBOX: '1',
      LOG_LEVEL: 'warn',
    };
    delete env.MESSENGER_SANDBOX_URL;
    // sandbox mode lets webhooks reach this machine by itself (no ALLOWED_PRIVATE_HOSTS)
    delete env.ALLOWED_PRIVATE_HOSTS;
    // as a new user: no key (the test kit sets one for everything else), no dashboard password
    delete env.MGW_ENCRYPTION_KEY;
    delete env.ADMIN_PASSWORD;
    const ready = startSupervisor();
    // The token is made while the services start (its Redis is up once the supervisor says so),
    // so the first /connect can leave the moment `ready:` is printed.
    await waitFor(
      async () => /redis: started redis-server/.test(output) && (await canConnect('127.0.0.1', redisPort)),
      { timeoutMs: 240_000, intervalMs: 100, what: `the Redis of npm start\n${output}` },
    );
    const tokenOut = await run(
      process.execPath,
      ['services/api/dist/cli/token.js', 'create', '--name', 'walkthrough'],
      env,
    );
    token = tokenOut.trim().split('\n').pop()!;
    await ready;
    atReady = { ...(await connect(api, token)), output };
  });

  /**
   * Runs `npm start` and resolves as soon as it prints `ready:` (read from its output as it
   * comes, not polled), or rejects if it exits first.
   */
  async function startSupervisor(args: string[] = []): Promise<void> {
    output = '';
    supervisor = spawn('npm', ['start', '--', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    exited = new Promise((resolve) => supervisor.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready: line within 240 s\n${output}`)), 240_000);
      const read = (d: Buffer) => {
        output += d.toString();
        if (READY_LINE.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      supervisor.stdout!.on('data', read);
      supervisor.stderr!.on('data', read);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`npm start exited (${code}) before ready:\n${output}`));
      });
    });
  }

  /** A /send with an Idempotency-Key: the first answer is stored (sealed) and replayed after. */
  const idempotentSend = () =>
    fetch(`${api}/api/messenger/v1/send`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'idempotency-key': 'survives-restart',
      },
      body: JSON.stringify({ to: '15550000002', text: 'once' }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as unknown }));

  after(async () => {
    if (supervisor && supervisor.exitCode === null) {
      supervisor.kill('SIGKILL');
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('When npm start prints ready: (once, with the API URL, after the services started), then a /connect sent at that moment is answered 200 with a QR code, not "not running"', () => {
    const lines = atReady.output.split('\n');
    const readyAt = lines.findIndex((l) => READY_LINE.test(l));
    expect(lines.filter((l) => /^\[start\] ready:/.test(l))).to.deep.equal([
      `[start] ready: API on ${api} (every service answers /readyz)`,
    ]);
    expect(
      lines.findIndex((l) =>
        l.startsWith('[start] started: sandbox, cloud-sandbox, api, connection, sender, notifier'),
      ),
    ).to.be.within(0, readyAt);
    expect(atReady.status, JSON.stringify(atReady.body)).to.equal(200);
    expect(atReady.body.qrCode).to.match(/^data:image\/png;base64,/);
  });

  it('When npm start starts, then it says each step in one line: Node and the install first, then Redis, where it listens, each service ready, ready:', () => {
    const said = atReady.output.split('\n').filter((l) => l.startsWith('[start] '));
    expect(said[0]).to.match(/^\[start\] node \d+\.\d+\.\d+; dependencies installed/);
    for (const name of ['api', 'connection', 'sender', 'notifier'])
      expect(
        said.some((l) => new RegExp(`^\\[start\\] ${name}: ready after \\d+\\.\\d s$`).test(l)),
        name,
      ).to.equal(true);
    const order = ['redis: ', 'listening on ', 'started: ', 'ready: '].map((p) =>
      said.findIndex((l) => l.startsWith(`[start] ${p}`)),
    );
    expect(
      order.every((i, k) => i > 0 && (k === 0 || i > order[k - 1]!)),
      said.join('\n'),
    ).to.equal(true);
  });

  it('When npm start runs without HOST, then the API and every service’s ops port listen on 127.0.0.1 only, and it says so', () => {
    expect(atReady.output).to.include(
      '[start] listening on 127.0.0.1 only (HOST=0.0.0.0 npm start serves other machines too)',
    );
    const ports = [env.PORT, env.API_METRICS_PORT, env.CONNECTION_METRICS_PORT, env.SENDER_METRICS_PORT];
    for (const port of [...ports, env.NOTIFIER_METRICS_PORT].map(Number))
      expect(listeningOn(port), `port ${port}`).to.deep.equal(['127.0.0.1']);
  });

  it('When a new user follows the sandbox walk-through, then the simulated contact receives the message', async () => {
    // the README's commands, as code: token, connect (sent at ready: above), phone scans, send, inbox
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${api}/api/messenger/v1${p}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const link = await fetch(`${sandbox}/phone/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ qr: atReady.body.qrCode, phone: '15550000001', name: 'Sandbox Account' }),
    });
    expect(link.status).to.equal(200);
    await waitFor(async () => (await call('GET', '/status')).body.status === 'connected', {
      timeoutMs: 30_000,
      what: 'connected',
    });
    const sent = await call('POST', '/send', { to: '15550000002', text: 'Hello from the sandbox' });
    expect(sent.status).to.equal(202);
    let texts: string[] = [];
    await waitFor(
      async () => {
        const inbox = (await (await fetch(`${sandbox}/inbox/15550000002`)).json()) as {
          messages: { text?: string }[];
        };
        texts = inbox.messages.map((m) => m.text ?? '');
        return texts.length > 0;
      },
      { timeoutMs: 30_000, what: 'the message in the inbox' },
    );
    expect(texts).to.deep.equal(['Hello from the sandbox']);
  });

  it('When sandbox mode is on, then a webhook may point at a receiver on this machine without ALLOWED_PRIVATE_HOSTS, and it gets the events', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const set = await fetch(`${api}/api/messenger/v1/webhook`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ url: receiver.url }),
      });
      expect(set.status, await set.clone().text()).to.equal(200);
      receiver.secrets = [((await set.json()) as { data: { secret: string } }).data.secret];
      const sent = await fetch(`${api}/api/messenger/v1/send`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ to: '15550000004', text: 'Hello, webhook' }),
      });
      const { messageId } = (await sent.json()) as { messageId: string };
      await waitFor(() => receiver.events('message.sent', (d) => d.messageId === messageId).length === 1, {
        timeoutMs: 30_000,
        what: 'message.sent at the local receiver',
      });
      expect(receiver.events('message.sent')[0]!.verifiedWith).to.equal(receiver.secrets[0]);
    } finally {
      await fetch(`${api}/api/messenger/v1/webhook`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}` },
      });
      await receiver.close();
    }
  });

  let firstAnswer: { status: number; body: unknown };
  it('When no MGW_ENCRYPTION_KEY is set, then a key file (0600) is made once, only its path is printed, and Redis holds sealed values under it', async () => {
    const file = path.join(dataDir, 'encryption.key');
    expect(output).to.include(`generated a key at ${file}`);
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
    const line = (await readFile(file, 'utf8')).trim();
    expect(line).to.match(/^local-\d{8}:[A-Za-z0-9+/]{43}=$/);
    expect(output).not.to.include(line.split(':')[1]!);
    firstAnswer = await idempotentSend();
    expect(firstAnswer.status).to.equal(202);
    const status = await run(process.execPath, ['services/api/dist/cli/encryption.js', 'status'], {
      ...env,
      MGW_ENCRYPTION_KEY: line,
    });
    const rows = Object.fromEntries(status.split('\n').map((l) => [l.split(/\s+/)[0], l.split(/\s{2,}/)]));
    for (const family of ['auth-creds', 'auth-keys', 'message-protos', 'idempotency']) {
      expect(Number(rows[family]![1]), `${family} under the key`).to.be.above(0);
      expect(rows[family]!.slice(2), family).to.deep.equal(['-', '-', '0', '0']);
    }
  });

  let adminPassword = '';
  it('When no ADMIN_PASSWORD is set, then one is made once (0600) and printed with the dashboard URL, and it signs in', async () => {
    const file = path.join(dataDir, 'admin-password');
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
    adminPassword = (await readFile(file, 'utf8')).trim();
    expect(adminPassword).to.have.length.of.at.least(12);
    expect(output).to.include(
      `dashboard: ${api}/dashboard — password (shown once, kept in ${file}): ${adminPassword}`,
    );
    expect(output.split(adminPassword)).to.have.length(2);
    const page = await fetch(`${api}/dashboard/devices`);
    expect(page.status).to.equal(200);
    expect(await page.text()).to.include('/dashboard/assets/app.js');
    const signIn = await fetch(`${api}/api/admin/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: adminPassword }),
    });
    expect(signIn.status).to.equal(200);
  });

  /** npm's tree now: npm, start.mjs, redis-server (under its guard), the simulator, the services. */
  function treeOfNpm(services: string[]) {
    const tree = processTree(supervisor.pid!);
    for (const part of ['scripts/start.mjs', 'redis-server', 'libs/messenger-sim/dist/cli.js', ...services])
      expect(tree.map((p) => p.command).join('\n'), part).to.include(part);
    return tree;
  }

  it("When SIGINT is sent to npm's pid alone (not its process group), then every process of the tree stops, the ports are free and npm exits 0", async () => {
    expect(output).to.include(
      `[start] redis: started redis-server on 127.0.0.1:${ports[0]}, data in ${path.join(dataDir, 'redis')}`,
    );
    const tree = treeOfNpm([
      'services/api/',
      'services/connection/',
      'services/sender/',
      'services/notifier/',
    ]);
    supervisor.kill('SIGINT');
    await waitUntilGone(tree, ports);
    expect(await exited).to.equal(0);
  });

  it('When npm start runs again on the same data directory, as the all-in-one process (--all-in-one), then it reuses the key: what the first run sealed opens; and the sandbox kept its phones: the device is connected again without a QR and sends to the same contact', async () => {
    await startSupervisor(['--all-in-one']);
    expect(output).not.to.include('generated a key');
    expect(output).not.to.include(adminPassword);
    expect(output).to.include(`its password is in ${path.join(dataDir, 'admin-password')}`);
    // the stored answer of the first run, sealed under the key, is replayed as it was
    expect(await idempotentSend()).to.deep.equal(firstAnswer);
    // One process instead of four; the simulator kept the phone and the device linked to it
    // (<data dir>/sandbox-state.json): the device logs in again by itself, and stays connected.
    expect(output).to.include('[start] started: sandbox, cloud-sandbox, all-in-one;');
    await waitFor(async () => (await status(api, token)) === 'connected', {
      timeoutMs: 30_000,
      what: 'connected again, without a new QR',
    });
    const sent = await fetch(`${api}/api/messenger/v1/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to: '15550000002', text: 'Hello from one process' }),
    });
    expect(sent.status).to.equal(202);
    await waitFor(
      async () => {
        const inbox = (await (await fetch(`${sandbox}/inbox/15550000002`)).json()) as {
          messages: { text?: string }[];
        };
        return inbox.messages.some((m) => m.text === 'Hello from one process');
      },
      { timeoutMs: 30_000, what: 'the message of the all-in-one process in the inbox' },
    );
    expect(await status(api, token)).to.equal('connected');
    // what a process manager sends: SIGTERM to npm's pid
    const tree = treeOfNpm(['services/all-in-one/']);
    supervisor.kill('SIGTERM');
    await waitUntilGone(tree, ports);
    expect(await exited).to.equal(0);
  });
});
