import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Refuses a relative import that lands in another workspace package (or in the root's tests from
 * a package): packages are imported by name (`@mgw/x`), so a relative path such as
 * `../../../test/e2e/harness.js` or `../../sender/src/pacing.js` is always a boundary breach.
 * Written here because the resolver-based rule of eslint-plugin-import-x needs native bindings
 * (unrs-resolver) that the npm registry reachable from CI does not carry for every platform,
 * which would leave package-lock.json incomplete and `npm ci` failing.
 */
function packageRoot(file, repoRoot) {
  let dir = path.dirname(file);
  while (dir.startsWith(repoRoot) && dir !== repoRoot) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    dir = path.dirname(dir);
  }
  return repoRoot;
}

export function noCrossPackageRelative(repoRoot) {
  return {
    meta: {
      type: 'problem',
      docs: { description: 'import other workspace packages by name, never by a relative path' },
      messages: {
        crossPackage:
          'Relative import into another package ({{target}}): import it by its package name instead.',
      },
      schema: [],
    },
    create(context) {
      const from = packageRoot(context.filename, repoRoot);
      const check = (node, source) => {
        if (typeof source !== 'string' || !source.startsWith('.')) return;
        const target = path.resolve(path.dirname(context.filename), source);
        const to = packageRoot(target, repoRoot);
        if (to !== from) {
          context.report({
            node,
            messageId: 'crossPackage',
            data: { target: path.relative(repoRoot, to) || '.' },
          });
        }
      };
      return {
        ImportDeclaration: (node) => check(node, node.source.value),
        ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
        ExportAllDeclaration: (node) => check(node, node.source.value),
        ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
      };
    },
  };
}
