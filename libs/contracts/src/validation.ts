/**
 * Validating a request: cheap structural checks first, then its joi schema, with joi's problems
 * reported in the spec's `details` shape.
 */
import type { Schema, ValidationError } from 'joi';
import { hasLoneSurrogate } from './text.js';

/** One entry of the spec's validation `details`. */
export interface ValidationDetail {
  path: (string | number)[];
  message: string;
}

/** Joi's error details in the spec's shape. The "either text or attachment" rule names both fields. */
export function toValidationDetails(error: ValidationError): ValidationDetail[] {
  return error.details.map((d) => {
    const peers = d.type === 'object.missing' ? (d.context?.peers as string[] | undefined) : undefined;
    // The send body's content rule keeps the spec's path whatever other content fields it lists.
    const sendContent = peers?.includes('text') ? ['text', 'attachment'] : peers;
    // A field that must not come with another (`.without`) is named, not the whole body.
    const main = d.type === 'object.without' ? (d.context?.main as string | undefined) : undefined;
    const path = sendContent && d.path.length === 0 ? sendContent : main ? [...d.path, main] : d.path;
    return { path, message: d.message.replace(/"/g, '') };
  });
}

/** More fields than any request of this API has: refused before Joi walks them one by one. */
const MAX_FIELDS = 32;
/** At most this many `details` entries are returned (the first problems are the useful ones). */
const MAX_DETAILS = 50;

/** A JSON object (not null, not an array); send-body.ts's cheap checks use it too. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isPrototypeKey = (key: string) => key === '__proto__';

/** The detail of a top-level list (`to`) longer than its limit; also used by the API's body reader. */
export function listTooLong(key: string, max: number): ValidationDetail {
  return { path: [key], message: `${key} may list at most ${max} phone numbers` };
}

/**
 * Cheap structural checks before Joi: a body of hundreds of thousands of unknown fields, or a
 * `to` list far over the limit, would otherwise be validated item by item (seconds of CPU,
 * hundreds of MB, a stack overflow) before being refused. `__proto__` is refused at any depth:
 * JSON.parse makes it an own field, and Joi would silently drop it from a nested object instead
 * of reporting it, while a careless copy elsewhere could turn it into a prototype.
 */
function structuralProblem(value: unknown, maxItems: Record<string, number>): ValidationDetail | undefined {
  if (!isPlainObject(value)) return undefined;
  for (const [key, max] of Object.entries(maxItems)) {
    const v = value[key];
    if (Array.isArray(v) && v.length > max) return listTooLong(key, max);
  }
  // Breadth-first over objects and arrays; bodies are shallow (the body reader caps their depth).
  const queue: { node: unknown; path: (string | number)[] }[] = [{ node: value, path: [] }];
  for (let i = 0; i < queue.length; i++) {
    const { node, path } = queue[i]!;
    if (Array.isArray(node)) {
      node.forEach((item, index) => {
        if (typeof item === 'object' && item !== null) queue.push({ node: item, path: [...path, index] });
      });
      continue;
    }
    if (!isPlainObject(node)) continue;
    const fields = Object.keys(node);
    if (fields.length > MAX_FIELDS) {
      return { path: [], message: `an object in the request has more than ${MAX_FIELDS} fields` };
    }
    for (const key of fields) {
      const at = [...path, key];
      if (isPrototypeKey(key)) return { path: at, message: `${at.join('.')} is not allowed` };
      // Not named: joi's details would repeat the key, and the answer would carry the surrogate.
      if (hasLoneSurrogate(key)) return { path, message: 'a field name must be valid Unicode text' };
      const v = node[key];
      if (typeof v === 'object' && v !== null) queue.push({ node: v, path: at });
    }
  }
  return undefined;
}

/**
 * Validates `value`; returns the normalised value or the spec's details.
 * `maxItems` names top-level arrays whose length is checked before anything else.
 */
export function validate<T>(
  schema: Schema<T>,
  value: unknown,
  maxItems: Record<string, number> = {},
): { value: T; details?: undefined } | { value?: undefined; details: ValidationDetail[] } {
  const problem = structuralProblem(value, maxItems);
  if (problem) return { details: [problem] };
  const result = schema.validate(value, { abortEarly: false, convert: true, stripUnknown: false });
  if (result.error) return { details: toValidationDetails(result.error).slice(0, MAX_DETAILS) };
  return { value: result.value as T };
}
