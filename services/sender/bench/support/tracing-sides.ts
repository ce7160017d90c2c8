/**
 * The tracing sides the sender's benches compare (issue 71): the sampler variables of each, the
 * goal each is held to (sender CPU or instructions per message ÷ off's), and the sides a run
 * takes from BENCH_SIDES — `off` always first.
 */
export const SAMPLERS = {
  off: undefined,
  /** A second stack with tracing off: what two equal stacks differ by, the measure's own noise. */
  control: undefined,
  unsampled: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
  ratio: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
  on: { OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
};
export type TracingSide = keyof typeof SAMPLERS;
export const GOALS: Partial<Record<TracingSide, number>> = { ratio: 1.03, on: 1.1 };

/** `off`, then the sides BENCH_SIDES names (`fallback` when it is unset), each once. */
export function sidesFromEnv(fallback: string): TracingSide[] {
  const named = (process.env.BENCH_SIDES ?? fallback)
    .split(',')
    .filter((n): n is TracingSide => n !== 'off' && n in SAMPLERS);
  return ['off', ...new Set(named)];
}
