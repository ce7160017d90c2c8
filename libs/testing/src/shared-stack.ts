/**
 * One stack per mocha worker for the suites that need only devices of their own on a running
 * gateway (`useSharedStack`): it starts with the first such suite a worker runs, serves every later
 * one with the same options, and stops when the worker exits — instead of a whole stack started and
 * stopped per file (`useStack`). A suite that crashes, pauses or restarts processes, changes the
 * stack's configuration or reads state beyond its own devices (metrics, every key, the set of
 * leases) keeps `useStack`.
 *
 * What keeps suites apart on one stack:
 * - each suite gets a view of the stack whose `deviceId` is fresh and whose `token` acts on it, so
 *   what it links, queues and reads is its own (the phone numbers it links and writes to are its own
 *   too: each suite names its own, as it did on a stack of its own);
 * - when the suite ends, every device it linked or paired (and any other device left linked) is
 *   logged out through the API, and the stack is kept only once none is linked or leased any more;
 *   otherwise, or when one of its processes is gone, it is stopped and the next suite starts a fresh
 *   one;
 * - the stack runs on a `redis-server` of its own (`ownRedis`): pub/sub spans a server's databases,
 *   and the per-file stacks a worker starts meanwhile must not hear its services, nor it theirs.
 *
 * Stopping: a serial run (`npx mocha <file>`) stops it in the global teardown (mocha-fixtures.ts),
 * as `useStack` would; a worker of `mocha --parallel` is told to exit by its pool once every file
 * ran, with no hook of its own, so its exit handler sends the stack's processes SIGTERM (each then
 * stops as on `stack.stop()`), having listed their pids where the run's global teardown waits for
 * them to be gone (`awaitSharedStacksGone` in shared-stack-registry.ts): no process of a shared
 * stack outlives the run.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { TokenStore } from '@mgw/store';
import { waitFor } from './net.js';
import { registerSharedPids } from './shared-stack-registry.js';
import { Stack, type StackOptions } from './stack.js';
import { countOnly, noteStackTime } from './stack-timing.js';
import { reportFailedTest } from './failure-report.js';

/** The options a shared stack may differ by: the ones that configure it, none that make it special. */
export type SharedStackOptions = Pick<
  StackOptions,
  'senders' | 'notifier' | 'allInOne' | 'env' | 'sim' | 'cloud' | 'cloudWebhooks'
>;

/** How long a suite's devices may take to be logged out before the stack is replaced instead. */
const RELEASE_TIMEOUT_MS = 20_000;

let current: { key: string; stack: Promise<Stack> } | undefined;
/** The stack whose processes the exit handler stops. */
let lastStarted: Stack | undefined;
let exitHooked = false;

/** The options as one string, keys sorted: two suites with the same options share a stack. */
function keyOf(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(keyOf).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${keyOf(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const alive = (stack: Stack) =>
  stack.processes.every((p) => p.child.exitCode === null && p.child.signalCode === null);

function register(stack: Stack | undefined): void {
  registerSharedPids(stack?.processes.map((p) => p.child.pid).filter((pid) => pid !== undefined));
}

/** The worker (or the test process) exits: its shared stack's processes are told to stop. */
function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const p of lastStarted?.processes ?? []) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
    }
  });
}

/** Stops the shared stack, if one runs (the global teardown of a serial run; a stack replaced). */
export async function stopSharedStack(): Promise<void> {
  const was = current;
  current = undefined;
  const stack = await was?.stack.catch(() => undefined);
  if (!stack) return;
  await stack.stop();
  if (lastStarted === stack) lastStarted = undefined;
  register(undefined);
}
// For the fixtures' teardown, without loading the stack's modules into a run that never used one.
(globalThis as Record<symbol, unknown>)[Symbol.for('mgw.stopSharedStack')] = stopSharedStack;

/** The shared stack for these options: the running one, or a fresh one in its place. */
async function acquire(opts: SharedStackOptions): Promise<Stack> {
  const key = keyOf(opts);
  if (current?.key === key) {
    const stack = await current.stack.catch(() => undefined);
    if (stack && alive(stack)) return stack;
    // Counting only (stack-timing.ts): this worker's stack with these options counted once.
    if (countOnly) throw new Error('MGW_TEST_COUNT_ONLY: the shared stack, counted once');
  }
  await stopSharedStack();
  hookExit();
  const started = Stack.start({ ...opts, ownRedis: true });
  current = { key, stack: started };
  try {
    const stack = await started;
    lastStarted = stack;
    register(stack);
    return stack;
  } catch (err) {
    if (current?.stack === started && !countOnly) current = undefined;
    throw err;
  }
}

/**
 * The stack as one suite sees it: a fresh device and a token acting on it; `createToken` notes
 * the devices it is asked for, to log them out when the suite ends.
 */
async function viewFor(stack: Stack, devices: Set<string>): Promise<Stack> {
  const deviceId = `e2e-${randomBytes(4).toString('hex')}`;
  const { value: token } = await new TokenStore(stack.redis as Redis).create({ name: 'e2e', deviceId });
  devices.add(deviceId);
  const view = Object.create(stack) as Stack;
  Object.defineProperties(view, {
    deviceId: { value: deviceId, enumerable: true },
    token: { value: token, writable: true, enumerable: true },
  });
  view.createToken = async (id?: string) => {
    if (id) devices.add(id);
    return stack.createToken(id);
  };
  return view;
}

/**
 * Logs out every device the suite used and any other still linked, and waits until none is
 * linked or leased; the stack is stopped instead when that fails (the next suite starts anew).
 */
async function release(stack: Stack, devices: Set<string>): Promise<void> {
  const redis = stack.redis as Redis;
  try {
    if (!alive(stack)) throw new Error('one of its processes is gone');
    const all = [...new Set([...devices, ...(await redis.smembers(keys.linkedDevices()))])];
    const tokens = new TokenStore(redis);
    await Promise.all(
      all.map(async (deviceId) => {
        const { value } = await tokens.create({ name: 'e2e-release', deviceId });
        const res = await stack.api('POST', '/disconnect', undefined, value);
        if (res.status !== 200)
          throw new Error(`disconnect of ${deviceId}: ${res.status} ${JSON.stringify(res.body)}`);
      }),
    );
    await waitFor(
      async () => {
        if ((await redis.scard(keys.linkedDevices())) > 0) return false;
        const leased = await Promise.all(all.map((id) => redis.exists(keys.lease(id))));
        return leased.every((n) => n === 0);
      },
      { timeoutMs: RELEASE_TIMEOUT_MS, what: "the suite's devices logged out" },
    );
  } catch (err) {
    console.warn(`      (the shared stack is replaced: ${(err as Error).message})`);
    await stopSharedStack();
  }
}

/**
 * Mocha hooks for a suite on the worker's shared stack (see above): `before` takes the stack (a
 * running one with these options, or a fresh one) and gives the suite a device of its own,
 * `after` logs its devices out; the last log lines of every process are printed when a test
 * fails. Returns a getter of the suite's view of the stack, as `useStack` does.
 */
export function useSharedStack(opts: SharedStackOptions = {}, logLines = 60): () => Stack {
  let stack: Stack | undefined;
  let view: Stack | undefined;
  const devices = new Set<string>();
  before(async () => {
    const startedAt = Date.now();
    stack = await acquire(opts);
    view = await viewFor(stack, devices);
    noteStackTime(startedAt);
  });
  after(async () => {
    const startedAt = Date.now();
    if (stack && view) await release(stack, devices);
    noteStackTime(startedAt);
  });
  afterEach(function () {
    reportFailedTest(this.currentTest, stack, logLines);
  });
  return () => {
    if (!view) throw new Error('the stack is not started yet (use it inside a test or hook)');
    return view;
  };
}
