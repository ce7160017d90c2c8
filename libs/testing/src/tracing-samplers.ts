/**
 * The tracing sides the benches and the cost budget compare (issues 71 and 81): each one's sampler
 * variables (the standard `OTEL_TRACES_SAMPLER` and `_ARG`; the OTLP endpoint is the caller's), and
 * the goals each is held to, per unit of work ÷ `off`'s in the same run.
 */
export const TRACING_SAMPLERS = {
  /** Tracing off: no OTLP endpoint, the SDK not even loaded. */
  off: undefined,
  /** A second process or stack with tracing off: what two equal ones differ by, the noise floor. */
  control: undefined,
  /** Tracing on, nothing sampled: every new trace a ratio miss. */
  unsampled: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
  /** The 10 % the Kubernetes files ship. */
  ratio: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
  /** Every trace sampled. */
  on: { OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
} as const;
export type TracingSide = keyof typeof TRACING_SAMPLERS;

/** Issue 81's goals: the API per `POST /send`, the sender per message sent, each ÷ `off`'s. */
export const TRACING_GOALS = {
  api: { unsampled: 1.02, ratio: 1.05, on: 1.2 },
  sender: { ratio: 1.03, on: 1.1 },
} as const satisfies Record<'api' | 'sender', Partial<Record<TracingSide, number>>>;
