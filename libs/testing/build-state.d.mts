/** Newest modification time of any file below `dir` (0 when it does not exist). */
export function newestMtime(dir: string): number;
/** Whether a package's `dist/` is missing or older than its `src/`. */
export function isStale(pkgDir: string): boolean;
/** Whether the repository at `root` needs `npm run build` (a stale package or dashboard build). */
export function buildNeeded(root: string): boolean;
