import type { CustomHelpers } from 'joi';
import { Joi } from './text.js';
import { STRING_LIMITS, type OtpLanguage } from './limits.js';
import { token } from './request-fields.js';
import type { TemplateInput } from './cloud.js';

/**
 * Template messages (`/send` with `template`, cloud devices only; docs/cloud-api.md): the body
 * field's schema in the Graph API's own shape, checked here for what Meta would refuse and we can
 * see offline, and the errors the API answers when a template cannot be sent. The template object:
 * https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#template-object ,
 * its parameters: …/messages#parameter-object .
 */

/** Bounds of a template's fields: Meta's where it states them, else generous but finite. */
export const TEMPLATE_LIMITS = {
  /** Meta: names are lower-case letters, digits and `_`, at most 512 characters. */
  name: 512,
  components: 10,
  parametersPerComponent: 20,
  /** A text parameter (Meta bounds the whole body at 1,024 characters). */
  text: 1024,
  /** A header's text parameter: Meta's 60 characters. */
  headerText: 60,
  /** A copy-code button's coupon code: Meta's 15 characters. */
  couponCode: 15,
  /** A quick-reply button's payload (returned in the contact's reply). */
  payload: 256,
  fallbackValue: 256,
  /** A media parameter's file name (documents). */
  filename: 240,
  /** A media id of the Graph API (`POST /{phone-number-id}/media`). */
  mediaId: 64,
  /** Buttons are indexed 0 to 9. */
  maxButtonIndex: 9,
} as const;

/** Meta's template names: lower-case letters, digits and `_`. */
export const TEMPLATE_NAME_PATTERN = /^[a-z0-9_]{1,512}$/;
/** Meta's template languages: `en`, `en_US`, `ar`, `pt_BR`, `fil`. */
export const TEMPLATE_LANGUAGE_PATTERN = /^[a-z]{2,3}(_[A-Z]{2})?$/;
/** A named parameter (`{{first_name}}`): Meta's rule for parameter names. */
const PARAMETER_NAME_PATTERN = /^[a-z0-9_]{1,512}$/;

export const TEMPLATE_COMPONENT_TYPES = ['header', 'body', 'button', 'footer'] as const;
export const TEMPLATE_BUTTON_SUB_TYPES = ['quick_reply', 'url', 'copy_code'] as const;
export const TEMPLATE_PARAMETER_TYPES = [
  'text',
  'currency',
  'date_time',
  'image',
  'document',
  'video',
  'payload',
  'coupon_code',
] as const;

/** Which parameter types each component (a button: each sub_type) takes (Meta's reference). */
const PARAMETERS_OF: Record<string, readonly string[]> = {
  header: ['text', 'image', 'document', 'video'],
  body: ['text', 'currency', 'date_time'],
  footer: [],
  quick_reply: ['payload'],
  url: ['text'],
  copy_code: ['coupon_code'],
};

/** What the API answers when a template cannot be sent (`error` of its 4xx answers). */
export const TEMPLATE_ERRORS = {
  /** 422: `template` on a linked device: templates are the Cloud API's. */
  linkedDevice:
    'Templates are sent by Cloud API devices only: configure this device as a Cloud API number (PUT /api/messenger/v1/cloud) or send text',
  /** 422: no template of that name in that language in the number's WABA (`details` names them). */
  notFound: 'Template not found',
  /** 422: the template exists but is paused (low quality) or not approved (`details` says which). */
  notApproved: 'Template not approved',
  /** 422: a free-form message to a contact whose 24-hour window is closed (cloud devices). */
  windowClosed: "The contact's 24-hour window is closed: send an approved template (`template` in /send)",
  /** 502: the Graph API did not answer the template list (the template could not be checked). */
  catalogUnavailable: "The number's templates could not be read from the Graph API; try again shortly",
} as const;

/**
 * Text Meta refuses in a parameter (error 132018): a line break, a tab, more than 4 spaces in a
 * row; and no control character is text anyone reads.
 */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const CONTROL = /[\x00-\x1F\x7F-\x9F]/;
const SPACES = / {5,}/;

const paramText = (max: number) =>
  Joi.string()
    .min(1)
    .max(max)
    .custom((value: string, helpers: CustomHelpers) => {
      if (CONTROL.test(value))
        return helpers.message({
          custom: '{{#label}} must not contain line breaks, tabs or other control characters',
        });
      if (SPACES.test(value))
        return helpers.message({ custom: '{{#label}} must not contain more than 4 spaces in a row' });
      return value;
    }, 'no line breaks, tabs, control characters or more than 4 spaces in a row (Meta error 132018)');

const media = Joi.object({
  id: Joi.string()
    .max(TEMPLATE_LIMITS.mediaId)
    .pattern(/^[0-9]+$/),
  link: Joi.string()
    .max(STRING_LIMITS.url)
    .uri({ scheme: ['https', 'http'] }),
  // fileName() sets joi's max at the byte limit (255): the template's own, lower, comes after it.
  filename: Joi.string().min(1).fileName().max(TEMPLATE_LIMITS.filename),
})
  .xor('id', 'link')
  .messages({
    'object.missing': '{{#label}} must have either id or link',
    'object.xor': '{{#label}} must have only one of id or link',
  });

/** The fields that hold a parameter's value: exactly the one its `type` names is given. */
const VALUE_FIELDS = TEMPLATE_PARAMETER_TYPES;

function parameterValue(value: TemplateParameter, helpers: CustomHelpers): unknown {
  const given = VALUE_FIELDS.filter((f) => value[f] !== undefined);
  if (given.length === 1 && given[0] === value.type) return value;
  return helpers.message({
    custom: `{{#label}} is of type ${value.type}: it must hold ${value.type} and no other value (${given.join(', ') || 'none'} given)`,
  });
}

const parameter = Joi.object({
  type: Joi.string()
    .valid(...TEMPLATE_PARAMETER_TYPES)
    .required(),
  /** A named parameter (`{{first_name}}` in the template's text). */
  parameter_name: Joi.string().pattern(PARAMETER_NAME_PATTERN),
  text: paramText(TEMPLATE_LIMITS.text),
  currency: Joi.object({
    fallback_value: paramText(TEMPLATE_LIMITS.fallbackValue).required(),
    code: Joi.string()
      .pattern(/^[A-Z]{3}$/)
      .required()
      .messages({ 'string.pattern.base': '{{#label}} must be an ISO 4217 currency code (USD, EUR)' }),
    amount_1000: Joi.number().integer().min(-1e15).max(1e15).required(),
  }),
  date_time: Joi.object({ fallback_value: paramText(TEMPLATE_LIMITS.fallbackValue).required() }),
  image: media,
  document: media,
  video: media,
  payload: paramText(TEMPLATE_LIMITS.payload),
  coupon_code: paramText(TEMPLATE_LIMITS.couponCode),
}).custom(parameterValue, 'the one value field its type names (text, currency, image…), and no other');

/** One component's own rules beyond its fields: what a button needs, which parameters fit where. */
function componentRules(value: TemplateComponent, helpers: CustomHelpers): unknown {
  if (value.type === 'button') {
    if (value.sub_type === undefined || value.index === undefined)
      return helpers.message({ custom: '{{#label}} is a button: it needs sub_type and index' });
  } else if (value.sub_type !== undefined || value.index !== undefined) {
    return helpers.message({ custom: '{{#label}} takes sub_type and index only for a button' });
  }
  if (value.type === 'header' && value.parameters.length > 1)
    return helpers.message({ custom: '{{#label}} is a header: it takes at most one parameter' });
  const allowed = PARAMETERS_OF[value.type === 'button' ? value.sub_type! : value.type]!;
  const wrong = value.parameters.find((p) => !allowed.includes(p.type));
  if (wrong)
    return helpers.message({
      custom: `{{#label}} cannot take a ${wrong.type} parameter (${value.type === 'button' ? `a ${value.sub_type} button` : `a ${value.type}`} takes ${allowed.join(', ') || 'none'})`,
    });
  const header = value.type === 'header' ? value.parameters[0] : undefined;
  if (header?.type === 'text' && [...header.text!].length > TEMPLATE_LIMITS.headerText)
    return helpers.message({
      custom: `{{#label}} is a header: its text may be at most ${TEMPLATE_LIMITS.headerText} characters`,
    });
  return value;
}

/** One component of a template message, as the Graph API takes it. */
export type TemplateComponent = {
  type: (typeof TEMPLATE_COMPONENT_TYPES)[number];
  sub_type?: (typeof TEMPLATE_BUTTON_SUB_TYPES)[number];
  index?: number;
  parameters: TemplateParameter[];
};

/** One parameter of a component (`type` names the one field beside it that holds its value). */
export type TemplateParameter = {
  type: (typeof TEMPLATE_PARAMETER_TYPES)[number];
  parameter_name?: string;
  text?: string;
  payload?: string;
  coupon_code?: string;
  currency?: { fallback_value: string; code: string; amount_1000: number };
  date_time?: { fallback_value: string };
  image?: { id?: string; link?: string };
  document?: { id?: string; link?: string; filename?: string };
  video?: { id?: string; link?: string };
};

const component = Joi.object({
  type: Joi.string()
    .valid(...TEMPLATE_COMPONENT_TYPES)
    .required(),
  sub_type: Joi.string().valid(...TEMPLATE_BUTTON_SUB_TYPES),
  index: Joi.number().integer().min(0).max(TEMPLATE_LIMITS.maxButtonIndex),
  parameters: Joi.array().items(parameter).max(TEMPLATE_LIMITS.parametersPerComponent).required(),
}).custom(componentRules, 'a button needs sub_type and index; each component takes its own parameter types');

/** Components of one message: one header, one body, one footer at most, and each button index once. */
function componentSet(value: TemplateComponent[], helpers: CustomHelpers): unknown {
  const seen = new Set<string>();
  for (const c of value) {
    const key = c.type === 'button' ? `button ${c.index}` : c.type;
    if (seen.has(key))
      return helpers.message({
        custom:
          c.type === 'button'
            ? `{{#label}} has two buttons of index ${c.index}`
            : `{{#label}} has two ${c.type} components`,
      });
    seen.add(key);
  }
  return value;
}

/** `template` of POST /send. */
export const templateSchema = Joi.object<TemplateInput>({
  name: Joi.string().pattern(TEMPLATE_NAME_PATTERN).required().messages({
    'string.pattern.base': '{{#label}} must be a template name: 1 to 512 lower-case letters, digits and _',
  }),
  language: Joi.string()
    .pattern(TEMPLATE_LANGUAGE_PATTERN)
    .required()
    .messages({ 'string.pattern.base': '{{#label}} must be a template language code such as en_US or ar' }),
  components: Joi.array()
    .items(component)
    .max(TEMPLATE_LIMITS.components)
    .custom(componentSet, 'one header, one body and one footer at most; each button index once'),
}).description(
  "An approved template of the number's WhatsApp Business Account (Cloud API devices only), with its components' parameters in the Graph API's shape.",
);

/** A template's status as Meta writes it (`APPROVED`, `PAUSED`, `IN_APPEAL`…): one upper-case word. */
export const TEMPLATE_STATUS_PATTERN = /^[A-Z_]{1,32}$/;

export interface CloudTemplatesQuery {
  token?: string;
  name?: string;
  language?: string;
  /** Upper-cased (TEMPLATE_STATUS_PATTERN). */
  status?: string;
  refresh: boolean;
}

/**
 * GET /cloud/templates query: the templates of one name, one language, one status (each exactly;
 * a status in any letter case), and `refresh` to read the list from the Graph API again.
 */
export const cloudTemplatesQuerySchema = Joi.object<CloudTemplatesQuery>({
  token,
  name: Joi.string().pattern(TEMPLATE_NAME_PATTERN).messages({
    'string.pattern.base': '{{#label}} must be a template name: 1 to 512 lower-case letters, digits and _',
  }),
  language: Joi.string()
    .max(16)
    .pattern(TEMPLATE_LANGUAGE_PATTERN)
    .messages({ 'string.pattern.base': '{{#label}} must be a template language code such as en_US or ar' }),
  status: Joi.string()
    .uppercase()
    .pattern(TEMPLATE_STATUS_PATTERN)
    .messages({ 'string.pattern.base': '{{#label}} must be a template status such as APPROVED or PAUSED' }),
  refresh: Joi.boolean().default(false),
});

/** The Cloud API's language codes of an OTP's language, in the order they are looked for. */
export const CLOUD_OTP_LANGUAGES: Record<OtpLanguage, readonly string[]> = {
  English: ['en_US', 'en'],
  Arabic: ['ar'],
};

/**
 * An authentication template's components for a code: the body's one parameter, and the
 * copy-code button's (Meta sends it as a `url` button of index 0 whose parameter is the code).
 * https://developers.facebook.com/docs/whatsapp/business-management-api/authentication-templates/copy-code-button-authentication-templates
 */
export function otpTemplateComponents(code: string): TemplateComponent[] {
  return [
    { type: 'body', parameters: [{ type: 'text', text: code }] },
    { type: 'button', sub_type: 'url', index: 0, parameters: [{ type: 'text', text: code }] },
  ];
}
