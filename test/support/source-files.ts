import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The files below `dir` that `keep` accepts, skipping node_modules, dist and dot folders. */
export function filesUnder(dir: string, keep: (path: string) => boolean): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = join(dir, e);
    if (e === 'node_modules' || e === 'dist' || e.startsWith('.')) return [];
    if (statSync(path).isDirectory()) return filesUnder(path, keep);
    return keep(path) ? [path] : [];
  });
}

/** TypeScript sources below `dir` (no declaration files). */
export const tsFiles = (dir: string): string[] =>
  filesUnder(dir, (p) => /\.(ts|tsx|mts)$/.test(p) && !p.endsWith('.d.ts'));
