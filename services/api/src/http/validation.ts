import type Joi from 'joi';
import { ApiError } from './api-error.js';
import { validate, validateSendBody, type SendBody } from '@mgw/contracts';

/** The normalised value, or a 400 with the spec's `details`. */
export function parse<T>(schema: Joi.Schema<T>, value: unknown, maxItems?: Record<string, number>): T {
  const result = validate(schema, value, maxItems);
  if (result.details) throw ApiError.invalid(result.details);
  return result.value;
}

/** A POST /send body (fast for long lists, same verdicts and details; see `validateSendBody`). */
export function parseSendBody(
  schema: Joi.ObjectSchema<SendBody>,
  value: unknown,
  maxRecipients: number,
): SendBody {
  const result = validateSendBody(schema, value, maxRecipients);
  if (result.details) throw ApiError.invalid(result.details);
  return result.value;
}
