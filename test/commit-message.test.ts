import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageProblems, withoutGitComments } from '../scripts/check-commit-message.mjs';

/**
 * The commit message rules (docs/development.md, "Commit messages"): the checker itself, the
 * commit-msg hook that runs it, the CI lint of a range of commits, and the hook's installation —
 * the last three on throwaway repositories under os.tmpdir(), with the project's files copied in.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const subjectOf = (length: number) => 'x'.repeat(length);
/** package.json's `prepare` step: `node -e "<code>"`, the code alone. */
const PREPARE = /^node -e "(.*)"$/.exec(
  (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { prepare: string } })
    .scripts.prepare,
)?.[1];

describe('commit messages: the checker', () => {
  it('When the subject is short and a blank line sets the body off, then nothing is wrong', () => {
    expect(
      messageProblems('Fix the pacing of list sends\n\nThe detail, as long as it needs.\n'),
    ).to.deep.equal([]);
    expect(messageProblems('One line only')).to.deep.equal([]);
    expect(messageProblems(`${subjectOf(72)}\n`)).to.deep.equal([]);
  });

  it('When the subject has 73 characters, then it is too long, and the count is said', () => {
    const problems = messageProblems(`${subjectOf(73)}\n\nBody.\n`);
    expect(problems).to.have.length(1);
    expect(problems[0]).to.include('73 characters').and.include('over 72');
  });

  it('When characters beyond ASCII are in the subject, then characters are counted, not bytes', () => {
    expect(messageProblems('é'.repeat(72))).to.deep.equal([]);
    expect(messageProblems('🙂'.repeat(73))).to.have.length(1);
  });

  it('When the body follows the subject without a blank line, then that is said', () => {
    const problems = messageProblems('Fix the pacing\nof list sends, which ran late\n');
    expect(problems).to.have.length(1);
    expect(problems[0]).to.include('blank line');
  });

  it('When the message is empty or blank, then the subject is empty', () => {
    for (const message of ['', '\n\n', '   \n'])
      expect(messageProblems(message), JSON.stringify(message)).to.deep.equal([
        'the subject (the first line) is empty',
      ]);
  });

  it('When the commit is a merge, then its message is not judged', () => {
    const message = `Merge branch '${subjectOf(80)}' into main\nno blank line\n`;
    expect(messageProblems(message, { merge: true })).to.deep.equal([]);
    expect(messageProblems(message)).to.have.length(2);
  });

  it('When the subject is a fixup!, squash! or amend! one, then it is not judged', () => {
    for (const prefix of ['fixup!', 'squash!', 'amend!'])
      expect(messageProblems(`${prefix} ${subjectOf(72)}\nbody`), prefix).to.deep.equal([]);
  });

  it("When git's message file has comments and a diff below the scissors line, then only the message is judged", () => {
    const file = [
      'Fix the pacing',
      '',
      'Body.',
      '# Please enter the commit message for your changes.',
      '# ------------------------ >8 ------------------------',
      `+${subjectOf(100)}`,
    ].join('\n');
    expect(withoutGitComments(file).trimEnd()).to.equal('Fix the pacing\n\nBody.');
    expect(messageProblems(withoutGitComments(file))).to.deep.equal([]);
    expect(messageProblems(withoutGitComments(`# comment\n${subjectOf(73)}`))).to.have.length(1);
  });
});

/** A throwaway repository with the project's commit message files copied in. */
function scratchRepo() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mgw-commits-'));
  mkdirSync(path.join(dir, 'scripts'));
  mkdirSync(path.join(dir, '.githooks'));
  for (const file of [
    'scripts/check-commit-message.mjs',
    'scripts/check-commits.mjs',
    'scripts/install-git-hooks.mjs',
    '.githooks/commit-msg',
  ])
    copyFileSync(path.join(ROOT, file), path.join(dir, file));
  chmodSync(path.join(dir, '.githooks/commit-msg'), 0o755);
  const repo = {
    dir,
    /** Runs a program in the repository, without the user's git configuration. */
    run(cmd: string, ...args: string[]) {
      const r = spawnSync(cmd, args, {
        cwd: dir,
        encoding: 'utf8',
        env: {
          ...process.env,
          GIT_CONFIG_GLOBAL: '/dev/null',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_AUTHOR_NAME: 'Test',
          GIT_AUTHOR_EMAIL: 'test@example.invalid',
          GIT_COMMITTER_NAME: 'Test',
          GIT_COMMITTER_EMAIL: 'test@example.invalid',
        },
      });
      return { status: r.status, out: `${r.stdout}${r.stderr}` };
    },
    git: (...args: string[]) => repo.run('git', ...args),
    /** An empty commit with this message (no hook unless `hooked`): its hash. */
    commit(message: string, hooked = false) {
      const r = repo.git('commit', '-q', '--allow-empty', ...(hooked ? [] : ['--no-verify']), '-m', message);
      if (r.status !== 0) throw new Error(r.out);
      return repo.git('rev-parse', 'HEAD').out.trim();
    },
    /** Records HEAD as the lint's base. */
    recordBase() {
      mkdirSync(path.join(dir, '.ci'), { recursive: true });
      writeFileSync(path.join(dir, '.ci/commit-lint-base'), `# base\n${repo.git('rev-parse', 'HEAD').out}`);
    },
    checkCommits: (...args: string[]) => repo.run(process.execPath, 'scripts/check-commits.mjs', ...args),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
  repo.git('init', '-q', '-b', 'main');
  repo.git('add', '.');
  repo.commit('The commit message rules');
  return repo;
}

describe('commit messages: the hook and the CI lint', function () {
  this.timeout(30_000);
  let repo: ReturnType<typeof scratchRepo>;
  beforeEach(() => {
    repo = scratchRepo();
  });
  afterEach(() => repo.remove());

  it('When npm install runs its prepare step in a checkout, then git uses .githooks, and the commit-msg hook refuses a 73-character subject', () => {
    expect(PREPARE, 'prepare is `node -e "…"`').to.be.a('string');
    const prepared = repo.run(process.execPath, '-e', PREPARE!);
    expect(prepared.status, prepared.out).to.equal(0);
    expect(repo.git('config', 'core.hooksPath').out.trim()).to.equal('.githooks');
    expect(() => repo.commit(subjectOf(73), true)).to.throw(/73 characters/);
    expect(() => repo.commit('Short subject\n\nAnd the detail.', true)).to.not.throw();
  });

  it('When the checkout has hooks of its own, then the prepare step leaves core.hooksPath unset and says why', () => {
    writeFileSync(path.join(repo.dir, '.git/hooks/pre-commit'), '#!/bin/sh\n', { mode: 0o755 });
    const r = repo.run(process.execPath, 'scripts/install-git-hooks.mjs');
    expect(r.status).to.equal(0);
    expect(r.out).to.include('hooks of your own');
    expect(repo.git('config', 'core.hooksPath').status).to.equal(1);
  });

  it("When package.json's prepare step runs where there is no .git (the image's build), then it does nothing and succeeds", () => {
    const bare = mkdtempSync(path.join(os.tmpdir(), 'mgw-no-git-'));
    try {
      const r = spawnSync(process.execPath, ['-e', PREPARE!], { cwd: bare, encoding: 'utf8' });
      expect(r.status, r.stderr).to.equal(0);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it('When no commit follows the recorded base, then the lint passes and says there is nothing to check', () => {
    repo.commit(`An old subject from before the rules, ${subjectOf(60)}`);
    repo.recordBase();
    const r = repo.checkCommits();
    expect(r.status, r.out).to.equal(0);
    expect(r.out).to.include('none, nothing to check');
  });

  it('When a commit after the base breaks a rule, then the lint fails naming it; merges and the history before the base are not judged', () => {
    repo.commit(`Old ${subjectOf(80)}`);
    repo.recordBase();
    repo.commit('A good subject\n\nWith its body.');
    const bad = repo.commit(subjectOf(73));
    repo.git('checkout', '-q', '-b', 'side');
    repo.commit('On the side');
    repo.git('checkout', '-q', 'main');
    const merged = repo.git('merge', '-q', '--no-ff', '-m', `Merge ${subjectOf(80)}`, 'side');
    expect(merged.status, merged.out).to.equal(0);
    const r = repo.checkCommits();
    expect(r.status).to.equal(1);
    expect(r.out).to.include('1 of 4 break the commit message rules');
    expect(r.out).to.include(`commit ${bad.slice(0, 12)} "${subjectOf(73)}"`);
    expect(r.out).to.include('73 characters');
  });

  it("When the clone is shallow and lacks the base, then only HEAD's commit is checked, and that is said", () => {
    repo.commit('First');
    repo.recordBase();
    repo.commit(subjectOf(73));
    repo.commit('Last and good');
    const clone = mkdtempSync(path.join(os.tmpdir(), 'mgw-shallow-'));
    try {
      expect(repo.git('clone', '-q', '--depth', '1', `file://${repo.dir}`, clone).status).to.equal(0);
      // The base file is not committed in the scratch repository: the clone gets it by hand.
      mkdirSync(path.join(clone, '.ci'), { recursive: true });
      copyFileSync(path.join(repo.dir, '.ci/commit-lint-base'), path.join(clone, '.ci/commit-lint-base'));
      const r = spawnSync(process.execPath, ['scripts/check-commits.mjs'], { cwd: clone, encoding: 'utf8' });
      expect(r.status, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout).to.include("is not in this clone (a shallow clone?): checking HEAD's commit only");
      expect(r.stdout).to.include("HEAD's commit: 1 checked");
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });
});
