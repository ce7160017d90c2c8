/**
 * Whether a package's build is current: plain JS (no build needed to run it), so `npm start` and
 * `npm run sandbox` can ask before anything is built, and the test kit's built-services stack
 * asks the same question (`@mgw/testing/build-state`).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Newest modification time of any file below `dir` (0 when it does not exist). */
export function newestMtime(dir) {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Whether a package's `dist/` is missing or older than its `src/`. */
export function isStale(pkgDir) {
  return (
    existsSync(path.join(pkgDir, 'src')) &&
    newestMtime(path.join(pkgDir, 'src')) > newestMtime(path.join(pkgDir, 'dist'))
  );
}

/**
 * Whether the repository at `root` needs `npm run build`: a package's `dist/` missing or older
 * than its `src/` (the console's built files included: libs/console/dist).
 */
export function buildNeeded(root) {
  const pkgs = ['libs', 'services'].flatMap((d) =>
    readdirSync(path.join(root, d)).map((p) => path.join(root, d, p)),
  );
  return pkgs.some(isStale);
}
