/**
 * Mocha global fixtures for the whole suite: a real Redis for every test that needs one.
 * Uses REDIS_URL when it is set; otherwise starts `redis-server` on a free port with a
 * throw-away data directory and stops it (and removes the directory) after the run. Under
 * `mocha --parallel` every worker starts one of its own instead, whatever REDIS_URL says.
 *
 * Every service refuses to start without MGW_ENCRYPTION_KEY: the run gets a random one (unless
 * set), which every in-process test and every child process of a Stack inherits.
 *
 * The run must leave the checkout as it found it (see checkout-guard.ts): a run that added,
 * removed or wrote a file there fails at the end, naming each one.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@mgw/common';
import { routeLibsignalConsole } from '@mgw/messenger';
import { guardCheckout } from './checkout-guard.js';
import { startRedisServer, type RedisServerHandle } from './redis-server.js';
import { awaitSharedStacksGone } from './shared-stack-registry.js';
import { countOnly, takeStackTime } from './stack-timing.js';

// At load (mocha --require), before any spec file is read: suites may build an Encryption while
// they are declared.
process.env.MGW_ENCRYPTION_KEY ||= `test:${randomBytes(32).toString('base64')}`;
// Also at load: a spec file may write as it is read.
const checkCheckout = guardCheckout(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..'));

let redis: RedisServerHandle | undefined;

// `mocha --parallel` (npm test): the global setup below runs in the main process only, and stacks
// pick Redis databases by a counter of their own process while pub/sub channels span databases.
// So each worker runs on a private redis-server of its own, started here as the worker loads this
// file (before any spec file is read) and stopped with the worker, however it ends.
if (process.env.MOCHA_WORKER_ID !== undefined) {
  // Baileys runs in the worker too (the in-process simulator's tests): its session dumps stay out.
  routeLibsignalConsole(createLogger({ service: 'test', level: 'silent' }));
  const own = await startRedisServer({ stopWithParent: true });
  process.env.REDIS_URL = own.url;
}

export async function mochaGlobalSetup(): Promise<void> {
  // Baileys runs in this process in the simulator's tests: keep libsignal's session dumps out of the report.
  routeLibsignalConsole(createLogger({ service: 'test', level: 'silent' }));
  if (process.env.REDIS_URL) return;
  redis = await startRedisServer();
  process.env.REDIS_URL = redis.url;
}

export async function mochaGlobalTeardown(): Promise<void> {
  // The shared stack of a serial run (useSharedStack) stops here, before its Redis; under
  // --parallel each worker's stopped as the worker exited, and the run waits for its processes.
  const stopShared = (globalThis as Record<symbol, unknown>)[Symbol.for('mgw.stopSharedStack')];
  if (typeof stopShared === 'function') await (stopShared as () => Promise<void>)();
  await awaitSharedStacksGone();
  await redis?.stop();
  checkCheckout();
}

// MGW_TEST_TIMINGS=<file>: each spec file's wall time (from its first hook to its last) is
// appended there as `<ms>\t<file>\t<stack ms>\t<started>\t<stacks>\t<browsers>`, to see where a
// run's time goes: the third column is what starting and stopping its stacks took
// (stack-timing.ts), the fourth when it started (ms since the epoch; root hooks run once per file
// under --parallel), the last two how many stacks and browsers it started.
// `node scripts/test-report.mjs <file>` prints the slowest files and the totals.
let fileStarted = 0;
export const mochaHooks = process.env.MGW_TEST_TIMINGS
  ? {
      beforeAll(): void {
        fileStarted = Date.now();
        takeStackTime();
      },
      afterAll(this: Mocha.Context): void {
        const file = this.test?.parent?.suites[0]?.file ?? '?';
        const rel = path.relative(process.cwd(), file);
        const { ms, stacks, browsers } = takeStackTime();
        const line = [Date.now() - fileStarted, rel, ms, fileStarted, stacks, browsers].join('\t');
        appendFileSync(process.env.MGW_TEST_TIMINGS!, `${line}\n`);
      },
      ...(countOnly
        ? {
            beforeEach(this: Mocha.Context): void {
              this.skip();
            },
          }
        : {}),
    }
  : {};
