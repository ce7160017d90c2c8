/**
 * The dashboard's weight (issue 54: "the dashboard's bundle size and its time to interactive on the
 * Devices page are printed by a bench, and do not grow by more than what the new pages need").
 *
 * Two builds side by side, in this run: the dashboard as it is, and as it was at BENCH_DASHBOARD_BASE
 * (default e25f89a~1: before issue 54's console work began), taken from git (`git archive`) and
 * built with the same esbuild options. For each: the JS and CSS bytes (raw and gzip), and what the
 * JS holds by source file (esbuild's metafile), grouped as the pages, the shared shell and Preact.
 * Then each build is served by the API (in this process, against REDIS_URL, signed in with a
 * password) to Debian's chromium with the CPU slowed BENCH_CPU_SLOWDOWN (4) times, as a mid-range
 * phone is: the time from navigation to the Devices page showing its list (a MutationObserver
 * installed before the page's script runs notes the moment), BENCH_LOADS (7, rounded up to a
 * multiple of the sides) loads each, beside the base's build served again by an API of its own (the
 * control: the noise floor), the order rotating each round (libs/testing side-by-side.ts); now ÷
 * base is the median of the rounds' ratios. Nothing is asserted.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Metafile } from 'esbuild';
import { median, SideBySide } from '@mgw/testing';
import { buildDashboardFrom } from '@mgw/console/build';
import { loadApiConfig, type ApiConfig } from '../src/config.js';
import { launchChromium } from '@mgw/testing/browser';
import { startApi, type TestApi } from '../test/helpers/api.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BASE = process.env.BENCH_DASHBOARD_BASE ?? 'e25f89a~1';
const LOADS = Number(process.env.BENCH_LOADS ?? 7);
const SLOWDOWN = Number(process.env.BENCH_CPU_SLOWDOWN ?? 4);
const PASSWORD = 'dashboard bench password';

interface Build {
  name: string;
  outDir: string;
  metafile: Metafile;
}

const work = mkdtempSync(path.join(tmpdir(), 'mgw-dashboard-bench-'));
const builds: Build[] = [];
builds.push({ name: 'now', ...(await buildDashboardFrom(path.join(work, 'now'))) });
try {
  // The earlier commit's src, built with this checkout's node_modules (its imports are the same):
  // the console's package, or the API's dashboard/ folder before the console had a package.
  const src = path.join(work, 'base-src');
  execFileSync('mkdir', ['-p', src]);
  const at = ['libs/console/src', 'services/api/dashboard/src'].find((dir) => {
    try {
      execFileSync('git', ['cat-file', '-e', `${BASE}:${dir}`], { cwd: ROOT, stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
  if (!at) throw new Error(`no console sources at ${BASE}`);
  const tar = execFileSync('git', ['archive', BASE, at], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', src, `--strip-components=${at.split('/').length}`], { input: tar });
  const built = await buildDashboardFrom(path.join(work, 'base'), {
    srcDir: src,
    nodePaths: [path.join(ROOT, 'node_modules')],
  });
  builds.push({ name: `base (${BASE})`, ...built });
} catch (err) {
  console.log(`no baseline: ${BASE} could not be taken from git (${(err as Error).message.split('\n')[0]})`);
}

const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const sizes = (b: Build) => {
  const js = readFileSync(path.join(b.outDir, 'assets/app.js'));
  const css = readFileSync(path.join(b.outDir, 'assets/app.css'));
  return { js: js.length, jsGz: gzipSync(js).length, css: css.length, cssGz: gzipSync(css).length };
};

/**
 * The JS output's bytes by where they came from: each source file by its name (a file keeps its
 * name when it moves between folders, so a base from before the console's package compares file
 * by file), and Preact.
 */
function byGroup(metafile: Metafile): Map<string, number> {
  const out = Object.entries(metafile.outputs).find(([file]) => file.endsWith('app.js'))?.[1];
  const groups = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(out?.inputs ?? {})) {
    const group = input.includes('node_modules/')
      ? input.replace(/.*node_modules\/((@[^/]+\/)?[^/]+).*/, '$1')
      : path.basename(input);
    groups.set(group, (groups.get(group) ?? 0) + bytesInOutput);
  }
  return groups;
}

console.log('\n### Bundle');
const measured = builds.map((b) => ({ b, s: sizes(b) }));
for (const { b, s } of measured) {
  console.log(
    `${b.name.padEnd(24)} JS ${kib(s.js)} (gzip ${kib(s.jsGz)})  CSS ${kib(s.css)} (gzip ${kib(s.cssGz)})`,
  );
}
if (measured.length === 2) {
  const [now, base] = [measured[0]!.s, measured[1]!.s];
  console.log(
    `now ÷ base: JS gzip ${(now.jsGz / base.jsGz).toFixed(2)}, CSS gzip ${(now.cssGz / base.cssGz).toFixed(2)}; ` +
      `the console's growth: ${kib(now.jsGz + now.cssGz - base.jsGz - base.cssGz)} gzip`,
  );
}
console.log('\nJS by source (minified bytes, now | base):');
const groupsNow = byGroup(builds[0]!.metafile);
const groupsBase = builds[1] ? byGroup(builds[1].metafile) : new Map<string, number>();
const names = [...new Set([...groupsNow.keys(), ...groupsBase.keys()])].sort(
  (a, b) => (groupsNow.get(b) ?? 0) - (groupsNow.get(a) ?? 0),
);
for (const name of names) {
  const base = groupsBase.has(name) ? kib(groupsBase.get(name)!) : '—';
  console.log(`  ${name.padEnd(36)} ${kib(groupsNow.get(name) ?? 0).padStart(10)} | ${base}`);
}

console.log(`\n### Time to the Devices list (chromium, CPU ${SLOWDOWN}× slower, ${LOADS} loads each)`);
const apis: TestApi[] = [];
const browser = await launchChromium();
try {
  for (const b of builds) apis.push(await startApi({ admin: adminWith(b.outDir) }));
  if (builds.length === 2) {
    // The base's build served again by an API of its own: the control, the noise floor.
    apis.push(await startApi({ admin: adminWith(builds[1]!.outDir) }));
    const api = { now: apis[0]!, base: apis[1]!, control: apis[2]! };
    const rounds = new SideBySide<keyof typeof api>({
      baseline: 'base',
      control: 'control',
      others: ['now'],
      rounds: LOADS,
    });
    await rounds.run(async (side) => ({ ms: await timeToDevices(api[side]) }));
    console.log(`now: this checkout; base: ${builds[1]!.name}; ${rounds.describe()}`);
    for (const line of rounds.report({ metric: 'ms', label: 'ms to the Devices list' })) console.log(line);
  } else {
    const times: number[] = [];
    for (let round = 0; round < LOADS; round++) times.push(await timeToDevices(apis[0]!));
    console.log(
      `${builds[0]!.name.padEnd(24)} median ${median(times).toFixed(0)} ms  (${times.map((t) => t.toFixed(0)).join(', ')}); no base to compare with`,
    );
  }
} finally {
  await browser.close();
  for (const a of apis) await a.close();
  rmSync(work, { recursive: true, force: true });
}

/** The admin settings of a default config, with the password and the build to serve. */
function adminWith(dashboardDir: string): ApiConfig['admin'] {
  const admin = loadApiConfig({ ...process.env, NODE_ENV: 'test' }).admin;
  return { ...admin, password: PASSWORD, dashboardDir };
}

/** One cold load (a new browser context: nothing cached) of the Devices page, signed in. */
async function timeToDevices(api: TestApi): Promise<number> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
  try {
    const page = await context.newPage();
    await page.goto(`${api.url}/dashboard/devices`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();
    // Signed in (the session cookie is kept): the timed load is a fresh navigation, cache off.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: SLOWDOWN });
    await page.addInitScript(`
      new MutationObserver((_, observer) => {
        if (document.querySelector('main .card .empty, main .card table')) {
          window.__devicesShownAt = performance.now();
          observer.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    `);
    await page.goto(`${api.url}/dashboard/devices`);
    // Function predicates, not strings: the page's CSP forbids eval.
    const shownAt = () => (globalThis as { __devicesShownAt?: number }).__devicesShownAt;
    await page.waitForFunction(shownAt, undefined, { timeout: 60_000 });
    return (await page.evaluate(shownAt))!;
  } finally {
    await context.close();
  }
}
