/**
 * Browser tests' kit: Debian's chromium through playwright-core (never a downloaded browser), one
 * per mocha worker, laptop and phone widths, and where screenshots go. Its own entry point
 * (`@mgw/testing/browser`), so that a test without a browser never loads playwright.
 */
import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { childPids, listWorkerPids } from './worker-pids.js';
import { noteStarted } from './stack-timing.js';

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
  sharedBrowser = launching;
  // A launch that failed is tried again by the next suite (it may have been the load's), but when
  // counting only (MGW_TEST_COUNT_ONLY: each start throws once counted), where the worker's one
  // browser is counted once.
  launching.catch(() => {
    if (sharedBrowser === launching && process.env.MGW_TEST_COUNT_ONLY !== '1') sharedBrowser = undefined;
  });
  return launching;
}
