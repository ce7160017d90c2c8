import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * A test outside the fast lane (`npm run test:fast`, `.mocharc.fast.json`) is there because it
 * starts a process or opens a connection — Redis, a service, a browser, a CLI, a server it reaches
 * over TCP — which the lane refuses (libs/testing/src/fast-lane.ts). A test file that shows no sign
 * of one is refused here: it belongs in the lane's folders, where `npm run test:fast` runs it.
 *
 * A sign, read from the file's syntax and from the helpers it imports (followed: a relative import
 * of anything but a package's product code under `src/`, and the test kit's own modules):
 * - an import (static, dynamic, `export … from`, `require`) of a module that starts a process or
 *   reaches a server: `child_process`, `net`, `http`, Redis clients (`ioredis`, `bullmq`), a
 *   browser (`playwright-core`), a broker's or a cloud's client, esbuild (its service is a
 *   process), … (PROCESS_MODULES) — a type-only import is none;
 * - a name of the test kit (`@mgw/testing`, or a module of its own) other than its in-process
 *   helpers (PURE_TEST_KIT): `Stack`, `useStack`, `useSharedStack`, `startRedisServer`, a webhook
 *   receiver, a proxy, `freePort`, …;
 * - a use of `fetch`, `REDIS_URL`, `createRedis`, `WebSocket` or `EventSource` (SIGN_NAMES);
 * - a video for Baileys to send (`{ video: bytes }`): Baileys runs ffmpeg for its thumbnail.
 * A sign may be a false one (`node:http` imported for a status code): the rule only refuses files
 * with none, which start nothing and open nothing, so the lane's guards would let them run.
 */

/** Modules whose import is a sign (with or without `node:`; one ending in `/` is a prefix). */
export const PROCESS_MODULES = [
  'child_process',
  'cluster',
  'net',
  'tls',
  'dgram',
  'http',
  'https',
  'http2',
  'ioredis',
  'bullmq',
  'rate-limit-redis',
  'ws',
  'eventsource',
  'undici',
  'playwright',
  'playwright-core',
  '@playwright/',
  '@axe-core/playwright',
  'esbuild',
  'autocannon',
  's3rver',
  'fauxqs',
  '@aws-sdk/',
  'nats',
  'amqplib',
  'kafkajs',
  '@modelcontextprotocol/sdk/client/',
];

/**
 * The test kit's names that start nothing and reach nothing outside the process: waiting, job and
 * fixture builders, the simulator in-process and a Baileys device linked to it, a passkey
 * authenticator. Any other name of the kit counts as a sign (a new one does until it is listed).
 */
export const PURE_TEST_KIT = [
  'waitFor',
  'until',
  'sleep',
  'sendJobData',
  'sendJobOptions',
  'keySlot',
  'HOSTILE_LIST_ENTRIES',
  'formatFootprint',
  'reportFailedTest',
  'startTestSimulator',
  'linkTestDevice',
  'TestDevice',
  'simControl',
  'mediaDispatcher',
  'download',
  'trustSimulator',
  'memoryAuthState',
  'silentPino',
  'SoftwareAuthenticator',
  'newCompanion',
  'companionKeysBody',
  'pairedCreds',
];
const PURE = new Set(PURE_TEST_KIT);

/** Names whose use is a sign wherever they appear. */
export const SIGN_NAMES = ['fetch', 'REDIS_URL', 'createRedis', 'WebSocket', 'EventSource'];
const SIGNS = new Set(SIGN_NAMES);

const TEST_KIT = '@mgw/testing';
const TEST_KIT_INDEX = 'libs/testing/src/index.ts';

function isProcessModule(spec) {
  const name = spec.replace(/^node:/, '');
  return PROCESS_MODULES.some((m) =>
    m.endsWith('/') ? name.startsWith(m) : name === m || name.startsWith(`${m}/`),
  );
}

/** The file a relative import names (`.js` written for a `.ts` file), or undefined. */
function resolveRelative(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  return [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    path.join(base, 'index.ts'),
  ].find((c) => existsSync(c) && statSync(c).isFile());
}

/** The names an import or re-export takes from its module: undefined for all of them (`* as`). */
function importedNames(node) {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) return [];
    if (clause.isTypeOnly) return [];
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) return undefined;
    const values = (bindings?.elements ?? []).filter((e) => !e.isTypeOnly);
    return [...(clause.name ? ['default'] : []), ...values.map((e) => (e.propertyName ?? e.name).text)];
  }
  if (node.isTypeOnly) return [];
  const clause = node.exportClause;
  if (!clause || !ts.isNamedExports(clause)) return undefined;
  return clause.elements.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text);
}

/** Whether an import or re-export takes only types (it runs nothing of its module). */
function typesOnly(node) {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) return false; // `import 'x'` runs x
    if (clause.isTypeOnly) return true;
    const bindings = clause.namedBindings;
    return (
      !clause.name &&
      !!bindings &&
      ts.isNamedImports(bindings) &&
      bindings.elements.every((e) => e.isTypeOnly)
    );
  }
  return (
    node.isTypeOnly ||
    (!!node.exportClause &&
      ts.isNamedExports(node.exportClause) &&
      node.exportClause.elements.every((e) => e.isTypeOnly))
  );
}

/**
 * `{ video: bytes }`: a video for Baileys to send, which runs ffmpeg (child_process.exec) for its
 * thumbnail unless it is given one. (`{ video: true }`, a call's flag, is none.)
 */
function isVideoToSend(node) {
  if (ts.isShorthandPropertyAssignment(node)) return node.name.text === 'video';
  if (!ts.isPropertyAssignment(node) || !(ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)))
    return false;
  const value = node.initializer.kind;
  return (
    node.name.text === 'video' && value !== ts.SyntaxKind.TrueKeyword && value !== ts.SyntaxKind.FalseKeyword
  );
}

/** Each helper's signs, by path and modification time (a long-lived ESLint sees edits). */
const helperSigns = new Map();

/**
 * The signs of a file (its text given; `file` names it, for its relative imports): short reasons,
 * empty when it shows none. `within` holds the helpers being read, so a cycle ends.
 */
export function processSigns(file, text, repoRoot, within = new Set()) {
  return signsOf(
    ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS),
    repoRoot,
    within,
  );
}

/** The signs of a parsed file (a TypeScript source file with its parents set). */
function signsOf(source, repoRoot, within = new Set()) {
  const file = source.fileName;
  const signs = [];
  const testKit = (names, spec) => {
    const impure = names === undefined ? ['*'] : names.filter((n) => !PURE.has(n));
    if (impure.length > 0) signs.push(`${impure.join(', ')} from ${spec}`);
  };
  const follow = (spec) => {
    const target = resolveRelative(file, spec);
    if (!target) return;
    if (within.has(target)) {
      within.cut = true; // a cycle: what is read inside it is not kept (it misses the files above)
      return;
    }
    const rel = path.relative(repoRoot, target).split(path.sep).join('/');
    // A package's product code is not followed: a unit test gives it fakes (a test that hands it a
    // real Redis shows that itself). The test kit's sources and every test helper are.
    const product =
      /^(libs|services)\/[^/]+\/src\//.test(rel) &&
      !rel.startsWith('libs/testing/src/') &&
      !/\.test\.ts$|(^|\/)e2e\//.test(rel);
    if (product) return;
    const key = `${target}:${statSync(target).mtimeMs}`;
    let inner = helperSigns.get(key);
    if (!inner) {
      const cutBefore = within.cut;
      within.cut = false;
      within.add(target);
      inner = processSigns(target, readFileSync(target, 'utf8'), repoRoot, within);
      within.delete(target);
      if (!within.cut) helperSigns.set(key, inner);
      within.cut ||= cutBefore;
    }
    if (inner.length > 0) signs.push(`${spec} (${inner[0]})`);
  };
  const onModule = (spec, names) => {
    if (isProcessModule(spec)) signs.push(spec);
    else if (spec === TEST_KIT) testKit(names, spec);
    else if (spec.startsWith(`${TEST_KIT}/`)) signs.push(spec);
    else if (spec.startsWith('.')) {
      if (resolveRelative(file, spec) === path.join(repoRoot, TEST_KIT_INDEX)) testKit(names, spec);
      else follow(spec);
    }
  };
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (!typesOnly(node)) onModule(node.moduleSpecifier.text, importedNames(node));
      return;
    }
    if (ts.isImportEqualsDeclaration(node)) return; // `import x = require()`: not written here
    if (ts.isCallExpression(node)) {
      const [arg] = node.arguments;
      const dynamic = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const required = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if ((dynamic || required) && arg && ts.isStringLiteralLike(arg)) onModule(arg.text, undefined);
    } else if (ts.isIdentifier(node) && SIGNS.has(node.text)) {
      // A property of that name is another's (`res.fetch`, `{ fetch: … }` as a key), not the global.
      const parent = node.parent;
      const member = ts.isPropertyAccessExpression(parent) && parent.name === node;
      const key = (ts.isPropertyAssignment(parent) || ts.isPropertySignature(parent)) && parent.name === node;
      if (!member && !key) signs.push(node.text);
      else if (node.text === 'REDIS_URL') signs.push(node.text); // process.env.REDIS_URL
    } else if (ts.isStringLiteralLike(node) && node.text === 'REDIS_URL') signs.push(node.text);
    else if (isVideoToSend(node)) signs.push('video');
    ts.forEachChild(node, visit);
  };
  visit(source);
  return signs;
}

/**
 * The rule: a test file it is configured for (eslint.config.js gives it the test files of
 * `npm test` outside the fast lane) with no sign is refused.
 */
export function startsAProcess(repoRoot) {
  return {
    meta: {
      type: 'problem',
      docs: { description: 'a test outside the fast lane starts a process or opens a connection' },
      messages: {
        noProcess:
          'This test starts no process and opens no connection (no Stack, Redis, child_process, browser, ' +
          'server or fetch: scripts/eslint/starts-a-process.js): put it in the fast lane’s folders — ' +
          "its package's test/fast/ (test/fast/ at the root), or beside its code under src/ outside e2e/ — " +
          'where `npm run test:fast` runs it.',
      },
      schema: [],
    },
    create(context) {
      return {
        Program(node) {
          // typescript-eslint's parser has parsed the file with TypeScript already: its tree serves.
          const parsed = context.sourceCode.parserServices?.esTreeNodeToTSNodeMap?.get(node);
          const signs =
            parsed?.kind === ts.SyntaxKind.SourceFile && parsed.fileName === context.filename
              ? signsOf(parsed, repoRoot)
              : processSigns(context.filename, context.sourceCode.text, repoRoot);
          if (signs.length === 0)
            context.report({ node, loc: { line: 1, column: 0 }, messageId: 'noProcess' });
        },
      };
    },
  };
}
