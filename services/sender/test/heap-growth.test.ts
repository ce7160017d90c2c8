import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);
const FIXTURE = path.join(import.meta.dirname, 'fixtures/heap-churn.ts');

async function largestHeapMiB(percent: number): Promise<number> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', FIXTURE, String(percent)], {
    timeout: 60_000,
  });
  return (JSON.parse(stdout.trim()) as { largestHeapMiB: number }).largestHeapMiB;
}

describe('sender heap growth (SENDER_HEAP_GROWING_PERCENT)', function () {
  this.timeout(120_000);

  it('When a process allocates fast with objects that die in the old generation, then a 20 % growth limit keeps its heap well below what V8 keeps by itself', async () => {
    const own = await largestHeapMiB(0);
    const limited = await largestHeapMiB(20);
    console.log(
      `      largest heap: V8's own growth ${own.toFixed(0)} MiB, limited to 20 % ${limited.toFixed(0)} MiB`,
    );
    // Seen here: ~560 MiB against ~305 MiB (the live set is ~50 MiB plus the ring of ~300,000).
    expect(limited).to.be.lessThan(own * 0.75);
  });
});
