/**
 * The fast lane's fixtures (`npm run test:fast`, `.mocharc.fast.json`), in place of
 * mocha-fixtures.ts: no Redis is started, and a test of the lane may start no process and open no
 * TCP connection — no Redis, no service, no simulator over the network, no browser, no CLI. This
 * module is loaded before any spec file and:
 *
 * - replaces `child_process`'s spawn, fork, exec and execFile (and their sync forms) and TCP
 *   connects (`net.Socket#connect`: every client — ioredis, fetch, http, ws — goes through it) with
 *   a refusal that throws, naming the call;
 * - fails the test that made such a call even when the code under test caught the refusal (each
 *   test is wrapped as it starts), or the file (its `afterAll`) when a hook or the file itself did:
 *   a file of the lane that comes to need a process or a server fails there, loudly, and leaves
 *   the lane for the whole suite (`npm test`) only;
 * - checks that every glob of `.mocharc.fast.json`'s `spec` matches a test file (a folder renamed
 *   or emptied fails the lane instead of leaving it quietly smaller).
 *
 * Every test file also runs in `npm test`, with these calls allowed.
 */
import childProcess from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { fastLaneMatches } from './fast-lane-files.js';

// Under `mocha --parallel` this process forks the workers that run the files (each loads this
// module too): the refusals, and whatever the tests need, belong in the workers. This process
// runs no test, so it loads nothing heavy (@mgw/messenger is Baileys: a second or two of CPU).
const parallelMain = process.env.MOCHA_WORKER_ID === undefined && process.argv.includes('--parallel');

if (!parallelMain) {
  // As mocha-fixtures.ts does: services' code refuses to build an Encryption without a key, and
  // libsignal's session dumps (Baileys runs in the simulator's tests) stay out of the report.
  process.env.MGW_ENCRYPTION_KEY ||= `test:${randomBytes(32).toString('base64')}`;
  const [{ createLogger }, { routeLibsignalConsole }] = await Promise.all([
    import('@mgw/common'),
    import('@mgw/messenger'),
  ]);
  routeLibsignalConsole(createLogger({ service: 'test', level: 'silent' }));
}

// Checked once, by the process that reads the configuration (not again by each worker).
if (process.env.MOCHA_WORKER_ID === undefined) {
  const empty = fastLaneMatches().filter((m) => m.files.length === 0);
  if (empty.length > 0) {
    throw new Error(
      `.mocharc.fast.json's spec has ${empty.length} glob(s) matching no test file: ` +
        `${empty.map((m) => m.glob).join(', ')} — point the glob at the folder's new place, or drop it`,
    );
  }
}

/** What the lane refused and no test or hook has failed for yet. */
let pending: string[] = [];

function refuse(what: string): never {
  const message =
    `the fast lane refused ${what}: its tests start no process and open no TCP connection ` +
    "(a test that needs Redis, a service, a browser or a CLI belongs to `npm test` only: move its file out of the lane's folders — an e2e/ folder beside the code, or test/ outside test/fast/)";
  // A client that retries (ioredis) asks again and again: the same refusal counts once.
  if (!pending.includes(message)) pending.push(message);
  throw new Error(message);
}

const SPAWNS = ['spawn', 'spawnSync', 'fork', 'exec', 'execSync', 'execFile', 'execFileSync'] as const;
if (!parallelMain) {
  for (const name of SPAWNS) {
    Object.defineProperty(childProcess, name, {
      configurable: true,
      writable: true,
      value: (command: unknown) => refuse(`child_process.${name}(${JSON.stringify(String(command))})`),
    });
  }
  // `import { spawn } from 'node:child_process'` binds the ESM export: refresh those too.
  syncBuiltinESMExports();
}

/**
 * The TCP ports a server of this process listens on: a test may talk to a server it started in
 * the process (an HTTP handler, the simulator) — that starts nothing and reaches nothing outside.
 */
const ownPorts = new Set<number>();
type Listen = (this: net.Server, ...args: unknown[]) => net.Server;
const listen = net.Server.prototype.listen as unknown as Listen;
(net.Server.prototype as unknown as { listen: Listen }).listen = function (this: net.Server, ...args) {
  let port: number | undefined;
  this.once('listening', () => {
    const address = this.address();
    if (address && typeof address === 'object') ownPorts.add((port = address.port));
  });
  this.once('close', () => port !== undefined && ownPorts.delete(port));
  return listen.apply(this, args);
};

/** A loopback host: `localhost`, `::1`, or any address of 127.0.0.0/8 (a server bound to 0.0.0.0 answers on each). */
const isLoopback = (host: string) =>
  host === 'localhost' || host === '::1' || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(host);
type Connect = (this: net.Socket, ...args: unknown[]) => net.Socket;
const connect = net.Socket.prototype.connect as unknown as Connect;
/** Where a `connect` call goes: a TCP host and port, or nothing for a Unix socket / pipe path. */
function tcpTarget(args: unknown[]): { host: string; port: number } | undefined {
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: Number(first) };
  }
  if (first && typeof first === 'object' && !('path' in first && (first as { path?: unknown }).path)) {
    const { host, port } = first as { host?: string; port?: number | string };
    return { host: host ?? 'localhost', port: Number(port) };
  }
  return undefined;
}
(net.Socket.prototype as unknown as { connect: Connect }).connect = function (this: net.Socket, ...args) {
  const target = tcpTarget(args);
  if (target && !(isLoopback(target.host) && ownPorts.has(target.port))) {
    refuse(`a TCP connection to ${target.host}:${target.port}`);
  }
  return connect.apply(this, args);
};

/** Takes the refusals made since `mark` (they are reported now, by the caller). */
function takeSince(mark: number): string[] {
  const fresh = pending.slice(mark);
  pending = pending.slice(0, mark);
  return fresh;
}

/**
 * The test, wrapped: once it ends, a refusal it made fails it, even when the code under test
 * caught the refusal (a failure of its own stays its failure). Failing the test rather than a root
 * hook keeps the lane's other files running.
 */
function checked(fn: Mocha.Func | Mocha.AsyncFunc): Mocha.Func | Mocha.AsyncFunc {
  const verdict = (mark: number) => {
    const fresh = takeSince(mark);
    if (fresh.length > 0) throw new Error(fresh.join('\n'));
  };
  if (fn.length > 0) {
    return function (this: Mocha.Context, done: Mocha.Done) {
      const mark = pending.length;
      return (fn as Mocha.Func).call(this, (err?: unknown) => {
        if (err) {
          takeSince(mark);
          done(err);
          return;
        }
        try {
          verdict(mark);
          done();
        } catch (failure) {
          done(failure);
        }
      });
    };
  }
  return async function (this: Mocha.Context) {
    const mark = pending.length;
    try {
      await (fn as Mocha.AsyncFunc).call(this);
    } catch (err) {
      takeSince(mark);
      throw err;
    }
    verdict(mark);
  };
}

/** The tests already wrapped (a retried test runs its hooks again). */
const wrapped = new WeakSet<Mocha.Test>();

export const mochaHooks = {
  beforeEach(this: Mocha.Context): void {
    const test = this.currentTest;
    if (!test?.fn || wrapped.has(test)) return;
    wrapped.add(test);
    test.fn = checked(test.fn);
  },
  afterAll(): void {
    const fresh = takeSince(0);
    if (fresh.length > 0)
      throw new Error(`outside its tests (a hook or the file itself): ${fresh.join('\n')}`);
  },
};
