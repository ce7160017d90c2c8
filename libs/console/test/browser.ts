import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { ADMIN_TOKENS, PoolStore, TokenStore } from '@mgw/store';
import { useSharedStack, type SharedStackOptions, type Stack } from '@mgw/testing';
import { newLaptopContext, sharedChromium } from '@mgw/testing/browser';
import { buildDashboard } from '../build.mjs';

export {
  ACTION_TIMEOUT_MS,
  ARTIFACTS,
  CHROMIUM,
  VIEWPORTS,
  launchChromium,
  newLaptopContext,
  screenshots,
  sharedChromium,
} from '@mgw/testing/browser';

/**
 * The console's browser suites' kit: the worker's one stack, shared by every suite
 * (useDashboardStack), and the console built once per worker; the browser itself is
 * `@mgw/testing/browser`'s (re-exported here for the suites).
 */

/** The admin password of every dashboard suite: one, so that they can share the worker's stack. */
export const ADMIN_PASSWORD = 'dashboard suites password 42';
/** The stack's ADMIN_API_TOKEN: automation's admin calls (the suites' own, and the reset below). */
export const ADMIN_API_TOKEN = 'dashboard-suites-admin-token-0123456789';

/**
 * The dashboard, built once per process into one temporary directory (the first suite's `before`
 * builds it), removed when the process exits. Its path is known as the suites are declared, so
 * that every suite names the same stack options.
 */
let assetsDir: string | undefined;
let assetsBuilt: Promise<string> | undefined;
function dashboardAssets(): string {
  if (!assetsDir) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mgw-dashboard-'));
    assetsDir = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return assetsDir;
}
function buildAssets(): Promise<string> {
  assetsBuilt ??= buildDashboard(dashboardAssets()).catch((err: unknown) => {
    assetsBuilt = undefined;
    throw err;
  });
  return assetsBuilt;
}

/**
 * The options of the dashboard suites' stack: the same for every suite, so that a worker starts one
 * (`useSharedStack`). What one suite needs is harmless to the others: the notifier (the Events
 * tab, a webhook failing), webhook retries two minutes apart (a retry waits for its button), a
 * webhook receiver on 127.0.0.1, rate limits no test reaches, a passkey link that gives up after
 * 6 s of silence (only gated accounts meet it), an ADMIN_API_TOKEN, and the Cloud API simulator
 * with the sandbox's number (`stack.cloud`: the Cloud API section's suite makes a device that
 * number), whose webhooks no suite needs (no subscription attempts filling the API's log).
 */
function sharedOptions(): SharedStackOptions {
  return {
    notifier: true,
    cloud: true,
    cloudWebhooks: false,
    env: {
      ADMIN_PASSWORD,
      ADMIN_API_TOKEN,
      DASHBOARD_ASSETS_DIR: dashboardAssets(),
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      RATE_LIMIT_ACCOUNT: '1000',
      RATE_LIMIT_BROADCASTS: '1000',
      RATE_LIMIT_CONTACTS: '1000',
      RATE_LIMIT_GROUPS: '1000',
      WEBHOOK_RETRY_BASE_MS: '120000',
      WEBHOOK_RETRY_MAX_MS: '240000',
      PASSKEY_CONTINUATION_TIMEOUT_MS: '6000',
    },
  };
}

/**
 * The devices with a session record, and their status, read from Redis: not through the admin
 * API, whose device list keeps its scan of the records for 15 s (a record a test writes next would
 * be missing from the page).
 */
async function sessionRecords(stack: Stack): Promise<Map<string, string | null>> {
  const redis = stack.redis as Redis;
  const found = new Map<string, string | null>();
  let cursor = '0';
  do {
    const [next, names] = await redis.scan(cursor, 'MATCH', 'mgw:{*}:session', 'COUNT', 1000);
    cursor = next;
    for (const name of names) {
      const id = /^mgw:\{(.+)\}:session$/.exec(name)?.[1];
      if (id) found.set(id, await redis.hget(name, 'status'));
    }
  } while (cursor !== '0');
  return found;
}

/**
 * What a suite finds on the shared stack is what a stack of its own would show it: no pool, no
 * token but its own (and the stack's), no admin token, and no device record but those of linked
 * devices (the suite before logged its devices out: `useSharedStack`). Workspaces stay (no page
 * lists them but the Workspaces page, whose suite names its own).
 */
async function resetSharedState(stack: Stack, ended: () => boolean): Promise<void> {
  // A hook that timed out goes on running: once its suite has ended, it must not touch the next
  // suite's state (revoke its token), so every step first asks.
  const step = async (what: () => Promise<unknown>) => {
    if (!ended()) await what();
  };
  const redis = stack.redis;
  const pools = new PoolStore(redis);
  for (const pool of await pools.list()) await step(() => pools.delete(pool.id));
  const tokens = new TokenStore(redis);
  const base = Object.getPrototypeOf(stack) as Stack;
  const keep = new Set<string>();
  for (const value of [stack.token, base.token]) {
    const check = await tokens.verify(value);
    if (check.ok) keep.add(check.token.id);
  }
  for (const token of await tokens.list()) if (!keep.has(token.id)) await step(() => tokens.revoke(token.id));
  const admins = new TokenStore(redis, ADMIN_TOKENS);
  for (const token of await admins.list()) await step(() => admins.revoke(token.id));
  const linked = new Set(await redis.smembers(keys.linkedDevices()));
  for (const deviceId of (await sessionRecords(stack)).keys())
    if (!linked.has(deviceId) && deviceId !== stack.deviceId)
      await step(() => redis.del(keys.session(deviceId)));
}

/**
 * Ends what a suite left under way that the stack's release does not (it logs out linked devices):
 * a link started on the page and never scanned, whose QR would go on turning over, its events
 * reaching the next suite's live pages.
 */
async function endPairings(stack: Stack): Promise<void> {
  for (const [deviceId, status] of await sessionRecords(stack)) {
    if (status !== 'connecting') continue;
    await stack.adminApi(ADMIN_API_TOKEN, 'POST', `/devices/${encodeURIComponent(deviceId)}/disconnect`);
  }
}

/** How long a suite's set-up and tear-down hooks may take (its tests keep the suite's timeout). */
const SETUP_TIMEOUT_MS = 300_000;

export interface Dashboard {
  /** The suite's view of the worker's shared stack: a device and a token of its own. */
  stack: Stack;
  /** The suite's page, laptop-sized, in its own browser context. */
  page: Page;
  context: BrowserContext;
  /** The worker's chromium (a page of another context: `browser.newPage()`, closed by the test). */
  browser: Browser;
}

/**
 * The set-up of a dashboard suite: the worker's shared stack (`useSharedStack`, with the options of
 * every dashboard suite: the dashboard built once per worker, ADMIN_PASSWORD, ADMIN_API_TOKEN…),
 * reset to what a fresh stack shows (resetSharedState), and a browser context of the suite's own
 * in the worker's one chromium, with a laptop-sized page; the context is closed after the suite,
 * and any link it left half-way is ended before the stack's release logs its devices out. Call
 * inside a `describe` with it (`useDashboardStack(this)`): its set-up hooks get SETUP_TIMEOUT_MS;
 * the getter answers once `before` has run.
 */
export function useDashboardStack(suite: Mocha.Suite): () => Dashboard {
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  let browser: Browser | undefined;
  let ended = false;
  // The hooks below (the stack's too) may take longer than the suite's tests: the worker's first
  // suite starts the stack and chromium, minutes on a loaded machine.
  const testTimeout = suite.timeout();
  if (testTimeout !== 0) suite.timeout(Math.max(testTimeout, SETUP_TIMEOUT_MS));
  before(async () => {
    // Chromium starts while the stack does (the first suite of a worker starts both).
    sharedChromium().catch(() => undefined);
    await buildAssets();
  });
  // Registered before the stack's hooks: it runs before the stack's `after` (its release).
  after(async () => {
    ended = true;
    await context?.close().catch(() => undefined);
    const running = (() => {
      try {
        return stack();
      } catch {
        return undefined;
      }
    })();
    if (running) await endPairings(running).catch(() => undefined);
  });
  const stack = useSharedStack(sharedOptions());
  before(async () => {
    await resetSharedState(stack(), () => ended);
    browser = await sharedChromium();
    const opened = await newLaptopContext(browser);
    if (ended) {
      await opened.close();
      return;
    }
    context = opened;
    page = await context.newPage();
  });
  suite.timeout(testTimeout);
  return () => ({ stack: stack(), page: page!, context: context!, browser: browser! });
}
