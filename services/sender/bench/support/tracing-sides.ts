import {
  senderBenchStack,
  sleep,
  type Stack,
  TRACING_GOALS,
  TRACING_SAMPLERS as SAMPLERS,
  type TracingSide,
  waitFor,
} from '@mgw/testing';

/**
 * The tracing sides the sender's benches compare (issue 71; libs/testing tracing-samplers.ts): the
 * sampler variables of each, the goal each is held to (sender CPU or instructions per message ÷
 * off's), and the sides a run takes from BENCH_SIDES — `off` always first.
 */
export { SAMPLERS, type TracingSide };
export const GOALS: Partial<Record<TracingSide, number>> = TRACING_GOALS.sender;

/** `off`, then the sides BENCH_SIDES names (`fallback` when it is unset), each once. */
export function sidesFromEnv(fallback: string): TracingSide[] {
  const named = (process.env.BENCH_SIDES ?? fallback)
    .split(',')
    .filter((n): n is TracingSide => n !== 'off' && n in SAMPLERS);
  return ['off', ...new Set(named)];
}

export { UNDER_VALGRIND_ENV } from '@mgw/testing';

/**
 * A side's stack: built services, the simulator as a process, no sender yet (the bench starts its
 * own, profiled or under valgrind), pacing off; traced as `side` says, exporting to `otlpUrl`.
 */
export function sideStack(
  side: TracingSide,
  otlpUrl: string | undefined,
  env: Record<string, string> = {},
): Promise<Stack> {
  const sampler = SAMPLERS[side];
  return senderBenchStack({
    ...env,
    ...(sampler && otlpUrl ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl, ...sampler } : {}),
  });
}

/** Links the stack's device to `phone` (POST /connect, the simulator's phone scans), connected within `timeoutMs`. */
export async function linkDevice(
  stack: Stack,
  phone: string,
  name: string,
  timeoutMs: number,
): Promise<void> {
  const connect = await stack.api<{ qrCode: string }>('POST', '/connect');
  await stack.simApi('POST', '/phone/link', { qr: connect.body.qrCode, phone, name });
  await stack.waitForStatus('connected', timeoutMs);
}

/**
 * Round `n`: one list to `to` through POST /send, until every contact has its `n`th message, then
 * `settleMs` more for its receipts.
 */
export async function sendRound(
  stack: Stack,
  to: string[],
  n: number,
  opts: { timeoutMs: number; settleMs: number; what: string },
): Promise<void> {
  const res = await stack.api('POST', '/send', { to, text: `round ${n}` });
  if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
  await waitFor(async () => (await Promise.all(to.map((p) => stack.inbox(p)))).every((m) => m.length >= n), {
    timeoutMs: opts.timeoutMs,
    intervalMs: 250,
    what: `${opts.what}: round ${n} delivered`,
  });
  await sleep(opts.settleMs);
}
