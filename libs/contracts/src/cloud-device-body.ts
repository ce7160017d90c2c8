/**
 * The request that makes a device a Cloud API number (docs/cloud-api.md): the body of
 * `PUT /api/messenger/v1/cloud` and of the admin `PUT /api/admin/v1/devices/:deviceId/cloud`.
 * Its three secrets are never echoed: a refusal names the field and the rule, never the value.
 */
import {
  CLOUD_LIMITS,
  GRAPH_ID_PATTERN,
  GRAPH_VERSION_PATTERN,
  MAX_CLOUD_THROUGHPUT_PER_SECOND,
  type CloudDeviceInput,
} from './cloud.js';
import { Joi } from './text.js';

/**
 * A secret as Meta gives it, and as it travels in a header (`Authorization: Bearer …`) or a query
 * (`hub.verify_token`): visible ASCII only — no space, no control character, nothing a header
 * could be split on.
 */
export const CLOUD_SECRET_PATTERN = /^[\x21-\x7e]+$/;

/** An authentication template's name as Meta allows them: lower-case letters, digits, `_`. */
export const CLOUD_TEMPLATE_NAME_PATTERN = /^[a-z0-9_]{1,512}$/;

const graphId = (what: string) =>
  Joi.string()
    .pattern(GRAPH_ID_PATTERN)
    .required()
    .messages({ 'string.pattern.base': `{{#label}} must be ${what}: 1 to 32 digits, as Meta writes it` });

/** A secret: bounded, printable; joi's default pattern message would repeat the value, so it is replaced. */
const secret = (max: number) =>
  Joi.string().min(1).max(max).pattern(CLOUD_SECRET_PATTERN).required().messages({
    'string.pattern.base':
      '{{#label}} must be visible ASCII characters only (no spaces, line breaks or control characters)',
  });

export const cloudDeviceBodySchema = Joi.object<CloudDeviceInput>({
  phoneNumberId: graphId('the phone-number id (not the phone number)'),
  wabaId: graphId('the WhatsApp Business Account id'),
  accessToken: secret(CLOUD_LIMITS.accessToken),
  appSecret: secret(CLOUD_LIMITS.appSecret),
  verifyToken: secret(CLOUD_LIMITS.verifyToken),
  throughputPerSecond: Joi.number().integer().min(1).max(MAX_CLOUD_THROUGHPUT_PER_SECOND),
  graphVersion: Joi.string()
    .pattern(GRAPH_VERSION_PATTERN)
    .messages({ 'string.pattern.base': '{{#label}} must be a Graph API version such as v21.0' }),
  otpTemplate: Joi.string().pattern(CLOUD_TEMPLATE_NAME_PATTERN).messages({
    'string.pattern.base':
      '{{#label}} must be a template name: 1 to 512 lower-case letters, digits or underscores',
  }),
});
