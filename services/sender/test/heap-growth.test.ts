import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);
const FIXTURE = path.join(import.meta.dirname, 'fixtures/heap-churn.ts');

async function largestHeapMiB(percent: number): Promise<number> {
  // Without V8's memory reducer, which shrinks the heap on a timer once the process allocates
  // slowly by the clock — as a process starved of CPU does: beside the parallel suite on 2 busy
  // cores, the 4× run once peaked at 296 MiB (its usual ~570), under the 20 % run's 310. The
  // growing factor under test is what sizes the heap between collections, clock or no clock.
  const args = ['--no-memory-reducer', '--import', 'tsx', FIXTURE, String(percent)];
  const { stdout } = await run(process.execPath, args, { timeout: 60_000 });
  return (JSON.parse(stdout.trim()) as { largestHeapMiB: number }).largestHeapMiB;
}

describe('sender heap growth (SENDER_HEAP_GROWING_PERCENT)', function () {
  this.timeout(120_000);

  it('When a process allocates fast with objects that die in the old generation, then a 20 % growth limit keeps its heap well below what V8 keeps at the factor it picks for such a process (4×)', async () => {
    // V8 picks its factor (1.1–4) from how fast the process allocates and collects: on an idle
    // machine this fixture gets 4×, on a loaded one sometimes far less, so the baseline is 4× set
    // outright (300 %), not V8's choice of the moment.
    const fastest = await largestHeapMiB(300);
    const limited = await largestHeapMiB(20);
    console.log(
      `      largest heap: 4× growth ${fastest.toFixed(0)} MiB, limited to 20 % ${limited.toFixed(0)} MiB`,
    );
    // Seen here: ~573 MiB against ~311 MiB (the live set is ~50 MiB plus the ring of ~300,000).
    expect(limited).to.be.lessThan(fastest * 0.75);
  });
});
