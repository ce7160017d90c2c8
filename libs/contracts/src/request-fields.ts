/**
 * Fields that several request schemas share. Not re-exported by the package: the schemas use them,
 * clients name the schemas.
 */
import { Joi } from './text.js';
import { PHONE_PATTERN } from './limits.js';

/** A phone number as `to` and the other bodies take it: international format, digits only. */
export const phone = Joi.string().pattern(PHONE_PATTERN).messages({
  'string.pattern.base': '{{#label}} must be a phone number in international format: digits only, 7 to 15',
});

/** `?token=` is the spec's alternative to the Bearer header, so every query may carry it. */
export const token = Joi.string();
