import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = path.join(ROOT, 'scripts/install-test-deps.sh');

/** Runs the script with only `bin` on PATH (plus `id`, answering `uid`): what it says and exits with. */
function runWith(uid: number, programs: string[]) {
  const bin = mkdtempSync(path.join(os.tmpdir(), 'mgw-deps-'));
  try {
    writeFileSync(path.join(bin, 'id'), `#!/bin/sh\necho ${uid}\n`, { mode: 0o755 });
    for (const p of programs) symlinkSync('/bin/true', path.join(bin, p));
    const r = spawnSync('/bin/bash', [SCRIPT], { env: { PATH: bin }, encoding: 'utf8' });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}

describe('setup: scripts/install-test-deps.sh installs what the suite starts', () => {
  it('When a program is missing and the user is not root, then it installs nothing, names the Debian packages and prints the one command to run (exit 1)', () => {
    const r = runWith(1000, ['redis-server', 'jq', 'tinyproxy']);
    expect(r.status).to.equal(1);
    expect(r.out).to.include('test dependencies missing: prometheus microsocks');
    expect(r.out).to.match(
      /sudo sh -c 'apt-get update && apt-get install -y --no-install-recommends prometheus microsocks[^']*'/,
    );
    expect(r.out).to.not.include('redis-sentinel');
  });

  it('When every program is there, then it says so and exits 0 as any user', () => {
    const all = [
      'redis-server',
      'jq',
      'promtool',
      'tinyproxy',
      'microsocks',
      'rabbitmq-server',
      'nats-server',
      'valgrind',
      'callgrind_control',
    ];
    const r = runWith(1000, all);
    // chromium is looked for at /usr/bin/chromium: this machine's (the browser tests need it too).
    expect(r).to.deep.equal({ status: 0, out: 'test dependencies: all installed\n' });
  });

  it('When CI runs and the README gives the test command, then both run this script first', () => {
    expect(readFileSync(path.join(ROOT, '.ci/run'), 'utf8')).to.include('bash scripts/install-test-deps.sh');
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).to.include(
      'scripts/install-test-deps.sh && npm install && npm test',
    );
  });
});
