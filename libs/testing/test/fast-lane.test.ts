import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { REPO_ROOT } from '../src/index.js';
import { fastLaneFiles } from '../src/fast-lane-files.js';

interface JsonReport {
  stats: { passes: number; failures: number };
  passes: { title: string }[];
  failures: { title: string; err: { message: string } }[];
}

/** Runs spec files with the fast lane's fixtures (as .mocharc.fast.json does); answers mocha's JSON report. */
async function runFastLane(files: string[]): Promise<JsonReport> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-fast-lane-'));
  try {
    const config = path.join(dir, 'mocharc.json');
    await writeFile(
      config,
      JSON.stringify({
        'node-option': ['conditions=development', 'import=tsx'],
        require: ['./libs/testing/src/fast-lane.ts'],
        timeout: 20_000,
        exit: true,
      }),
    );
    const out = await new Promise<string>((resolve) =>
      execFile(
        process.execPath,
        [
          path.join(REPO_ROOT, 'node_modules/mocha/bin/mocha.js'),
          '--config',
          config,
          '--reporter',
          'json',
          ...files,
        ],
        { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 },
        (_err, stdout) => resolve(stdout),
      ),
    );
    return JSON.parse(out.slice(out.indexOf('{'))) as JsonReport;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('testing: the fast lane (npm run test:fast) starts no process and opens no TCP connection', function () {
  this.timeout(120_000);

  it('When tests of the lane spawn a process or connect over TCP, even catching the refusal, then each of them fails naming the call, and the pure tests around them pass, as do those talking to a server of their own process (at any loopback address)', async () => {
    const report = await runFastLane(['libs/testing/test/fixtures/fast-lane-suite.ts']);
    expect(report.passes.map((t) => t.title)).to.deep.equal([
      'a pure test',
      'talks to an HTTP server of its own process',
      'talks to a server of its own process on every interface, at another loopback address',
      'a pure test after them',
    ]);
    const failed = Object.fromEntries(report.failures.map((f) => [f.title, f.err.message]));
    expect(Object.keys(failed)).to.deep.equal([
      'spawns a process',
      'runs a process and swallows the refusal',
      'connects to Redis over TCP',
      'fetches over HTTP and swallows the failure',
    ]);
    expect(failed['spawns a process']).to.include('the fast lane refused child_process.spawn("true")');
    expect(failed['runs a process and swallows the refusal']).to.include(
      'the fast lane refused child_process.execFileSync("true")',
    );
    expect(failed['connects to Redis over TCP']).to.include(
      'the fast lane refused a TCP connection to 127.0.0.1:6379',
    );
    expect(failed['fetches over HTTP and swallows the failure']).to.include(
      'the fast lane refused a TCP connection to 127.0.0.1:6399',
    );
  });

  it('When the lane’s globs are read, then they match the test files of the lane’s folders, none of them end-to-end, each once', () => {
    const files = fastLaneFiles();
    expect(files.length).to.be.greaterThan(20);
    for (const file of files) {
      expect(file, 'a test file').to.match(/\.test\.ts$/);
      expect(file, 'not an end-to-end test').not.to.match(/\/(e2e|dashboard)\//);
    }
    expect(new Set(files).size, 'each file once').to.equal(files.length);
    // The use cases' tests beside their code are in it, and so is a test of a test/fast/ folder.
    expect(files).to.include('services/api/src/features/labels/create-label.test.ts');
    expect(files).to.include('test/fast/lint/boundaries.test.ts');
  });
});
