/** The probes and the document itself in the OpenAPI document: written by hand (no joi schema of ours). */
import type { Operations } from '../../http/route-table.js';
import { STATUS_TEXT } from '../../openapi/components.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, ref } from '../../openapi/schema-helpers.js';
import type { OpsName } from './mount.js';

/** A probe's answer. */
export const opsSchemas: Record<string, JsonSchema> = {
  Health: closed({ success: { const: true }, status: { enum: ['ok', 'ready'] } }, ['success', 'status']),
};

/** A probe (/healthz, /readyz): no token; 503 where it can say "not ready". */
export function health(description: string, notReady: boolean): JsonSchema {
  return {
    tags: ['Operations'],
    summary: description,
    security: [],
    responses: {
      200: { description: 'OK', content: { 'application/json': { schema: ref('Health') } } },
      ...(notReady
        ? {
            503: { description: STATUS_TEXT[503], content: { 'application/json': { schema: ref('Error') } } },
          }
        : {}),
    },
  };
}

/** /healthz and /readyz (from the root, no token) and the document (under the base, no token). */
export function opsOperations(): Operations<OpsName> {
  return {
    document: {
      tags: ['Operations'],
      summary: 'This document',
      security: [],
      responses: {
        200: {
          description: 'OpenAPI 3.1',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      },
    },
    healthz: health('Liveness: the process runs', false),
    readyz: health('Readiness: Redis answers and accepts writes', true),
  };
}
