import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stack, startNatsServer, type BrokerServerHandle } from '@mgw/testing';
import { mismatch, parseShown, shownAnswers, shownStrings, type ShownAnswer } from './answers.js';
import { fencedBlocks, links, shellBlocks, type ShellBlock } from './markdown.js';

/**
 * The commands of the README and docs/ are pasted by people who cannot ask: every ```sh / ```bash
 * block runs here, page by page, against one sandbox stack (the real services and the simulator),
 * as a reader pastes it after `MESSENGER_SANDBOX=1 npm start`, in the order a reader goes: the
 * README first (it links the simulated phone the other pages send from), then the pages of docs/
 * in the order the README first links them, then the pages it does not link, by name. A page's
 * blocks run in one bash, in order (a variable set by one block is there for the next), with
 * `set -euo pipefail` and `curl` failing on an HTTP error, so a wrong path, field or variable
 * fails the page. A block that cannot run here (it installs, starts the gateway, needs Docker or
 * Kubernetes) says so with `<!-- not run: <reason> -->` on the line before its fence; any other
 * block runs.
 *
 * A 2xx is not enough: each answer a page shows under a command (`# {…}`, `# 202 {…}`,
 * `curl … # → 200 {…}`, or a ```json block right after the shell block) is held against the real
 * answer of that command's last curl, by the rules of ./answers.ts (shown objects a subset, arrays
 * element by element, `…` any value); and every
 * message a page's requests created (the `messageId` / `messageIds` of their answers) must not end
 * `failed`, unless the page shows that failure (its reason, e.g. `opted_out`, is a value of one of
 * the page's shown answers). A page names the contacts it writes to (`# this page's contacts …`
 * in its variables block), and no other page writes to them: no page depends on what another did
 * to a contact (an opt-out, a block).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** README.md, then the docs/ pages in the order the README first links them, then the rest by name. */
function readerOrder(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  const linked = links(read('README.md'))
    .map((l) => decodeURIComponent(l.target.split('#')[0]!).replace(/^\.\//, ''))
    .filter((target) => docs.includes(target));
  return ['README.md', ...new Set([...linked, ...docs])];
}
const PAGES = readerOrder();

/**
 * The page variables, spelled the same on every page: the port comes from PORT / SANDBOX_PORT as
 * `npm start` reads them, so a reader on other ports (and this test) sets those and pastes as is.
 */
const BASE_URLS: Record<string, string> = {
  GW: 'GW=http://127.0.0.1:${PORT:-3000}/api/messenger/v1',
  ADMIN_API: 'ADMIN_API=http://127.0.0.1:${PORT:-3000}/api/admin/v1',
  SIM: 'SIM=http://127.0.0.1:${SANDBOX_PORT:-3100}',
  CLOUD_SIM: 'CLOUD_SIM=http://127.0.0.1:${CLOUD_SANDBOX_PORT:-3101}',
};
/** Names a reader's shell may hold from another page: the test's bash must not inherit them. */
const PAGE_NAMES = ['GW', 'ADMIN_API', 'SIM', 'CLOUD_SIM', 'TOKEN', 'ADMIN', 'MESSAGE_ID', 'BATCH'];
const PAGE_TIMEOUT_MS = 120_000;

/** Commands that install, start or deploy: never run here, so their blocks must be marked. */
const NEVER_RUN = /\b(npm (install|ci|start|test)|docker|kubectl|helm)\b/;

/** The simulated phone the README links: every page sends from it. */
const ACCOUNT = '15550000001';
/** A phone number in a command: 11 to 13 digits (a LID, `<15 digits>@lid`, is none). */
const PHONE = /(?<![\d@])\d{11,13}(?![\d@])/g;

/**
 * The contacts a page declares, on the `# this page's contacts …: <phone>, <phone>` line of its
 * variables block (`<phone> to <phone>` is a range).
 */
function declaredContacts(blocks: ShellBlock[]): string[] {
  const line = blocks.flatMap((b) => b.code.split('\n')).find((l) => /^#\s*this page's contacts\b/.test(l));
  if (!line) return [];
  const ranges = [...line.matchAll(/(\d{11,13}) to (\d{11,13})/g)].flatMap(([, from, to]) =>
    Array.from({ length: Number(to) - Number(from) + 1 }, (_, i) => String(Number(from) + i)),
  );
  return [...new Set([...(line.match(PHONE) ?? []), ...ranges])];
}

/** The phone numbers a page's commands write to or about (the numbers of a vCard's `phones` are not contacts). */
function usedContacts(blocks: ShellBlock[]): string[] {
  const commands = blocks
    .flatMap((b) => b.code.split('\n'))
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/"phones"\s*:\s*\[[^\]]*\]/g, '');
  return [...new Set(commands.match(PHONE) ?? [])].filter((p) => p !== ACCOUNT);
}

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
      problems.push(`${where}: ${url} — name the gateway through $GW, $ADMIN_API, $SIM or $CLOUD_SIM`);
    }
  });
  return problems;
}

/**
 * The bash script of a page: its runnable blocks in order, each announced on stderr. `curl` is a
 * function that runs the real one and keeps each call's arguments, status and body in
 * $MGW_DOCS_CALLS (listed in call order in its `calls` file); after a command whose answer the page
 * shows, `__shown <n>` notes which call that was.
 */
function pageScript(
  blocks: ShellBlock[],
  shown: Map<ShellBlock, (ShownAnswer & { after: number })[]>,
): string {
  let n = 0;
  return [
    'set -euo pipefail',
    '__k=0',
    // An HTTP error answer fails the command (its body still printed), and so the page.
    'curl() {',
    '  local f rc=0 code',
    '  __k=$((__k + 1)); f="$MGW_DOCS_CALLS/call.$BASHPID.$__k.$RANDOM"',
    '  printf \'%s\\0\' "$@" > "$f.args"; echo "$f" >> "$MGW_DOCS_CALLS/calls"',
    '  code=$(command curl --fail-with-body -o "$f.body" -w \'%{http_code}\' "$@") || rc=$?',
    '  printf \'%s\' "$code" > "$f.status"',
    '  if [ -f "$f.body" ]; then cat "$f.body" 2>/dev/null || :; fi',
    '  return $rc',
    '}',
    '__shown() { tail -n 1 "$MGW_DOCS_CALLS/calls" > "$MGW_DOCS_CALLS/shown.$1" 2>/dev/null || :; }',
    ...blocks.flatMap((b) => {
      const lines = b.code.split('\n');
      const answers = shown.get(b) ?? [];
      // From the bottom up, so that each insertion leaves the lines above where they were.
      const bottomUp = answers
        .map((answer, i) => ({ after: answer.after, i }))
        .sort((x, y) => y.after - x.after);
      for (const { after, i } of bottomUp) lines.splice(after + 1, 0, `__shown ${n + i}`);
      n += answers.length;
      return [`echo "::block at line ${b.line}" >&2`, ...lines];
    }),
  ].join('\n');
}

/**
 * A ```json block right after a shell block (nothing but blank lines between) shows the answer of
 * that block's last command, by the same rules as a `# {…}` comment.
 */
function answerBlock(page: string, block: ShellBlock): (ShownAnswer & { after: number })[] {
  const text = read(page);
  const fenced = fencedBlocks(text);
  const next = fenced[fenced.findIndex((f) => f.line === block.line) + 1];
  const length = block.code.split('\n').length;
  const between = text.split('\n').slice(block.line + length + 1, (next?.line ?? 0) - 1);
  if (next?.info !== 'json' || between.some((l) => l.trim() !== '')) return [];
  return [
    { line: next.line, alternatives: [{ body: parseShown(next.code), text: next.code }], after: length - 1 },
  ];
}

/** One curl a page ran: what it asked and what it got. */
interface Call {
  args: string[];
  status: number;
  body: string;
}

function readCall(file: string): Call {
  const part = (ext: string) => {
    try {
      return readFileSync(`${file}.${ext}`, 'utf8');
    } catch {
      return '';
    }
  };
  return { args: part('args').split('\0').slice(0, -1), status: Number(part('status')), body: part('body') };
}

/** The JSON of an answer: the body, or the data of an event stream's last event. */
function answerJson(body: string): unknown {
  const text = /^(event|data):/m.test(body)
    ? (body
        .match(/^data: ?(.*)$/gm)
        ?.at(-1)
        ?.replace(/^data: ?/, '') ?? '')
    : body;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Whether a call changes something (a method other than GET, or a body sent). */
function writes(args: string[]): boolean {
  let method = 'GET';
  args.forEach((a, i) => {
    if (a === '-X' || a === '--request' || /^-[a-zA-Z]+X$/.test(a)) method = args[i + 1] ?? method;
    else if (/^-[a-zA-Z]*X[A-Z]+$/.test(a)) method = a.slice(a.indexOf('X') + 1);
    else if (/^(-d|--data.*|-F|--form)$/.test(a) && method === 'GET') method = 'POST';
  });
  return method !== 'GET' && method !== 'HEAD';
}

/** The message ids in an answer (`messageId`, `messageIds`; a list's own id, next to its `messageIds`, is not one). */
function messageIds(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(messageIds);
  if (value === null || typeof value !== 'object') return [];
  const o = value as Record<string, unknown>;
  const ids = Array.isArray(o.messageIds)
    ? o.messageIds.filter((id): id is string => typeof id === 'string')
    : typeof o.messageId === 'string'
      ? [o.messageId]
      : [];
  return [...ids, ...Object.entries(o).flatMap(([k, v]) => (k === 'messageIds' ? [] : messageIds(v)))];
}

/** A message a page created, and how to read it back as the page would. */
interface CreatedMessage {
  page: string;
  id: string;
  gw: string;
  token: string;
}

async function failedMessage(m: CreatedMessage, allowed: Set<string>): Promise<string | undefined> {
  const res = await fetch(`${m.gw}/messages/${encodeURIComponent(m.id)}`, {
    headers: { authorization: `Bearer ${m.token}` },
  });
  if (res.status === 404) return undefined; // not a message record (a status, a channel post of another kind)
  const record = ((await res.json()) as { data?: { status?: string; error?: string } }).data;
  if (record?.status !== 'failed' || allowed.has(record.error ?? '')) return undefined;
  return `${m.page}: message ${m.id} ended failed (${record.error ?? 'no reason'}), and the page does not show that failure`;
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
  // Each page's bash is killed after PAGE_TIMEOUT_MS (a wait loop that never ends), so the pasting
  // test as a whole needs no tighter bound than that per page: about 50 s in all on a quiet
  // machine, over 4 min beside the parallel suite on 2 busy cores (CI's), where 240 s ran out.
  this.timeout(PAGE_TIMEOUT_MS * Math.max(2, PAGES.length));
  let stack: Stack;
  let nats: BrokerServerHandle | undefined;
  let env: NodeJS.ProcessEnv;

  before(async function () {
    this.timeout(120_000);
    // The sandbox `npm start` runs: the default device, the dashboard on (so the admin API is),
    // the notifier, a real nats-server its events go to (docs/events.md reads them from it), and
    // the Cloud API simulator with the sandbox's number (docs/cloud-api.md).
    nats = await startNatsServer();
    stack = await Stack.start({
      deviceId: 'default',
      notifier: true,
      cloud: true,
      env: { ADMIN_PASSWORD: 'docs-curl-blocks-password', EVENTS_NATS_URL: nats.url },
    });
    env = { ...process.env, LOG_LEVEL: 'warn' };
    for (const name of PAGE_NAMES) delete env[name];
    Object.assign(env, {
      REDIS_URL: stack.redisUrl,
      PORT: new URL(stack.apiUrl).port,
      SANDBOX_PORT: new URL(stack.simulator.controlUrl).port,
      CLOUD_SANDBOX_PORT: new URL(stack.cloud.url).port,
      EVENTS_NATS_URL: nats.url,
    });
  });
  after(async () => {
    await stack?.stop();
    await nats?.stop();
  });

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

  it('When the pages are read, then each page names the contacts its commands write to, and no two pages share one', () => {
    const owner = new Map<string, string>();
    const problems: string[] = [];
    for (const page of PAGES) {
      const runnable = shellBlocks(read(page)).filter((b) => b.notRun === undefined);
      const declared = declaredContacts(runnable);
      for (const phone of usedContacts(runnable).filter((p) => !declared.includes(p))) {
        problems.push(
          `${page}: writes to ${phone}, which its variables block does not name (# this page's contacts …)`,
        );
      }
      for (const phone of declared) {
        if (owner.has(phone)) problems.push(`${phone} is a contact of ${owner.get(phone)} and of ${page}`);
        else owner.set(phone, page);
      }
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('When every page with shell blocks is pasted in the order a reader goes, then each runnable block succeeds, answers as the page shows, its messages do not fail, and the page variables are spelled one way', async () => {
    const summary: string[] = [];
    const problems: string[] = [];
    const created: CreatedMessage[] = [];
    const allowedFailures = new Map<string, Set<string>>();
    let ran = 0;
    let compared = 0;
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
      const shown = new Map<ShellBlock, (ShownAnswer & { after: number })[]>();
      try {
        for (const b of runnable) shown.set(b, [...shownAnswers(b.code, b.line), ...answerBlock(page, b)]);
      } catch (err) {
        problems.push(`${page}: a shown answer does not parse: ${(err as Error).message}`);
        continue;
      }
      const answers = runnable.flatMap((b) => shown.get(b)!);
      allowedFailures.set(
        page,
        new Set(answers.flatMap((a) => a.alternatives.flatMap((alt) => shownStrings(alt.body)))),
      );
      const calls = mkdtempSync(path.join(tmpdir(), 'mgw-docs-calls-'));
      try {
        const { code, output } = await runBash(pageScript(runnable, shown), {
          ...env,
          MGW_DOCS_CALLS: calls,
        });
        if (code !== 0) {
          const failed = [...output.matchAll(/::block at line (\d+)/g)].at(-1)?.[1] ?? '?';
          problems.push(
            `${page}: the block at line ${failed} failed (exit ${code}):\n${output.slice(-3000)}`,
          );
        }
        ran += runnable.length;
        // Each shown answer against the real one.
        answers.forEach((answer, n) => {
          let file: string;
          try {
            file = readFileSync(path.join(calls, `shown.${n}`), 'utf8').trim();
          } catch {
            if (code === 0)
              problems.push(`${page}:${answer.line}: shows an answer, but the command above ran no curl`);
            return;
          }
          const call = readCall(file);
          const real = answerJson(call.body);
          compared++;
          const whys = answer.alternatives.map((alt) =>
            alt.status !== undefined && alt.status !== call.status
              ? `status: shown ${alt.status}, real ${call.status}`
              : mismatch(alt.body, real),
          );
          if (whys.every((why) => why !== undefined)) {
            problems.push(
              `${page}:${answer.line}: the answer differs from the one shown — ${whys.join('; or ')}\n` +
                `  shown: ${answer.alternatives.map((a) => `${a.status ?? ''} ${a.text}`.trim()).join('\n     or: ')}\n` +
                `  real:  ${call.status} ${call.body.slice(0, 1500)}`,
            );
          }
        });
        // The messages the page's requests created.
        let list = '';
        try {
          list = readFileSync(path.join(calls, 'calls'), 'utf8');
        } catch {
          // no curl at all
        }
        for (const file of list.split('\n').filter(Boolean)) {
          const call = readCall(file);
          if (!writes(call.args) || call.status >= 300) continue;
          const url = call.args.find((a) => /^https?:\/\/.*\/api\/messenger\/v1(\/|$)/.test(a));
          const auth = call.args.map((a) => /^authorization:\s*Bearer\s+(\S+)$/i.exec(a)?.[1]).find(Boolean);
          if (!url || !auth) continue;
          const gw = url.slice(0, url.indexOf('/api/messenger/v1') + '/api/messenger/v1'.length);
          for (const id of messageIds(answerJson(call.body))) {
            if (!created.some((m) => m.id === id)) created.push({ page, id, gw, token: auth });
          }
        }
      } finally {
        rmSync(calls, { recursive: true, force: true });
      }
      for (const m of created.filter((c) => c.page === page)) {
        const why = await failedMessage(m, allowedFailures.get(page)!);
        if (why) problems.push(why);
      }
    }
    // Once the walk is over, a message that failed later (after its page) counts too.
    for (const m of created) {
      const why = await failedMessage(m, allowedFailures.get(m.page)!);
      if (why && !problems.includes(why)) problems.push(`${why} (after the walk)`);
    }
    console.log(`      ${summary.join('\n      ')}`);
    console.log(`      compared ${compared} shown answers; checked ${created.length} messages`);
    expect(problems, problems.join('\n\n')).to.deep.equal([]);
    // The README's walk-through and the batches, groups and message kinds pages at least.
    expect(ran, 'blocks run').to.be.at.least(20);
    expect(compared, 'shown answers compared').to.be.at.least(10);
  });
});
