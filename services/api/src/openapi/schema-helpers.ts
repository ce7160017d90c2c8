/** The small JSON Schema builders every area file of the OpenAPI document uses. */
import { MESSAGE_ID_PATTERN } from '@mgw/contracts';
import type { JsonSchema } from './joi-schema.js';

/** An object with exactly these properties (no others), the `required` ones always present. */
export const closed = (properties: Record<string, JsonSchema>, required: string[]): JsonSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

/** A string, described. */
export const str = (description: string): JsonSchema => ({ type: 'string', description });

/** An ISO 8601 date-time string, described. */
export const timestamp = (description: string): JsonSchema => ({
  type: 'string',
  format: 'date-time',
  description,
});

/** A count: an integer of 0 or more, described. */
export const int = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });

/** A message id the gateway gave (a status, a post, a batch of one), described. */
export const messageIdString = (description: string): JsonSchema => ({
  type: 'string',
  pattern: MESSAGE_ID_PATTERN.source,
  description,
});

/** A reference to a component schema. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A success answer: `{ success: true, data }`. */
export const result = (data: JsonSchema) => closed({ success: { const: true }, data }, ['success', 'data']);
