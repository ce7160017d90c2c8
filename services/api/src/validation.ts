import type { RequestHandler } from 'express';
import type Joi from 'joi';
import { ApiError } from './api-error.js';
import { ERRORS, validate } from '@mgw/contracts';

/** The normalised value, or a 400 with the spec's `details`. */
export function parse<T>(schema: Joi.Schema<T>, value: unknown, maxItems?: Record<string, number>): T {
  const result = validate(schema, value, maxItems);
  if (result.details) throw ApiError.invalid(result.details);
  return result.value;
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * A POST that carries a body must say it is JSON: a body the JSON parser skipped would otherwise
 * look like an empty request. Refused as 400 (the spec's table has no 415).
 */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  if (hasBody(req.headers) && !req.is('application/json')) {
    return next(ApiError.invalid([{ path: [], message: ERRORS.unsupportedMediaType }]));
  }
  next();
};
