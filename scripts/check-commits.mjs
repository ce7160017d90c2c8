/**
 * CI's lint of commit messages (.ci/run, before the tests): every commit of a range is held to
 * the rules of check-commit-message.mjs, and each one that breaks them is named.
 *
 *   node scripts/check-commits.mjs [<range>]      e.g. origin/main..HEAD
 *
 * Without a range: the commits after the one .ci/commit-lint-base records (the history before it
 * predates the rules and is not judged). A clone that lacks that commit (a shallow clone) checks
 * HEAD's commit alone, and says so. Outside a git checkout of this project (a source tarball)
 * there is nothing to check. Exits 1 when a commit breaks a rule.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageProblems } from './check-commit-message.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BASE_FILE = '.ci/commit-lint-base';

const say = (line) => console.log(`[commits] ${line}`);

/** Runs git at the root: its status and output (status -1 when git cannot be run). */
function git(args, input) {
  const run = spawnSync('git', args, { cwd: ROOT, input, maxBuffer: 256 * 1024 * 1024 });
  return { status: run.error ? -1 : run.status, stdout: run.stdout ?? Buffer.alloc(0) };
}
const gitText = (...args) => {
  const run = git(args);
  return run.status === 0 ? run.stdout.toString('utf8').trim() : undefined;
};

/** Whether ROOT is the top of a git work tree (not a tarball, nor a folder inside another repository). */
function isCheckout() {
  const top = gitText('rev-parse', '--show-toplevel');
  return top !== undefined && realpathSync(top) === realpathSync(ROOT);
}

/** The base commit's hash from BASE_FILE (its lines other than `#` comments), or undefined. */
function recordedBase() {
  const file = path.join(ROOT, BASE_FILE);
  if (!existsSync(file)) return undefined;
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line !== '' && !line.startsWith('#'));
}

/** The `git rev-list` arguments of the commits to check, and how to name them. */
function chooseCommits(range) {
  if (range) return { revs: [range], what: range };
  const base = recordedBase();
  if (base && gitText('cat-file', '-e', `${base}^{commit}`) !== undefined)
    return { revs: [`${base}..HEAD`], what: `the commits after ${base.slice(0, 12)} (${BASE_FILE})` };
  say(
    base
      ? `the base commit ${base.slice(0, 12)} (${BASE_FILE}) is not in this clone (a shallow clone?): checking HEAD's commit only`
      : `no base commit in ${BASE_FILE}: checking HEAD's commit only`,
  );
  return { revs: ['-1', 'HEAD'], what: "HEAD's commit" };
}

/**
 * Each commit's hash, parent count and message, read from the commit objects themselves: a
 * shallow clone's log shows its oldest commits without parents, the objects keep them.
 */
function readCommits(hashes) {
  const out = git(['cat-file', '--batch'], hashes.join('\n') + '\n').stdout;
  const commits = [];
  for (let at = 0; at < out.length;) {
    const headerEnd = out.indexOf(10, at);
    const [hash, , size] = out.subarray(at, headerEnd).toString('utf8').split(' ');
    const raw = out.subarray(headerEnd + 1, headerEnd + 1 + Number(size)).toString('utf8');
    at = headerEnd + 1 + Number(size) + 1;
    const split = raw.indexOf('\n\n');
    const headers = split === -1 ? raw : raw.slice(0, split);
    const parents = headers.split('\n').filter((line) => line.startsWith('parent ')).length;
    commits.push({ hash, parents, message: split === -1 ? '' : raw.slice(split + 2) });
  }
  return commits;
}

function main(range) {
  if (!isCheckout()) {
    say('not a git checkout of this project: no commits to check');
    return 0;
  }
  if (gitText('rev-parse', '--verify', '-q', 'HEAD') === undefined) {
    say('no commit yet: nothing to check');
    return 0;
  }
  const { revs, what } = chooseCommits(range);
  const listed = gitText('rev-list', ...revs);
  if (listed === undefined) {
    console.error(`[commits] git rev-list ${revs.join(' ')} failed: is the range right?`);
    return 2;
  }
  const hashes = listed.split('\n').filter(Boolean);
  if (hashes.length === 0) {
    say(`${what}: none, nothing to check`);
    return 0;
  }
  const bad = readCommits(hashes)
    .map((c) => ({ ...c, problems: messageProblems(c.message, { merge: c.parents > 1 }) }))
    .filter((c) => c.problems.length > 0);
  if (bad.length === 0) {
    say(`${what}: ${hashes.length} checked, every message keeps the rules`);
    return 0;
  }
  console.error(`[commits] ${what}: ${bad.length} of ${hashes.length} break the commit message rules`);
  for (const c of bad) {
    const subject = c.message.split('\n').find((line) => line.trim() !== '') ?? '';
    console.error(`commit ${c.hash.slice(0, 12)} "${subject}":`);
    for (const problem of c.problems) console.error(`  - ${problem}`);
  }
  console.error(
    'A subject of at most 72 characters, then a blank line and the detail (docs/development.md, ' +
      '"Commit messages"); `git rebase -i` with `reword` rewrites them.',
  );
  return 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv[2]);
}
