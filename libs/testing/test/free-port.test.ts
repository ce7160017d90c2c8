import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BLOCKED_BY_FETCH, freePort } from '../src/net.js';

const NET = fileURLToPath(new URL('../src/net.ts', import.meta.url));

/** The ports `count` concurrent freePort calls give in a fresh Node with MOCHA_WORKER_ID `worker`. */
function drawIn(worker: number, count: number): Promise<number[]> {
  const script = `const { freePort } = await import(${JSON.stringify(NET)});
    console.log(JSON.stringify(await Promise.all(Array.from({ length: ${count} }, () => freePort()))));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, MOCHA_WORKER_ID: String(worker) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim()) as number[]) : reject(new Error(`exit ${code}`)),
    );
  });
}

describe('testing: free ports (freePort)', () => {
  it('When a process draws many ports at once (services of a stack start together), then no two are the same', async () => {
    // In a worker's slice (2,846 ports on a Linux default), where a repeat is likeliest; and here.
    for (const ports of [
      await drawIn(0, 400),
      await Promise.all(Array.from({ length: 400 }, () => freePort())),
    ])
      expect(new Set(ports).size).to.equal(ports.length);
  });

  it('When a worker draws nearly every port of its slice, then none is a port fetch refuses (10080, a "bad port")', async () => {
    // Worker 0's slice starts at 10,000 on Linux defaults: it holds 10080.
    const ports = await drawIn(0, 2_500);
    expect(ports).to.not.include(10080);
    // The list is fetch's own: each of its ports is refused before any connection is tried.
    for (const port of BLOCKED_BY_FETCH) {
      const refused = await fetch(`http://127.0.0.1:${port}/`).catch((err: Error) => String(err.cause));
      expect(refused, String(port)).to.equal('Error: bad port');
    }
  });

  it('When parallel mocha workers draw ports, then each draws from a slice of its own, below the ephemeral range', async () => {
    const ephemeralLow = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    const draws = await Promise.all([0, 1, 2, 3].map((worker) => drawIn(worker, 50)));
    const spans = draws.map((ports) => [Math.min(...ports), Math.max(...ports)] as const);
    for (const [, high] of spans) expect(high).to.be.below(ephemeralLow);
    const sorted = [...spans].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]![0]).to.be.above(sorted[i - 1]![1]);
    // A worker that replaced one (mocha counts on) gets a slice no live worker of 4 has.
    const fifth = await drawIn(4, 50);
    for (const [low, high] of spans) expect(fifth.every((p) => p < low || p > high)).to.equal(true);
  });
});
