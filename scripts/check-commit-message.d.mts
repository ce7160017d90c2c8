/** The longest subject line a commit message may have. */
export const MAX_SUBJECT_LENGTH: number;
/**
 * What is wrong with a commit message: one sentence per broken rule, none when it keeps them.
 * `merge`: the commit has more than one parent (its message is not judged).
 */
export function messageProblems(message: string, opts?: { merge?: boolean }): string[];
/** The message git keeps from its message file: comment lines and the scissors line's tail dropped. */
export function withoutGitComments(text: string, commentChar?: string): string;
