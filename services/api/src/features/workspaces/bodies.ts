/**
 * What the workspace routes share, public and admin: their bodies' and queries' bounds and rules
 * (the OpenAPI document's too), the answer of a quota reached and the answer of a usage.
 */
import type { Response } from 'express';
import { DEVICE_ID_PATTERN, ERRORS, Joi } from '@mgw/contracts';
import {
  TOKEN_LIFETIME_MAX_DAYS,
  TOKEN_LIFETIME_RULE,
  USAGE_MAX_DAYS,
  tokenLifetime,
  utcDay,
} from '@mgw/store';
import { ApiError } from '../../http/api-error.js';
import { parse } from '../../http/validation.js';
import { usageCsv, type UsageView } from './usage.js';
import { FIELD_ALLOWANCE, type BodySpec } from '../../http/route-table.js';

/** A token request is a name, a device id and a duration: 4 KB. */
export const tokenBody: BodySpec = {
  json: { limitBytes: 4 * 1024, tooLargeError: ERRORS.workspaceBodyTooLarge, maxValues: FIELD_ALLOWANCE },
};

/**
 * A token's lifetime, `<n>s|m|h|d` (e.g. `30d`), as TokenStore's parseDuration reads it, of at most
 * TOKEN_LIFETIME_MAX_DAYS (tokenLifetime): every route that mints a token takes this rule.
 */
export const expiresIn = () =>
  Joi.string()
    .pattern(/^[1-9]\d{0,9}[smhd]$/)
    // The shape is the pattern's to refuse; this rule refuses what is too long only.
    .custom(
      (v: string, helpers) => (tokenLifetime(v) === 'too_long' ? helpers.error('expiresIn.max') : v),
      TOKEN_LIFETIME_RULE,
    )
    .messages({
      'string.pattern.base': '"expiresIn" must be a positive number followed by s, m, h or d, e.g. 30d',
      'expiresIn.max': `"expiresIn" must be at most ${TOKEN_LIFETIME_MAX_DAYS}d (10 years); without it the token never expires`,
    });

/** The rules of a token a workspace token creates: a name, one of its devices or none, a lifetime. */
export const workspaceTokenSchema = Joi.object<{ name: string; deviceId?: string; expiresIn?: string }>({
  name: Joi.string().trim().min(1).max(100).displayName().required(),
  deviceId: Joi.string().pattern(DEVICE_ID_PATTERN).messages({
    'string.pattern.base':
      '"deviceId" must be a device id: 1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit',
  }),
  expiresIn: expiresIn(),
});

/** 429 for a workspace quota reached (http/refusal-error.ts builds it for every route). */
export { workspaceQuotaError as quotaReached } from '../../http/refusal-error.js';

/** A UTC day, YYYY-MM-DD (a calendar day: usageRange refuses 2026-02-30). */
const day = Joi.string()
  .pattern(/^\d{4}-\d{2}-\d{2}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be a UTC day, YYYY-MM-DD' });

export const usageQuerySchema = Joi.object<{ from?: string; to?: string; format?: 'json' | 'csv' }>({
  from: day,
  to: day,
  format: Joi.string().valid('json', 'csv'),
});

/** The days a query asks for: `to` (default today, UTC) and `from` (default 29 days before it). */
export function usageRange(query: unknown, now = Date.now()): { from: string; to: string; csv: boolean } {
  const q = parse(usageQuerySchema, query);
  for (const name of ['from', 'to'] as const) {
    const v = q[name];
    const at = v === undefined ? 0 : Date.parse(`${v}T00:00:00Z`);
    if (v !== undefined && (Number.isNaN(at) || !new Date(at).toISOString().startsWith(v)))
      throw ApiError.invalid([{ path: [name], message: `"${name}" is no calendar day` }]);
  }
  const to = q.to ?? utcDay(now).day;
  const from = q.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
  if (from > to) throw ApiError.invalid([{ path: ['from'], message: '"from" must not be after "to"' }]);
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
  if (days > USAGE_MAX_DAYS)
    throw ApiError.invalid([
      {
        path: ['from'],
        message: `at most ${USAGE_MAX_DAYS} days at once (usage is kept ${USAGE_MAX_DAYS} days)`,
      },
    ]);
  return { from, to, csv: q.format === 'csv' };
}

/** Answers a usage as JSON (`key` holds it: `data` on the public API, `usage` on the admin's) or CSV. */
export function sendUsage(res: Response, view: UsageView, csv: boolean, key: 'data' | 'usage'): void {
  if (!csv) {
    res.status(200).json({ success: true, [key]: view });
    return;
  }
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader(
    'Content-Disposition',
    `attachment; filename="usage-${view.workspaceId}-${view.from}-${view.to}.csv"`,
  );
  res.status(200).type('text/csv; charset=utf-8').send(usageCsv(view));
}
