import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { featureImports } from './scripts/eslint/feature-imports.js';
import { noCrossPackageRelative } from './scripts/eslint/no-cross-package-relative.js';
import { noImportCycle } from './scripts/eslint/no-import-cycle.js';
import { noRawJid } from './scripts/eslint/no-raw-jid.js';
import { startsAProcess } from './scripts/eslint/starts-a-process.js';

const ROOT = fileURLToPath(new URL('.', import.meta.url)).replace(/\/$/, '');
const readJson = (file) => JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8'));

/**
 * Package boundaries, kept by the linter (docs/development.md shows the same map):
 * which workspace packages each package's sources may import. Tests and benchmarks of a package
 * may also import the test kit and the simulators: those under its `test/` and `bench/`, and the
 * tests beside its code (a `<name>.test.ts` under `src/`, an `e2e/` folder there). Anything else
 * under @mgw/ is refused, and so is a relative import into another package.
 */
export const MAY_IMPORT = {
  'libs/common': [],
  'libs/contracts': [],
  'libs/store': ['common', 'contracts'],
  'libs/messenger': ['common', 'contracts', 'store'],
  'libs/messenger-sim': [],
  'libs/cloud-sim': [],
  'libs/cloud': ['common', 'contracts'],
  'libs/client': [],
  'libs/console': [],
  'libs/testing': ['common', 'contracts', 'store', 'messenger', 'messenger-sim', 'cloud-sim'],
  'services/api': ['cloud', 'common', 'contracts', 'console', 'store'],
  'services/connection': ['common', 'contracts', 'store', 'messenger'],
  'services/sender': ['cloud', 'common', 'contracts', 'store', 'messenger'],
  'services/notifier': ['common', 'contracts', 'store'],
  'services/all-in-one': ['common', 'contracts', 'api', 'connection', 'sender', 'notifier'],
};
/**
 * What a package's tests may import besides its own dependencies and the test kit: the console's
 * browser suites arrange what the page shows as the services would have written it (a device's
 * session record, a pool, a token), through the store's own writers rather than raw Redis keys.
 */
export const TESTS_MAY_ALSO_IMPORT = { 'libs/console': ['common', 'contracts', 'store'] };
/** Only the WhatsApp adapter speaks Baileys (the simulator and the test kit are its protocol peers). */
export const BAILEYS_ALLOWED = ['libs/messenger', 'libs/messenger-sim', 'libs/testing'];
const TEST_KIT = ['testing', 'messenger-sim', 'cloud-sim'];
const ALL = Object.keys(MAY_IMPORT).map((dir) => dir.split('/')[1]);
const SERVICES = Object.keys(MAY_IMPORT).filter((d) => d.startsWith('services/'));

/** `no-restricted-imports` options refusing every @mgw package not in `allowed` (and Baileys). */
function restrictions(dir, allowed, why) {
  const refused = ALL.filter((name) => !allowed.includes(name) && `${dir.split('/')[0]}/${name}` !== dir);
  const paths = refused.map((name) => ({ name: `@mgw/${name}`, message: why }));
  if (!BAILEYS_ALLOWED.includes(dir)) {
    paths.push({
      name: '@whiskeysockets/baileys',
      message: 'Only libs/messenger imports Baileys: add what you need to @mgw/messenger.',
    });
  }
  const patterns = [
    ...refused.map((name) => ({ group: [`@mgw/${name}/*`], message: why })),
    {
      group: ['@mgw/*/src/*', '@mgw/*/test/*', '@mgw/*/dist/*', '@mgw/*/bench/*'],
      message: 'Import a package by its name, never its folders.',
    },
    ...(BAILEYS_ALLOWED.includes(dir)
      ? []
      : [{ group: ['@whiskeysockets/baileys/*'], message: 'Only libs/messenger imports Baileys.' }]),
  ];
  return { 'no-restricted-imports': ['error', { paths, patterns }] };
}

const boundaries = Object.entries(MAY_IMPORT).flatMap(([dir, allowed]) => [
  {
    files: [`${dir}/src/**/*.ts`, `${dir}/src/**/*.tsx`],
    rules: restrictions(
      dir,
      allowed,
      `${dir} may import only: ${allowed.map((a) => '@mgw/' + a).join(', ') || 'no @mgw package'} (see eslint.config.js MAY_IMPORT).`,
    ),
  },
  {
    files: [
      `${dir}/test/**/*.ts`,
      `${dir}/bench/**/*.ts`,
      `${dir}/src/**/*.test.ts`,
      `${dir}/src/**/e2e/**/*.ts`,
    ],
    rules: restrictions(
      dir,
      [...allowed, ...(TESTS_MAY_ALSO_IMPORT[dir] ?? []), ...TEST_KIT, dir.split('/')[1]],
      `tests of ${dir} may import only its own dependencies, @mgw/testing and @mgw/messenger-sim (and TESTS_MAY_ALSO_IMPORT).`,
    ),
  },
]);

/**
 * The API's use cases (every feature's operations, public or admin, and the acceptor they enqueue
 * through) return outcomes — accepted, refused and why — and know nothing of HTTP: their routes
 * map those to statuses and the contract's errors. Under `features/<cap>/` the HTTP side is
 * `mount.ts` (its route rows and handlers), `admin.ts` (its admin rows and handlers, the
 * dashboard's) and `openapi.ts`; the sign-in's cookies and guard are `http/session/`.
 */
export const USE_CASES = {
  files: ['services/api/src/enqueue/**/*.ts', 'services/api/src/features/**/*.ts'],
  ignores: [
    // A feature's HTTP side: its routes and handlers, and what the OpenAPI document says of them.
    'services/api/src/features/*/mount.ts',
    'services/api/src/features/*/admin.ts',
    'services/api/src/features/*/openapi.ts',
    // …and the body bounds its rows share across both surfaces.
    'services/api/src/features/*/bodies.ts',
    'services/api/src/features/mounts.ts',
    // The tests beside the code (a use case's, a capability's end-to-end ones).
    'services/api/src/**/*.test.ts',
    'services/api/src/**/e2e/**',
  ],
};
const HTTP_FREE =
  'A use case returns an outcome; its route maps it to HTTP (see eslint.config.js USE_CASES).';

/** The services/api boundary rule, refusing the HTTP layer (`http/`, express) as well. */
function useCaseRestrictions() {
  const dir = 'services/api';
  const allowed = MAY_IMPORT[dir];
  const why = `${dir} may import only: ${allowed.map((a) => '@mgw/' + a).join(', ')} (see eslint.config.js MAY_IMPORT).`;
  const [level, { paths, patterns }] = restrictions(dir, allowed, why)['no-restricted-imports'];
  return {
    'no-restricted-imports': [
      level,
      {
        paths: [...paths, { name: 'express', message: HTTP_FREE }],
        patterns: [...patterns, { group: ['**/http/*', 'express/*'], message: HTTP_FREE }],
      },
    ],
  };
}

/**
 * The console's kit (libs/console/src/kit/) is what every capability's screens share: it imports
 * no capability folder (`../<capability>/…`, its CSS included), or one capability's change would
 * reach every screen. What a kit piece needs of a capability is passed to it, or moves to the kit.
 */
function kitRestrictions() {
  const dir = 'libs/console';
  const why = `${dir} may import only: no @mgw package (see eslint.config.js MAY_IMPORT).`;
  const [level, { paths, patterns }] = restrictions(dir, MAY_IMPORT[dir], why)['no-restricted-imports'];
  return {
    'no-restricted-imports': [
      level,
      {
        paths,
        patterns: [
          ...patterns,
          {
            group: ['../*'],
            message:
              'The console kit imports no capability folder: pass what it needs in, or move it to the kit (eslint.config.js kitRestrictions).',
          },
        ],
      },
    ],
  };
}

/**
 * The test files of `npm test` (package.json's test:mocha globs) and those of the fast lane
 * (`npm run test:fast`: .mocharc.fast.json's spec, less its ignore globs). A test outside the lane
 * starts a process or opens a connection, or it moves into the lane (scripts/eslint/starts-a-process.js).
 */
export const TEST_FILES = [
  ...readJson('./package.json').scripts['test:mocha'].matchAll(/"([^"]+\.test\.ts)"/g),
].map((m) => m[1]);
export const FAST_LANE = readJson('./.mocharc.fast.json');
const lane = { lane: { rules: { 'starts-a-process': startsAProcess(ROOT) } } };

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.data/**', '.nx/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    files: ['**/test/**', '**/*.test.ts', '**/e2e/**', '**/bench/**', 'scripts/**', '**/cli.ts', '**/cli/**'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-unused-expressions': 'off' },
  },
  // The passkey browser extension (integrations/passkey-extension, no build step): plain JavaScript
  // the browser runs, with the browser's globals and the extension API's. Its content script is a
  // classic script (a content script cannot be a module); the rest are modules.
  {
    files: ['integrations/passkey-extension/**/*.js'],
    languageOptions: {
      globals: {
        chrome: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
        location: 'readonly',
        atob: 'readonly',
        btoa: 'readonly',
        CSSStyleSheet: 'readonly',
      },
    },
  },
  {
    files: ['integrations/passkey-extension/content.js'],
    languageOptions: { sourceType: 'script' },
  },
  // CommonJS scripts (scripts/check-node.cjs must run on any Node, so it cannot be a module).
  {
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // No package reaches into another by a relative path (tests included): import it by name.
  {
    files: ['**/*.ts'],
    plugins: { mgw: { rules: { 'no-cross-package-relative': noCrossPackageRelative(ROOT) } } },
    rules: { 'mgw/no-cross-package-relative': 'error' },
  },
  // No circles in the libraries: no module imports, through any others, the module importing it
  // (`import type` included; scripts/eslint/no-import-cycle.js).
  {
    files: ['libs/**/*.ts', 'libs/**/*.tsx'],
    plugins: { circles: { rules: { 'no-import-cycle': noImportCycle(ROOT) } } },
    rules: { 'circles/no-import-cycle': 'error' },
  },
  // WhatsApp addresses are parsed (@mgw/contracts jid.ts), never compared as strings: the
  // protocol writes one address more than one way (scripts/eslint/no-raw-jid.js).
  {
    files: ['libs/messenger/src/**/*.ts', 'libs/contracts/src/**/*.ts', 'services/*/src/**/*.ts'],
    // Tests state the spellings they expect; jid.ts is where the spellings are read.
    ignores: ['**/*.test.ts', '**/e2e/**', '**/*-fixture.ts', 'libs/contracts/src/jid.ts'],
    plugins: { jid: { rules: { 'no-raw-jid': noRawJid() } } },
    rules: { 'jid/no-raw-jid': 'error' },
  },
  // A feature imports another feature only through that feature's index.ts (its public surface).
  {
    files: ['services/api/src/features/**/*.ts'],
    // A test may reach into another feature to set up its fixtures.
    ignores: ['**/*.test.ts', '**/e2e/**'],
    plugins: {
      features: { rules: { 'imports-through-index': featureImports(`${ROOT}/services/api/src/features`) } },
    },
    rules: { 'features/imports-through-index': 'error' },
  },
  ...boundaries,
  { ...USE_CASES, rules: useCaseRestrictions() },
  {
    files: ['libs/console/src/kit/**/*.ts', 'libs/console/src/kit/**/*.tsx'],
    // A kit module's test keeps the console's test rules (it may read the contract it mirrors).
    ignores: ['**/*.test.ts', '**/e2e/**'],
    rules: kitRestrictions(),
  },
  // A test outside the fast lane shows that it starts a process or opens a connection: outside
  // the lane's folders, or in them under one of its ignore globs (an e2e/ folder).
  {
    files: TEST_FILES,
    ignores: FAST_LANE.spec,
    plugins: lane,
    rules: { 'lane/starts-a-process': 'error' },
  },
  {
    files: FAST_LANE.spec.flatMap((spec) => (FAST_LANE.ignore ?? []).map((ignored) => [spec, ignored])),
    plugins: lane,
    rules: { 'lane/starts-a-process': 'error' },
  },
  // Services never import each other, even in tests; the cross-package tests under test/ may
  // read a service's config (e.g. to check a ConfigMap), nothing else of it.
  {
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: SERVICES.map((d) => ({
            name: `@mgw/${d.split('/')[1]}`,
            message: 'Start a service as a process (Stack), do not import it.',
          })),
          patterns: [
            {
              group: ['@mgw/*/src/*', '@mgw/*/test/*', '@mgw/*/dist/*'],
              message: 'Import a package by its name, never its folders.',
            },
          ],
        },
      ],
    },
  },
);
