import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

describe('messenger-sim: sandbox process', function () {
  this.timeout(20_000);

  it('When started with SANDBOX_PORT=0, then it prints where it listens, serves /info and stops cleanly on SIGTERM', async () => {
    const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
    const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', cli], {
      env: { ...process.env, SANDBOX_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    const controlUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listen line in: ${out}`)), 15_000);
      child.stdout.on('data', () => {
        const match = /control API listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (match && out.includes('/ws/chat')) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    const info = (await (await fetch(`${controlUrl}/info`)).json()) as { wsUrl: string };
    child.kill('SIGTERM');

    expect(out).to.include(info.wsUrl);
    expect(await exited).to.equal(0);
  });
});
