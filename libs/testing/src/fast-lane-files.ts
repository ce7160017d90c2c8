/**
 * The fast lane's test files (`npm run test:fast`): what the globs of `.mocharc.fast.json`'s `spec`
 * match, less what its `ignore` globs match — the lane is chosen by folder, not by a list (a test
 * beside its code, `services/<svc>/src/**\/<name>.test.ts`, or in a `test/fast/` folder). Apart from
 * fast-lane.ts, whose loading puts the lane's guards in place.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** The lane's configuration: its `spec` and `ignore` globs choose the lane's files. */
export const FAST_LANE_CONFIG = path.join(ROOT, '.mocharc.fast.json');

/** Folders never walked: no test of the repository is there. */
const NEVER = new Set(['node_modules', 'dist', '.git', '.nx', '.data', '.tmp']);

/** The lane's globs, from its configuration (paths from the repository root). */
export function fastLaneGlobs(): { spec: string[]; ignore: string[] } {
  const config = JSON.parse(readFileSync(FAST_LANE_CONFIG, 'utf8')) as { spec?: string[]; ignore?: string[] };
  return { spec: config.spec ?? [], ignore: config.ignore ?? [] };
}

/**
 * A glob as mocha's (minimatch's) reads the ones the lane uses: `**` any number of folders, `*` any
 * characters of one name, `?` one of them. Braces and classes are not supported (not used).
 */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      const slashAfter = glob[i + 2] === '/';
      out += slashAfter ? '(?:[^/]+/)*' : '.*';
      i += slashAfter ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // `dir/**` also matches `dir` itself, as minimatch's does.
  return new RegExp(`^${out.replace(/\/\.\*$/, '(?:/.*)?')}$`);
}

/** The files under `root` that `glob` matches and no glob of `ignore` does (paths from `root`, sorted). */
export function matchGlob(root: string, glob: string, ignore: readonly string[] = []): string[] {
  const wanted = globToRegExp(glob);
  const ignored = ignore.map(globToRegExp);
  // Walk from the glob's literal folders only (`libs/*/test/fast/**` starts at `libs`).
  const literal: string[] = [];
  for (const part of glob.split('/').slice(0, -1)) {
    if (/[*?]/.test(part)) break;
    literal.push(part);
  }
  const found: string[] = [];
  const walk = (rel: string) => {
    let entries;
    try {
      entries = readdirSync(path.join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!NEVER.has(entry.name)) walk(child);
      } else if (wanted.test(child) && !ignored.some((re) => re.test(child))) found.push(child);
    }
  };
  walk(literal.join('/'));
  return found.sort();
}

/** Each glob of the lane's `spec` and the files it matches (`ignore` applied). */
export function fastLaneMatches(): { glob: string; files: string[] }[] {
  const { spec, ignore } = fastLaneGlobs();
  return spec.map((glob) => ({ glob, files: matchGlob(ROOT, glob, ignore) }));
}

/** The lane's files (paths from the repository root), each once, sorted. */
export function fastLaneFiles(): string[] {
  return [...new Set(fastLaneMatches().flatMap((m) => m.files))].sort();
}
