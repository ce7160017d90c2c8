import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from '@typescript-eslint/typescript-estree';

/**
 * Refuses an import that closes a circle: a module that imports (directly or through others) the
 * module importing it. Every static `import` and `export … from` of a relative path counts,
 * `import type` included — a circle of types is still two modules that cannot be read, moved or
 * tested one without the other (issue 82). A dynamic `import()` does not count: it is how a module
 * loads another on demand. Imports of other packages are by name (`@mgw/x`) and their direction
 * is the boundaries' rule (eslint.config.js MAY_IMPORT), so only a package's own files are
 * followed.
 *
 * Written here rather than taken from eslint-plugin-import-x (its `no-cycle`): that plugin's
 * resolver needs native bindings the registry CI reaches does not carry for every platform
 * (scripts/eslint/no-cross-package-relative.js says more). The file being linted is read from its
 * AST; the others from disk, parsed once per lint run (and again when they change).
 */

/** `./x.js` as the file it names: `x.ts`, `x.tsx`, or `x/index.ts`; undefined for a non-source. */
function resolve(from, specifier) {
  const base = path.resolve(path.dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|cjs|jsx|ts|tsx)$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, path.join(base, 'index.ts')])
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return undefined;
}

/** The relative specifiers a program imports or re-exports statically (types included). */
function specifiersOf(program) {
  const out = [];
  for (const node of program.body) {
    const source =
      node.type === 'ImportDeclaration' ||
      node.type === 'ExportAllDeclaration' ||
      (node.type === 'ExportNamedDeclaration' && node.source)
        ? node.source.value
        : undefined;
    if (typeof source === 'string' && source.startsWith('.')) out.push({ node, source });
  }
  return out;
}

/** Each file's resolved imports, by path, read from disk once per version of the file. */
const edges = new Map();
function importsOf(file) {
  const mtime = statSync(file).mtimeMs;
  const known = edges.get(file);
  if (known && known.mtime === mtime) return known.to;
  let to = [];
  try {
    const program = parse(readFileSync(file, 'utf8'), { jsx: file.endsWith('x') });
    to = specifiersOf(program)
      .map((s) => resolve(file, s.source))
      .filter(Boolean);
  } catch {
    // A file that does not parse is the parser's report, not this rule's.
  }
  edges.set(file, { mtime, to });
  return to;
}

/**
 * A path of imports from `start` back to `target` (files, `start` first), or undefined. It never
 * asks `imports` for `target`'s own: it stops there.
 */
function pathBack(start, target, imports) {
  const seen = new Set([start]);
  const stack = [[start]];
  while (stack.length > 0) {
    const trail = stack.pop();
    const at = trail[trail.length - 1];
    for (const next of imports(at)) {
      if (next === target) return trail;
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push([...trail, next]);
    }
  }
  return undefined;
}

export function noImportCycle(repoRoot) {
  return {
    meta: {
      type: 'problem',
      docs: { description: 'no import circles between a package’s modules, type imports included' },
      messages: {
        cycle:
          'Import circle: {{circle}}. Move what both need to a module of its own, or pass the narrow ' +
          'interface one needs instead of importing the other (docs/development.md "No circles").',
      },
      schema: [],
    },
    create(context) {
      const file = context.filename;
      return {
        Program(program) {
          // This file's imports as linted (its text may not be on disk yet); the search from each
          // stops on reaching this file, so only the others' imports are read (from disk).
          for (const { node, source } of specifiersOf(program)) {
            const target = resolve(file, source);
            if (!target || target === file) continue;
            const back = pathBack(target, file, importsOf);
            if (!back) continue;
            const circle = [file, ...back, file].map((f) => path.relative(repoRoot, f)).join(' → ');
            context.report({ node, messageId: 'cycle', data: { circle } });
          }
        },
      };
    },
  };
}
