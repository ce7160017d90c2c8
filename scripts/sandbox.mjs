// Runs the WhatsApp simulator for sandbox mode: builds libs/messenger-sim first when its dist is
// missing or older than its sources, then hands the process over to dist/cli.js.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = join(root, 'libs', 'messenger-sim');
const cli = join(pkg, 'dist', 'cli.js');

const newestSource = (dir) =>
  readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const path = join(dir, entry.name);
    return Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }, 0);

if (!existsSync(cli) || statSync(cli).mtimeMs < newestSource(join(pkg, 'src'))) {
  console.log('building libs/messenger-sim ...');
  execFileSync('npx', ['tsc', '-p', join(pkg, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
}

await import(pathToFileURL(cli).href);
