import type Joi from 'joi';
import type { ApiConfig } from '../config.js';
import { STATUS_TEXT } from './components.js';
import { joiToJsonSchema, type JsonSchema } from './joi-schema.js';
import { ref } from './schema-helpers.js';
import type { OperationTag } from './tags.js';

/** Errors every authenticated endpoint may answer (403: a pool token where a device token is wanted). */
const COMMON_ERRORS = [400, 401, 403, 408, 429, 431, 500, 503];

export interface OperationSpec {
  tag: OperationTag;
  summary: string;
  description: string;
  /** The limit of this endpoint (RATE_LIMIT_*), or none. */
  rateLimit?: number;
  query?: Joi.ObjectSchema;
  body?: Joi.Schema;
  idempotent?: boolean;
  /** `csv`: the answer may also be CSV (`?format=csv`), described so. */
  success: { status: number; schema: string; description: string; csv?: string };
  /** A second success answer (e.g. POST /send `delete` of a queued message: 200). */
  alsoSuccess?: { status: number; schema: string; description: string };
  errors: number[];
}

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Query parameters from the joi query schema; `token` is the query-token security scheme instead. */
function queryParameters(schema: Joi.ObjectSchema): JsonSchema[] {
  const object = joiToJsonSchema(schema);
  const props = object.properties as Record<string, JsonSchema>;
  const required = new Set((object.required as string[] | undefined) ?? []);
  const conditional = object.if ? (object.then as { required: string[] }).required : [];
  const when = object.if ? (object.if as { properties: Record<string, { const: unknown }> }).properties : {};
  return Object.entries(props)
    .filter(([name]) => name !== 'token')
    .map(([name, schema]) => ({
      name,
      in: 'query',
      required: required.has(name),
      schema,
      ...(conditional.includes(name)
        ? {
            description: `Required when ${Object.entries(when)
              .map(([k, v]) => `\`${k}\` is \`${String(v.const)}\``)
              .join(' and ')}.`,
          }
        : {}),
    }));
}

/**
 * One operation of the document from its spec: its common and rate-limit headers, its errors
 * (the common ones and its own), its query parameters and body from the joi schemas the route
 * validates with.
 */
export function operation(spec: OperationSpec, config: ApiConfig): JsonSchema {
  const common: Record<string, unknown> = { 'X-Request-Id': headerRef('X-Request-Id') };
  const limited = spec.rateLimit
    ? {
        'X-RateLimit-Limit': headerRef('X-RateLimit-Limit'),
        'X-RateLimit-Remaining': headerRef('X-RateLimit-Remaining'),
        'X-RateLimit-Reset': headerRef('X-RateLimit-Reset'),
      }
    : {};
  const replay = spec.idempotent ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {};
  const responses: Record<string, unknown> = {
    [spec.success.status]: {
      description: spec.success.description,
      headers: { ...common, ...limited, ...replay },
      content: {
        'application/json': { schema: ref(spec.success.schema) },
        ...(spec.success.csv
          ? { 'text/csv': { schema: { type: 'string', description: spec.success.csv } } }
          : {}),
      },
    },
  };
  if (spec.alsoSuccess)
    responses[spec.alsoSuccess.status] = {
      description: spec.alsoSuccess.description,
      headers: { ...common, ...limited, ...replay },
      content: { 'application/json': { schema: ref(spec.alsoSuccess.schema) } },
    };
  for (const status of [...new Set([...COMMON_ERRORS, ...spec.errors])].sort()) {
    responses[status] = {
      description: STATUS_TEXT[status] ?? 'Error.',
      headers: { ...common, ...limited, ...(spec.idempotent && status !== 400 ? replay : {}) },
      content: { 'application/json': { schema: ref('Error') } },
    };
  }
  const window = `${Math.round(config.rateLimitWindowMs / 1000)} s`;
  const parameters = [
    ...(spec.query ? queryParameters(spec.query) : []),
    ...(spec.idempotent
      ? [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: 'Replays the first answer of the same request (24 h, per token).',
            schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
          },
        ]
      : []),
  ];
  return {
    tags: [spec.tag],
    summary: spec.summary,
    description:
      spec.description +
      (spec.rateLimit ? `\n\nRate limit: ${spec.rateLimit} requests per ${window} per token.` : ''),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: joiToJsonSchema(spec.body) } },
          },
        }
      : {}),
    responses,
  };
}

/** Names a path parameter of an operation (first among its parameters). */
export function withPathParam(op: JsonSchema, name: string): JsonSchema {
  const o = op as { parameters?: JsonSchema[] };
  o.parameters = [
    { name, in: 'path', required: true, schema: { type: 'string', minLength: 1 } },
    ...(o.parameters ?? []),
  ];
  return op;
}
