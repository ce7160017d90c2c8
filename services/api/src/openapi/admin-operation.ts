/**
 * The operations of the admin API's document (document.ts: buildAdminOpenApi): an operation of its
 * own from its spec (`adminOperation`), or one derived from a public operation (`mirrored`) for an
 * admin route that serves the public handler for the device its path names.
 */
import type JoiTypes from 'joi';
import { Joi } from '@mgw/contracts';
import { ADMIN_ERRORS } from '../http/admin-errors.js';
import { STATUS_TEXT } from './components.js';
import { joiToJsonSchema, type JsonSchema } from './joi-schema.js';
import { ref } from './schema-helpers.js';
import { OPENAPI_TAGS } from './tags.js';

/** The admin document's tags: the public areas its device routes mirror, then the admin's own. */
export const ADMIN_OPENAPI_TAGS = [
  ...OPENAPI_TAGS.filter((t) => !['MCP', 'Operations', 'Workspace'].includes(t.name)),
  {
    name: 'Session',
    description: 'Sign in (the operator, or a workspace console user), who is signed in, sign out.',
  },
  { name: 'Devices', description: 'Every device: list, one, link, log out; its recent messages.' },
  { name: 'Pools', description: 'Named sets of devices one list is spread over (docs/pools.md).' },
  {
    name: 'Tokens',
    description: 'API tokens (created, listed, revoked) and admin tokens (listed, revoked).',
  },
  {
    name: 'Workspaces',
    description: 'Workspaces (docs/workspaces.md): their quotas, devices, usage and tokens; console users.',
  },
  {
    name: 'Sending',
    description: "A device's sending policy, its hourly activity, its opt-outs and its proxy.",
  },
  { name: 'Console', description: 'What the console shows about the install (the sandbox).' },
] as const;

export type AdminOperationTag = (typeof ADMIN_OPENAPI_TAGS)[number]['name'];

/** Errors any admin route may answer: the guard's (401, 403 CSRF or role, 429), a console's 404. */
const COMMON_ADMIN_ERRORS = [400, 401, 403, 404, 408, 429, 431, 500, 503];

/** What an error status means on the admin API (the public text otherwise). */
export const ADMIN_STATUS_TEXT: Record<number, string> = {
  401: `\`${ADMIN_ERRORS.unauthenticated}\`: no session cookie or admin token, or one that is no longer valid.`,
  403: `\`${ADMIN_ERRORS.csrf}\` (a change without the session's \`X-CSRF-Token\`), \`${ADMIN_ERRORS.roleCannot}\` (an agent on a workspace admin's route), or the workspace is suspended.`,
  404: "Not found; also a path naming a device, pool or workspace of another workspace than a console session's, and a route a console session may not call.",
  429: `\`${ADMIN_ERRORS.tooManySignIns}\` (\`resetIn\` says when to retry), or a limit of the route.`,
};

export interface AdminOperationSpec {
  tag: AdminOperationTag;
  summary: string;
  description: string;
  query?: JoiTypes.ObjectSchema;
  /** The body: the joi schema the route validates with, or its JSON Schema where joi's has no translation. */
  body?: JoiTypes.Schema | JsonSchema;
  /**
   * The answer: a component's name or a schema. `stream`: a text/event-stream (no JSON schema).
   */
  success:
    { status: number; schema: string | JsonSchema; description: string; csv?: string } | { stream: string };
  errors: number[];
}

const requestId = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };

const errorResponse = (status: number) => ({
  description: ADMIN_STATUS_TEXT[status] ?? STATUS_TEXT[status] ?? 'Error.',
  headers: requestId,
  content: { 'application/json': { schema: ref('Error') } },
});

/** Query parameters from a joi object schema. */
function queryParameters(schema: JoiTypes.ObjectSchema): JsonSchema[] {
  const object = joiToJsonSchema(schema);
  const required = new Set((object.required as string[] | undefined) ?? []);
  return Object.entries(object.properties as Record<string, JsonSchema>).map(([name, s]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: s,
  }));
}

/** An admin operation of its own: its answer, its errors, its query and body from the joi schemas. */
export function adminOperation(spec: AdminOperationSpec): JsonSchema {
  const success =
    'stream' in spec.success
      ? {
          200: {
            description: spec.success.stream,
            headers: requestId,
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
        }
      : {
          [spec.success.status]: {
            description: spec.success.description,
            headers: requestId,
            content: {
              'application/json': {
                schema:
                  typeof spec.success.schema === 'string' ? ref(spec.success.schema) : spec.success.schema,
              },
              ...(spec.success.csv
                ? { 'text/csv': { schema: { type: 'string', description: spec.success.csv } } }
                : {}),
            },
          },
        };
  const errors = [...new Set([...COMMON_ADMIN_ERRORS, ...spec.errors, ...(spec.body ? [413] : [])])].sort();
  return {
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    ...(spec.query ? { parameters: queryParameters(spec.query) } : {}),
    ...(spec.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: Joi.isSchema(spec.body) ? joiToJsonSchema(spec.body) : spec.body,
              },
            },
          },
        }
      : {}),
    responses: { ...success, ...Object.fromEntries(errors.map((s) => [s, errorResponse(s)])) },
  };
}

const RATE_LIMIT_HEADER = /^X-RateLimit-/;
const RATE_LIMIT_SENTENCE = /\n\nRate limit: [^\n]*$/;

/**
 * The admin operation of a route that serves a public handler for the device its path names: the
 * public operation's request (query, body, its own path parameters) and answers, without what the
 * admin API does not have (a per-token rate limit), with the admin guard's errors. The path's
 * `deviceId` is added by the document (as every path parameter the operation does not name).
 */
export function mirrored(publicOperation: JsonSchema): JsonSchema {
  const op = structuredClone(publicOperation) as {
    description?: string;
    responses: Record<string, { headers?: Record<string, unknown> }>;
  };
  if (op.description) op.description = op.description.replace(RATE_LIMIT_SENTENCE, '');
  for (const response of Object.values(op.responses)) {
    for (const name of Object.keys(response.headers ?? {}))
      if (RATE_LIMIT_HEADER.test(name)) delete response.headers![name];
  }
  for (const status of COMMON_ADMIN_ERRORS) op.responses[status] = errorResponse(status);
  return op as JsonSchema;
}

/**
 * The operation with a parameter for each of the path's (`/devices/{deviceId}/groups/{id}`) it
 * does not name yet, in the path's order, before its own.
 */
export function withPathParams(operation: JsonSchema, path: string): JsonSchema {
  const op = structuredClone(operation) as { parameters?: { name: string; in: string }[] };
  const named = new Set((op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name));
  const missing = [...path.matchAll(/\{(\w+)\}/g)]
    .map((m) => m[1]!)
    .filter((name) => !named.has(name))
    .map((name) => ({ name, in: 'path', required: true, schema: { type: 'string', minLength: 1 } }));
  if (missing.length > 0) op.parameters = [...missing, ...(op.parameters ?? [])];
  return op as JsonSchema;
}

/** The public handler an admin handler mirrors by its name (`adminReadChat` -> `readChat`). */
export function mirroredName(handler: string): string | undefined {
  const m = /^admin([A-Z].*)$/.exec(handler);
  return m ? m[1]![0]!.toLowerCase() + m[1]!.slice(1) : undefined;
}
