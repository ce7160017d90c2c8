/**
 * `npm install`'s `prepare` step: points git at the project's hooks (.githooks/: the commit-msg
 * hook of docs/development.md, "Commit messages") by setting `core.hooksPath` in this checkout.
 * package.json runs it only where there is a `.git` (the image's build has neither .git nor this
 * file). A hooks path set to something else, or hooks of your own in .git/hooks (which a hooks
 * path would silence), are left alone with a note. It never fails the install: a problem is a
 * line on stderr.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOOKS = '.githooks';

/** Runs git at the root: its trimmed output, or undefined when it failed (or git is missing). */
function git(...args) {
  const run = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return run.status === 0 ? run.stdout.trim() : undefined;
}

const note = (line) => console.warn(`[hooks] ${line}`);

function install() {
  const top = git('rev-parse', '--show-toplevel');
  // Not git, or a folder inside another repository: not ours to configure.
  if (top === undefined || realpathSync(top) !== realpathSync(ROOT)) return;
  const current = git('config', '--local', 'core.hooksPath');
  if (current === HOOKS) return;
  if (current !== undefined) {
    note(`core.hooksPath is ${current}: left as it is; .githooks/commit-msg checks commit messages`);
    return;
  }
  const ownHooksDir = path.resolve(ROOT, git('rev-parse', '--git-path', 'hooks') ?? '.git/hooks');
  const own = listHooks(ownHooksDir);
  if (own.length > 0) {
    note(
      `hooks of your own in ${ownHooksDir} (${own.join(', ')}): core.hooksPath not set, so they keep running;`,
    );
    note(`to check commit messages too, call scripts/check-commit-message.mjs from your commit-msg hook`);
    return;
  }
  if (git('config', '--local', 'core.hooksPath', HOOKS) === undefined)
    note('could not set core.hooksPath: commit messages are checked by CI only');
}

/** The hooks in `dir` other than git's samples. */
function listHooks(dir) {
  try {
    return readdirSync(dir).filter((name) => !name.endsWith('.sample'));
  } catch {
    return [];
  }
}

try {
  install();
} catch (err) {
  note(`not installed: ${err instanceof Error ? err.message : String(err)}`);
}
