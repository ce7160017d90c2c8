// Runs the WhatsApp simulator for sandbox mode: builds libs/messenger-sim first when its dist is
// missing or older than its sources, then hands the process over to dist/cli.js.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isStale } from '@mgw/testing/build-state';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = join(root, 'libs', 'messenger-sim');

if (isStale(pkg)) {
  console.log('building libs/messenger-sim ...');
  execFileSync('npx', ['tsc', '-p', join(pkg, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
}

await import(pathToFileURL(join(pkg, 'dist', 'cli.js')).href);
