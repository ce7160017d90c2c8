import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stack } from '@mgw/testing';
import { fencedBlocks, shellBlocks, type ShellBlock } from './markdown.js';

/**
 * The commands of the README and docs/ are pasted by people who cannot ask: every ```sh / ```bash
 * block runs here, page by page, against one sandbox stack (the real services and the simulator),
 * as a reader pastes it after `MESSENGER_SANDBOX=1 npm start` — the README first (it links the
 * simulated phone the other pages send from), then docs/ in name order. A page's blocks run in
 * one bash, in order (a variable set by one block is there for the next), with `set -euo pipefail`
 * and `curl` failing on an HTTP error, so a wrong path, field or variable fails the page. A block
 * that cannot run here (it installs, starts the gateway, needs Docker or Kubernetes) says so with
 * `<!-- not run: <reason> -->` on the line before its fence; any other block runs.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/**
 * The page variables, spelled the same on every page: the port comes from PORT / SANDBOX_PORT as
 * `npm start` reads them, so a reader on other ports (and this test) sets those and pastes as is.
 */
const BASE_URLS: Record<string, string> = {
  GW: 'GW=http://127.0.0.1:${PORT:-3000}/api/messenger/v1',
  ADMIN_API: 'ADMIN_API=http://127.0.0.1:${PORT:-3000}/api/admin/v1',
  SIM: 'SIM=http://127.0.0.1:${SANDBOX_PORT:-3100}',
};
/** Names a reader's shell may hold from another page: the test's bash must not inherit them. */
const PAGE_NAMES = ['GW', 'ADMIN_API', 'SIM', 'TOKEN', 'ADMIN', 'MESSAGE_ID', 'BATCH'];
const PAGE_TIMEOUT_MS = 120_000;

/** Commands that install, start or deploy: never run here, so their blocks must be marked. */
const NEVER_RUN = /\b(npm (install|ci|start|test)|docker|kubectl|helm)\b/;

/** What is wrong with a runnable block's spelling of the page variables, if anything. */
function conventionProblems(page: string, block: ShellBlock): string[] {
  const problems: string[] = [];
  const unsafe = NEVER_RUN.exec(block.code)?.[0];
  if (unsafe) problems.push(`${page}:${block.line}: runs \`${unsafe}\`: mark it <!-- not run: <reason> -->`);
  block.code.split('\n').forEach((text, i) => {
    const where = `${page}:${block.line + 1 + i}`;
    const assigned = /^\s*([A-Z_]+)=/.exec(text)?.[1];
    if (assigned && BASE_URLS[assigned] && text.trim() !== BASE_URLS[assigned]) {
      problems.push(`${where}: write ${BASE_URLS[assigned]}`);
    }
    const url = /https?:\/\/(127\.0\.0\.1|localhost)[^\s"']*/.exec(text)?.[0];
    if (url && !(assigned && BASE_URLS[assigned])) {
      problems.push(`${where}: ${url} — name the gateway through $GW, $ADMIN_API or $SIM`);
    }
  });
  return problems;
}

/** The bash script of a page: its runnable blocks in order, each announced on stderr. */
function pageScript(blocks: ShellBlock[]): string {
  return [
    'set -euo pipefail',
    // An HTTP error answer fails the command (its body still printed), and so the page.
    'curl() { command curl --fail-with-body "$@"; }',
    ...blocks.flatMap((b) => [`echo "::block at line ${b.line}" >&2`, b.code]),
  ].join('\n');
}

function runBash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      output += `\n[test] killed after ${PAGE_TIMEOUT_MS / 1000} s (a wait loop that never ended?)`;
      child.kill('SIGKILL');
    }, PAGE_TIMEOUT_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('docs: the shell blocks of the README and docs/ paste and run against a sandbox', function () {
  this.timeout(PAGE_TIMEOUT_MS * 2);
  let stack: Stack;
  let env: NodeJS.ProcessEnv;

  before(async function () {
    this.timeout(120_000);
    // The sandbox `npm start` runs: the default device, the dashboard on (so the admin API is).
    stack = await Stack.start({ deviceId: 'default', env: { ADMIN_PASSWORD: 'docs-curl-blocks-password' } });
    env = { ...process.env, LOG_LEVEL: 'warn' };
    for (const name of PAGE_NAMES) delete env[name];
    Object.assign(env, {
      REDIS_URL: stack.redisUrl,
      PORT: new URL(stack.apiUrl).port,
      SANDBOX_PORT: new URL(stack.simulator.controlUrl).port,
    });
  });
  after(async () => stack?.stop());

  it('When the pages are read, then every curl is in a ```sh or ```bash block, and each not-run marker gives a reason', () => {
    const stray = PAGES.flatMap((page) =>
      fencedBlocks(read(page))
        .filter((b) => b.info !== 'sh' && b.info !== 'bash' && /^\s*(\w+=\$\()?curl\s/m.test(b.code))
        .map((b) => `${page}:${b.line} (\`\`\`${b.info})`),
    );
    expect(stray, 'curl commands in blocks that are not run').to.deep.equal([]);
    const bare = PAGES.flatMap((page) =>
      read(page)
        .split('\n')
        .flatMap((l, i) => (/<!--\s*not run\s*:?\s*-->/.test(l) ? [`${page}:${i + 1}`] : [])),
    );
    expect(bare, 'not-run markers without a reason').to.deep.equal([]);
  });

  it('When every page with shell blocks is pasted in order, then each runnable block succeeds and the page variables are spelled one way', async () => {
    const summary: string[] = [];
    const problems: string[] = [];
    let ran = 0;
    for (const page of PAGES) {
      const blocks = shellBlocks(read(page));
      if (blocks.length === 0) continue;
      const runnable = blocks.filter((b) => b.notRun === undefined);
      const skipped = blocks.filter((b) => b.notRun !== undefined);
      summary.push(
        `${page}: ran ${runnable.length}, not run ${skipped.length}` +
          (skipped.length ? ` (${skipped.map((b) => `line ${b.line}: ${b.notRun}`).join('; ')})` : ''),
      );
      const pageProblems = runnable.flatMap((b) => conventionProblems(page, b));
      problems.push(...pageProblems);
      // A page that would install or start something is not run at all.
      if (runnable.length === 0 || pageProblems.some((p) => p.includes('<!-- not run'))) continue;
      const { code, output } = await runBash(pageScript(runnable), env);
      if (code !== 0) {
        const failed = [...output.matchAll(/::block at line (\d+)/g)].at(-1)?.[1] ?? '?';
        problems.push(`${page}: the block at line ${failed} failed (exit ${code}):\n${output.slice(-3000)}`);
      }
      ran += runnable.length;
    }
    console.log(`      ${summary.join('\n      ')}`);
    expect(problems, problems.join('\n\n')).to.deep.equal([]);
    // The README's walk-through and the campaigns, groups and message kinds pages at least.
    expect(ran, 'blocks run').to.be.at.least(20);
  });
});
