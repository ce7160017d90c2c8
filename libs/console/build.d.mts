import type { Metafile } from 'esbuild';

/** Builds the console into `outDir` (default: BUILT_CONSOLE_DIR, this package's dist/); returns it. */
export function buildDashboard(outDir?: string): Promise<string>;

/**
 * Builds into `outDir` from `opts.srcDir` (default: the package's src), resolving bare imports in
 * `opts.nodePaths` too; answers the directory and esbuild's metafile (bytes per input).
 */
export function buildDashboardFrom(
  outDir: string,
  opts?: { srcDir?: string; nodePaths?: string[] },
): Promise<{ outDir: string; metafile: Metafile }>;
