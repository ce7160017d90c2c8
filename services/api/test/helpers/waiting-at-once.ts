import { waitFor } from '@mgw/testing';

/**
 * Starts requests whose work a stand-in service holds, waits until it holds all of them (and a
 * moment more, so each request is waiting for its result), releases them, and returns their
 * statuses with the listener-leak warnings Node emitted meanwhile.
 */
export async function requestsWaitingAtOnce(opts: {
  start: () => Promise<{ status: number }>[];
  allHeld: () => boolean;
  release: () => void;
  what: string;
}): Promise<{ statuses: number[]; leakWarnings: string[] }> {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  try {
    const answers = opts.start();
    await waitFor(async () => opts.allHeld(), { what: opts.what });
    await new Promise((r) => setTimeout(r, 200));
    opts.release();
    const results = await Promise.all(answers);
    await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    return {
      statuses: results.map((r) => r.status),
      leakWarnings: warnings.filter((w) => /MaxListeners/.test(w)),
    };
  } finally {
    process.off('warning', onWarning);
  }
}
