/**
 * An attachment of a send or a post — a URL, base64 or an uploaded media id — and the base64 check
 * that the attachment, the profile picture and the broadcasts' media share.
 */
import { Joi } from './text.js';
import { ATTACHMENT_TYPES, STRING_LIMITS, type AttachmentType } from './limits.js';
import { MEDIA_ID_PATTERN } from './media.js';

/** The base64 alphabet, then at most two `=`: one greedy character class, safe on any length. */
const BASE64_TEXT = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Standard base64, padding optional: what joi's `.base64({ paddingRequired: false })` accepts.
 * joi's rule tests one regex of repeated 4-character groups over the whole value, and on a
 * ~10 MB attachment that can overflow V8's regexp backtracking stack (seen in CI: a RangeError
 * from joi, answered 500, for a valid attachment of exactly 10 MB).
 */
export function isBase64(value: string): boolean {
  if (!BASE64_TEXT.test(value)) return false;
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  const rest = (value.length - padding) % 4;
  return padding === 0 ? rest !== 1 : padding === 1 ? rest === 3 : rest === 2;
}

/** How the schemas name the `isBase64` rule (its `custom` rule's description; see the OpenAPI document). */
export const BASE64_RULE = 'base64, padding optional';

/** An attachment of POST /send (and of a channel post): a URL, base64 or an uploaded media id. */
export const attachmentSchema = Joi.object({
  type: Joi.string()
    .valid(...ATTACHMENT_TYPES)
    .required(),
  // The length first: a multi-megabyte "URL" is refused before the URI rule reads it.
  url: Joi.string()
    .max(STRING_LIMITS.url)
    .uri({ scheme: ['http', 'https'] }),
  base64: Joi.string()
    .min(1)
    .custom(
      (value: string, helpers) => (isBase64(value) ? value : helpers.error('string.base64')),
      BASE64_RULE,
    ),
  // An object uploaded with POST /media (its id); a batch names it once instead of repeating base64.
  mediaId: Joi.string().pattern(MEDIA_ID_PATTERN).messages({
    'string.pattern.base': '"mediaId" must be a media id from POST /media',
  }),
  filename: Joi.string().max(STRING_LIMITS.filename).fileName(),
  caption: Joi.string().max(STRING_LIMITS.caption),
  // type/subtype with optional parameters, e.g. WhatsApp voice notes: "audio/ogg; codecs=opus"
  mimeType: Joi.string()
    .max(255)
    .pattern(/^[\w.+-]+\/[\w.+-]+(\s*;\s*[\w.+-]+=[\w.+-]+)*$/)
    .messages({
      'string.pattern.base': '"mimeType" must be a MIME type such as image/png or audio/ogg; codecs=opus',
    }),
})
  .xor('url', 'base64', 'mediaId')
  .messages({
    'object.missing': 'attachment must have either url, base64 or mediaId',
    'object.xor': 'attachment must have only one of url, base64 or mediaId',
  });

export interface SendAttachmentInput {
  type: AttachmentType;
  url?: string;
  base64?: string;
  mediaId?: string;
  filename?: string;
  caption?: string;
  mimeType?: string;
}
