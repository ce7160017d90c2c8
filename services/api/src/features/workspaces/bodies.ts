/**
 * What the workspace routes share, public and admin: their bodies' bounds and rules (the OpenAPI
 * document's too) and the answer of a quota reached.
 */
import { DEVICE_ID_PATTERN, ERRORS, Joi } from '@mgw/contracts';
import type { QuotaName } from '@mgw/store';
import { ApiError } from '../../http/api-error.js';
import { FIELD_ALLOWANCE, type BodySpec } from '../../http/route-table.js';

/** A token request is a name, a device id and a duration: 4 KB. */
export const tokenBody: BodySpec = {
  json: { limitBytes: 4 * 1024, tooLargeError: ERRORS.workspaceBodyTooLarge, maxValues: FIELD_ALLOWANCE },
};

/** A lifetime, `<n>s|m|h|d` (e.g. `30d`), as TokenStore's parseDuration reads it. */
export const expiresIn = () =>
  Joi.string()
    .pattern(/^[1-9]\d{0,9}[smhd]$/)
    .messages({
      'string.pattern.base': '"expiresIn" must be a positive number followed by s, m, h or d, e.g. 30d',
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

/**
 * 429 for a workspace quota reached: `details` is one problem naming the quota, its limit and when
 * it resets (`null` for the device quota: it frees when a device leaves or the operator raises it).
 */
export function quotaReached(quota: QuotaName, limit: number, resetsAt: string | null = null): ApiError {
  return new ApiError(429, ERRORS.workspaceQuota, [
    {
      path: ['quotas', quota],
      message: `The workspace's ${quota} quota (${limit}) is reached`,
      quota,
      limit,
      resetsAt,
    },
  ]);
}
