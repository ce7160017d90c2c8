import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import {
  childPids,
  listWorkerPids,
  noteStarted,
  useStack,
  type Stack,
  type StackOptions,
} from '@mgw/testing';
import { buildDashboard } from '../../dashboard/build.mjs';

/**
 * Screenshots of every page, for people to look at: under TEST_ARTIFACTS_DIR (CI may keep it),
 * else the same place in the temp directory on every run. Never in the checkout, which the
 * suite leaves as it found it.
 */
export const ARTIFACTS = path.join(
  process.env.TEST_ARTIFACTS_DIR ?? path.join(os.tmpdir(), 'mgw-test-artifacts'),
  'dashboard',
);

/** Debian's chromium (`apt-get install chromium`; .ci/run installs it): never a downloaded browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const VIEWPORTS = {
  laptop: { width: 1366, height: 860 },
  phone: { width: 390, height: 844 },
} as const;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no browser at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  }
  noteStarted('browser');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/**
 * How long a page action (click, fill, waitFor, setInputFiles…) may wait when its test names no
 * time: Playwright's 30 s by default. The suite runs four stacks and their browsers on two cores
 * in CI, where a step the page answers in a second alone has taken over 30 s.
 */
export const ACTION_TIMEOUT_MS = 90_000;

/** A laptop-sized browser context whose actions wait up to ACTION_TIMEOUT_MS. */
export async function newLaptopContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: VIEWPORTS.laptop });
  context.setDefaultTimeout(ACTION_TIMEOUT_MS);
  return context;
}

/** Saves the page at laptop and phone widths as `<name>-laptop.png` and `<name>-phone.png`. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const original = page.viewportSize();
  // From the top: a full-page shot of a scrolled page draws the sticky top bar mid-page.
  await page.evaluate('window.scrollTo(0, 0)');
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${label}.png`), fullPage: true });
  }
  if (original) await page.setViewportSize(original);
}

/**
 * The worker's one chromium: launched by the first dashboard suite that needs it, reused by every
 * later one (each in a browser context of its own: `useDashboardStack`), launched anew only when
 * it is gone (a crash). Playwright ends what it launched when the process exits (its own `exit`
 * handler: SIGKILL to the browser's process group, its profile removed); under `mocha --parallel`
 * the browser's pid is also listed where the run's global teardown waits until it is gone
 * (`listWorkerPids`), as a shared stack's processes are: no chromium outlives the run.
 */
let sharedBrowser: Promise<Browser> | undefined;
/** Chromium's command name in /proc (`chromium`; the wrapper script execs it). */
const CHROME = /^chrom/;

export async function sharedChromium(): Promise<Browser> {
  if (sharedBrowser) {
    const running = await sharedBrowser;
    if (running.isConnected()) return running;
  }
  const launching = (async () => {
    const before = new Set(childPids(CHROME));
    const browser = await launchChromium();
    listWorkerPids(
      'chromium',
      childPids(CHROME).filter((pid) => !before.has(pid)),
    );
    browser.on('disconnected', () => listWorkerPids('chromium', undefined));
    return browser;
  })();
  // A launch that failed is not tried again by every later suite: they fail with its error.
  sharedBrowser = launching;
  return launching;
}

export interface Dashboard {
  stack: Stack;
  /** The suite's page, laptop-sized, in the suite's own browser context. */
  page: Page;
  context: BrowserContext;
  /** The worker's chromium (a page of a context of its own: `browser.newPage()`, closed by its test). */
  browser: Browser;
}

/**
 * The set-up of a dashboard suite: the dashboard built into a temporary directory, a browser
 * context of the suite's own in the worker's chromium (`sharedChromium`) with one laptop-sized
 * page, closed after the suite, and the whole stack serving those assets with the admin password
 * (plus `env`). Call inside a `describe`; the getter answers once `before` has run.
 */
export function useDashboardStack(
  password: string,
  env: Record<string, string> = {},
  /** More of the stack's options (e.g. `allInOne`). */
  opts: Omit<StackOptions, 'env'> = {},
): () => Dashboard {
  let assets: string | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  const stackEnv: Record<string, string> = { ...env, ADMIN_PASSWORD: password };
  before(async () => {
    assets = await buildDashboard(await mkdtemp(path.join(os.tmpdir(), 'mgw-dashboard-')));
    stackEnv.DASHBOARD_ASSETS_DIR = assets;
    browser = await sharedChromium();
    context = await newLaptopContext(browser);
    page = await context.newPage();
  });
  const stack = useStack({ ...opts, env: stackEnv });
  after(async () => {
    await context?.close();
    if (assets) await rm(assets, { recursive: true, force: true });
  });
  return () => ({ stack: stack(), page: page!, context: context!, browser: browser! });
}
