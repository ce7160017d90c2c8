import type Joi from 'joi';
import { ApiError } from './api-error.js';
import { validate } from '@mgw/contracts';

/** The normalised value, or a 400 with the spec's `details`. */
export function parse<T>(schema: Joi.Schema<T>, value: unknown, maxItems?: Record<string, number>): T {
  const result = validate(schema, value, maxItems);
  if (result.details) throw ApiError.invalid(result.details);
  return result.value;
}
