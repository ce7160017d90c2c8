/**
 * The suite must leave the checkout as it found it: tests write their data directories, keys,
 * passwords and screenshots under os.tmpdir(), never beside the sources (a file left there
 * changes what the next `npm start` or test run sees, even when .gitignore hides it).
 *
 * A listing of the checkout's files (path, size, modification time), not `git status`: it works
 * in a checkout that is not a git repository (an unpacked tarball) and it sees ignored files too.
 * Only what building and installing make is left out of it.
 */
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Directories (by name, at any depth) that builds and installs make: never listed. */
export const CHECKOUT_GUARD_SKIPPED_DIRS: readonly string[] = [
  '.git',
  'node_modules',
  // build output (`npm run build`, and `npm start` when the build is stale)
  'dist',
  // lerna's task runner state (`npm run build`)
  '.nx',
  // the Node binary .ci/run unpacks
  '.node24',
];
/** Files that builds make beside their output (tsc's incremental state). */
const SKIPPED_FILE = /\.tsbuildinfo$/;

/** Every file (`path` → `size:mtime`) and directory (`path/` → `dir`) under `root`, relative to it. */
export type CheckoutListing = Map<string, string>;

export function listCheckout(root: string): CheckoutListing {
  const listing: CheckoutListing = new Map();
  const walk = (dir: string, rel: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (CHECKOUT_GUARD_SKIPPED_DIRS.includes(entry.name)) continue;
      if (entry.isDirectory()) {
        listing.set(`${relPath}/`, 'dir');
        walk(path.join(dir, entry.name), relPath);
      } else if (!SKIPPED_FILE.test(entry.name)) {
        // lstat: a symlink is listed as itself, never followed
        const stat = lstatSync(path.join(dir, entry.name), { throwIfNoEntry: false });
        if (stat) listing.set(relPath, `${stat.size}:${stat.mtimeMs}`);
      }
    }
  };
  walk(root, '');
  return listing;
}

/** What differs, one line each: `+ path` (new), `- path` (gone), `~ path` (written to). */
export function checkoutChanges(before: CheckoutListing, after: CheckoutListing): string[] {
  const changes: string[] = [];
  for (const [p, v] of after) {
    const was = before.get(p);
    if (was === undefined) changes.push(`+ ${p}`);
    else if (was !== v) changes.push(`~ ${p}`);
  }
  for (const p of before.keys()) if (!after.has(p)) changes.push(`- ${p}`);
  return changes.sort((a, b) => a.slice(2).localeCompare(b.slice(2)));
}

/** Starts watching `root`; the returned check throws, naming every change, if it changed since. */
export function guardCheckout(root: string): () => void {
  const before = listCheckout(root);
  return () => {
    const changes = checkoutChanges(before, listCheckout(root));
    if (changes.length === 0) return;
    throw new Error(
      `the test run changed the checkout (${root}):\n${changes.map((c) => `  ${c}`).join('\n')}\n` +
        'Tests write data directories, keys, passwords and artifacts under os.tmpdir() and remove them; ' +
        `only ${CHECKOUT_GUARD_SKIPPED_DIRS.filter((d) => d !== '.git').join('/, ')}/ and *.tsbuildinfo may change.`,
    );
  };
}
