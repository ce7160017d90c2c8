import Joi from 'joi';

/** The path of a queue URL: `/<account>/<queue name>` (80 characters at most, `.fifo` included). */
const SQS_QUEUE_URL = /^https?:\/\/[^/]+\/[^/]+\/(?=[A-Za-z0-9_.-]{1,80}$)[A-Za-z0-9_-]+(\.fifo)?$/;

/** What a refused EVENTS_SQS_QUEUE_URL says (after the variable's name), whichever rule refused it. */
export const SQS_QUEUE_URL_RULE =
  'must be the queue’s URL, http(s)://<host>/<account>/<queue name> (the queue name 1 to 80 ' +
  'letters, digits, - or _, ending in .fifo for a FIFO queue), e.g. ' +
  'https://sqs.eu-west-1.amazonaws.com/123456789012/mgw-events.fifo';

/**
 * The broker transports' environment (docs/configuration.md, docs/events.md "Brokers"). A
 * transport runs when its URL is set; the addresses are the operator's alone (a device only turns
 * a configured transport on or off for itself). URLs may hold credentials: they are never logged
 * (transport.ts `redactUrl`). SQS takes none here: its credentials come from the AWS SDK's chain
 * (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or the pod's role).
 */
export const brokerEnv: Joi.PartialSchemaMap = {
  EVENTS_RABBITMQ_URL: Joi.string().uri({ scheme: ['amqp', 'amqps'] }),
  EVENTS_RABBITMQ_EXCHANGE: Joi.string()
    .pattern(/^[A-Za-z0-9_.:-]{1,127}$/)
    .default('mgw.events'),
  EVENTS_NATS_URL: Joi.string().uri({ scheme: ['nats', 'tls'] }),
  EVENTS_NATS_STREAM: Joi.string()
    .pattern(/^[A-Za-z0-9_-]{1,64}$/)
    .default('MGW_EVENTS'),
  EVENTS_NATS_SUBJECT_PREFIX: Joi.string()
    .pattern(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/)
    .max(100)
    .default('mgw.events'),
  EVENTS_NATS_DUPLICATE_WINDOW_MS: Joi.number().integer().min(1000).max(86_400_000).default(120_000),
  // `https://sqs.<region>.amazonaws.com/<account>/<name>`; `<name>.fifo`: a FIFO queue.
  EVENTS_SQS_QUEUE_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .pattern(SQS_QUEUE_URL)
    // One sentence, the first rule that refused it (not one per rule).
    .prefs({ abortEarly: true })
    .messages({
      'string.uri': `{{#label}} ${SQS_QUEUE_URL_RULE}`,
      'string.uriCustomScheme': `{{#label}} ${SQS_QUEUE_URL_RULE}`,
      'string.pattern.base': `{{#label}} ${SQS_QUEUE_URL_RULE}`,
    }),
  EVENTS_SQS_REGION: Joi.string().pattern(/^[a-z]{2}(-[a-z]+)+-\d+$/),
  EVENTS_SQS_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }),
  EVENTS_BROKER_BATCH: Joi.number().integer().min(1).max(5000).default(500),
  EVENTS_BROKER_SWEEP_MS: Joi.number().integer().min(100).default(10_000),
  EVENTS_BROKER_RETRY_MS: Joi.number().integer().min(50).max(60_000).default(1000),
};

export interface BrokerConfig {
  rabbitmq?: { url: string; exchange: string };
  nats?: { url: string; stream: string; subjectPrefix: string; duplicateWindowMs: number };
  sqs?: { queueUrl: string; region: string; endpoint?: string };
  /** Events read and published together per device. */
  batch: number;
  /** How often every linked device is looked at without a publication. */
  sweepMs: number;
  /** After a failed publish (and the longest wait between reconnection attempts). */
  retryMs: number;
}

export function brokerConfig(e: Record<string, unknown>): BrokerConfig {
  const v = e as Record<string, string | number | undefined>;
  return {
    ...(v.EVENTS_RABBITMQ_URL
      ? { rabbitmq: { url: String(v.EVENTS_RABBITMQ_URL), exchange: String(v.EVENTS_RABBITMQ_EXCHANGE) } }
      : {}),
    ...(v.EVENTS_NATS_URL
      ? {
          nats: {
            url: String(v.EVENTS_NATS_URL),
            stream: String(v.EVENTS_NATS_STREAM),
            subjectPrefix: String(v.EVENTS_NATS_SUBJECT_PREFIX),
            duplicateWindowMs: Number(v.EVENTS_NATS_DUPLICATE_WINDOW_MS),
          },
        }
      : {}),
    ...(v.EVENTS_SQS_QUEUE_URL
      ? {
          sqs: {
            queueUrl: String(v.EVENTS_SQS_QUEUE_URL),
            region: String(v.EVENTS_SQS_REGION ?? sqsRegion(String(v.EVENTS_SQS_QUEUE_URL), e)),
            ...(v.EVENTS_SQS_ENDPOINT ? { endpoint: String(v.EVENTS_SQS_ENDPOINT) } : {}),
          },
        }
      : {}),
    batch: Number(v.EVENTS_BROKER_BATCH),
    sweepMs: Number(v.EVENTS_BROKER_SWEEP_MS),
    retryMs: Number(v.EVENTS_BROKER_RETRY_MS),
  };
}

/**
 * The region SQS requests are signed for when EVENTS_SQS_REGION is unset: the queue URL's
 * (`sqs.<region>.amazonaws.com`), else the SDK's own variables, else us-east-1 (what a local
 * server takes).
 */
function sqsRegion(queueUrl: string, e: Record<string, unknown>): string {
  const m = /^sqs\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(new URL(queueUrl).hostname);
  const fromEnv = e.AWS_REGION || e.AWS_DEFAULT_REGION;
  return m?.[1] ?? (typeof fromEnv === 'string' && fromEnv ? fromEnv : 'us-east-1');
}
