import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { isEntryPoint } from '../src/index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('common: isEntryPoint (a service main runs itself only when node was started with it)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-entry-'));
    const lib = pathToFileURL(path.join(ROOT, 'libs/common/src/service-runtime.ts')).href;
    await writeFile(
      path.join(dir, 'main.mjs'),
      `const { isEntryPoint } = await import(${JSON.stringify(lib)});\n` +
        `console.log(isEntryPoint(import.meta.url) ? 'runs itself' : 'imported');\n`,
    );
    await writeFile(path.join(dir, 'host.mjs'), `await import('./main.mjs');\n`);
    // As the image's /app/main.js links to services/<name>/dist/main.js.
    await symlink(path.join(dir, 'main.mjs'), path.join(dir, 'link.mjs'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const run = (file: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, file)], {
      cwd: ROOT,
      encoding: 'utf8',
    }).stdout.trim();

  it('When node runs the file, or a symlink to it, then it is the entry point; when another file imports it, it is not', function () {
    // Three Node processes started with tsx, one after another: seconds each on a loaded machine.
    this.timeout(60_000);
    expect([run('main.mjs'), run('link.mjs'), run('host.mjs')]).to.deep.equal([
      'runs itself',
      'runs itself',
      'imported',
    ]);
    expect(isEntryPoint(import.meta.url), 'a module mocha loaded').to.equal(false);
  });
});
