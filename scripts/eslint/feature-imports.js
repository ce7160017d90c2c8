import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * What one feature may import from another (services/api/src/features/<cap>/): nothing but the
 * other's public `index.ts`. A capability's files are its own to change; what it offers the others
 * is the short list its index exports, so a change inside one folder cannot break another's code
 * unnoticed. The wiring (features/mounts.ts, app.ts, the OpenAPI document) imports features'
 * mounts from outside any feature folder and is not concerned; tests beside a feature are held to
 * the same rule as its code.
 */
export function featureImports(featuresDir) {
  const featureOf = (file) => {
    const rel = path.relative(featuresDir, file);
    if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
    const [first, ...rest] = rel.split(path.sep);
    return rest.length > 0 ? first : undefined;
  };
  return {
    meta: {
      type: 'problem',
      docs: { description: "a feature imports another feature only through that feature's index.ts" },
      messages: {
        private:
          'features/{{from}} imports {{target}}: import what features/{{to}} offers from its index.ts (add it there if it is meant to be shared).',
      },
      schema: [],
    },
    create(context) {
      const from = featureOf(context.filename);
      if (!from) return {};
      const check = (node, source) => {
        if (typeof source !== 'string' || !source.startsWith('.')) return;
        const target = path.resolve(path.dirname(context.filename), source);
        const to = featureOf(target);
        // Another feature is another folder that exists (a path that leads nowhere is tsc's to refuse).
        if (!to || to === from || !existsSync(path.join(featuresDir, to))) return;
        const rel = path.relative(path.join(featuresDir, to), target);
        if (rel === 'index.js' || rel === 'index.ts' || rel === 'index') return;
        context.report({
          node,
          messageId: 'private',
          data: { from, to, target: path.relative(featuresDir, target) },
        });
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
