/**
 * The project's commit message rules, held by the commit-msg hook (.githooks/commit-msg) and by
 * CI for every new commit (scripts/check-commits.mjs): a subject line of at most 72 characters,
 * not empty, and the detail in a body set off from the subject by a blank line (git log --oneline,
 * GitHub and rebase lists show the subject alone, cut at about 72). Not judged: a merge commit
 * (its message is git's), and a `fixup!`, `squash!` or `amend!` commit (`git rebase --autosquash`
 * folds it into the commit it names).
 *
 * As a command (the hook): `node scripts/check-commit-message.mjs <message file>` reads git's
 * message file as git will keep it (comment lines and everything below the scissors line
 * dropped) and exits 1, saying what is wrong, when the message breaks a rule.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAX_SUBJECT_LENGTH = 72;

/** Subjects `git commit --fixup`/`--squash` write, folded away by `git rebase --autosquash`. */
const AUTOSQUASH = /^(fixup|squash|amend)! /;

/**
 * What is wrong with a commit message: one sentence per broken rule, none when it keeps them.
 * `merge`: the commit has more than one parent (its message is not judged).
 */
export function messageProblems(message, { merge = false } = {}) {
  if (merge) return [];
  // As git shows it: no trailing spaces, no blank lines before the subject.
  const lines = message.split(/\r?\n/).map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  const subject = lines[0] ?? '';
  if (subject === '') return ['the subject (the first line) is empty'];
  if (AUTOSQUASH.test(subject)) return [];
  const problems = [];
  const length = [...subject].length;
  if (length > MAX_SUBJECT_LENGTH)
    problems.push(
      `the subject is ${length} characters long, over ${MAX_SUBJECT_LENGTH}: shorten it and put the detail in the body`,
    );
  if (lines.length > 1 && lines[1] !== '')
    problems.push('the second line is not blank: a blank line goes between the subject and the body');
  return problems;
}

/**
 * The message git keeps from its message file (what the commit-msg hook is given): comment lines
 * dropped, and everything from the scissors line on (`git commit -v` puts the diff below it).
 */
export function withoutGitComments(text, commentChar = '#') {
  const lines = text.split(/\r?\n/);
  const scissors = lines.indexOf(`${commentChar} ------------------------ >8 ------------------------`);
  return (scissors === -1 ? lines : lines.slice(0, scissors))
    .filter((line) => !line.startsWith(commentChar))
    .join('\n');
}

/** Runs git in the current directory (the hook's: the top of the work tree); its output, or ''. */
function git(...args) {
  const run = spawnSync('git', args, { encoding: 'utf8' });
  return run.status === 0 ? run.stdout.trim() : '';
}

/** The hook: judges the message file git passes, as git will keep it. */
function main(file) {
  if (!file) {
    console.error('usage: node scripts/check-commit-message.mjs <commit message file>');
    return 2;
  }
  // core.commentChar may name another character ("auto" picks one per message: '#' is assumed).
  const configured = git('config', 'core.commentChar');
  const commentChar = configured.length === 1 ? configured : '#';
  // Concluding a merge (MERGE_HEAD is there until the merge commit is made): git's message.
  const mergeHead = git('rev-parse', '--git-path', 'MERGE_HEAD');
  const merge = mergeHead !== '' && existsSync(mergeHead);
  const problems = messageProblems(withoutGitComments(readFileSync(file, 'utf8'), commentChar), { merge });
  if (problems.length === 0) return 0;
  console.error('commit message refused (docs/development.md, "Commit messages"):');
  for (const problem of problems) console.error(`  - ${problem}`);
  console.error(`Your message is kept: \`git commit -e -F ${file}\` starts from it.`);
  return 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv[2]);
}
