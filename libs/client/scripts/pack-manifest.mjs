/**
 * The package.json that `npm pack` puts in @mgw/client's tarball: the checkout's, without what
 * only the checkout can use. Its `exports` lose the `development` condition (it points at src/,
 * which the tarball does not hold: a consumer that sets the condition — Vite or webpack in
 * development, `node --conditions=development` — would otherwise resolve to a missing file), and
 * `scripts` and `devDependencies` go (they name the checkout: `cd ../..`, `@mgw/testing`).
 *
 *   node scripts/pack-manifest.mjs strip     (prepack, after the build)
 *   node scripts/pack-manifest.mjs restore   (postpack)
 *
 * npm packs the package.json on disk, so `strip` sets the checkout's aside under
 * `.package.json.workspace` — a hard link, the same file: its size and modification time are
 * untouched — and writes the packed one in its place (a rename: never a half-written file);
 * `restore` renames the original back. A pack that stopped between the two leaves the aside file:
 * the next pack keeps it as the original, and `restore` alone puts it back.
 */
import { existsSync, linkSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MANIFEST = path.join(DIR, 'package.json');
const ASIDE = path.join(DIR, '.package.json.workspace');
const NEXT = path.join(DIR, '.package.json.packed');

/** The conditions only the checkout resolves (to its TypeScript sources). */
const CHECKOUT_CONDITIONS = ['development'];

/** An `exports` target without the checkout's conditions. */
function consumerTarget(target) {
  if (typeof target !== 'object' || target === null) return target;
  return Object.fromEntries(Object.entries(target).filter(([c]) => !CHECKOUT_CONDITIONS.includes(c)));
}

/** The manifest a consumer installs, from the checkout's (its fields in the same order). */
export function packedManifest(pkg) {
  return Object.fromEntries(
    Object.entries(pkg)
      .filter(([field]) => field !== 'scripts' && field !== 'devDependencies')
      .map(([field, value]) => [
        field,
        field === 'exports'
          ? Object.fromEntries(Object.entries(value).map(([sub, target]) => [sub, consumerTarget(target)]))
          : value,
      ]),
  );
}

function strip() {
  if (!existsSync(ASIDE)) linkSync(MANIFEST, ASIDE);
  const original = JSON.parse(readFileSync(ASIDE, 'utf8'));
  writeFileSync(NEXT, `${JSON.stringify(packedManifest(original), null, 2)}\n`);
  renameSync(NEXT, MANIFEST);
}

function restore() {
  if (existsSync(ASIDE)) renameSync(ASIDE, MANIFEST);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const step = process.argv[2];
  if (step === 'strip') strip();
  else if (step === 'restore') restore();
  else {
    process.stderr.write('usage: node scripts/pack-manifest.mjs strip|restore\n');
    process.exit(2);
  }
}
