/**
 * Validation of `POST /{version}/{phone-number-id}/messages` bodies, as the messages reference
 * describes them: https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 * (text up to 4096 characters, captions up to 1024, media by `id` or `link`, reaction, location,
 * contacts, template with `name`, `language.code` and `components`, `context.message_id`).
 * A missing or wrong field throws error 100 whose details name it.
 */
import { errors } from './errors.js';

export const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];
export const MESSAGE_TYPES = [
  'text',
  ...MEDIA_TYPES,
  'reaction',
  'location',
  'contacts',
  'template',
] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export const TEXT_MAX = 4096;
export const CAPTION_MAX = 1024;
/** `biz_opaque_callback_data`: at most 512 characters (the messages reference). */
export const CALLBACK_DATA_MAX = 512;

export interface MediaObject {
  id?: string;
  link?: string;
  caption?: string;
  filename?: string;
}
export interface TemplateObject {
  name: string;
  language: { code: string; policy?: string };
  components: unknown[];
}

/** A send request that passed validation (the raw object kept, plus what the limits need). */
export interface SendRequest {
  to: string;
  /** `to` as a WhatsApp id: its digits. */
  waId: string;
  type: MessageType;
  replyTo?: string;
  /** `biz_opaque_callback_data`: echoed in every status webhook of the message. */
  callbackData?: string;
  text?: { body: string; preview_url: boolean };
  media?: MediaObject;
  template?: TemplateObject;
  raw: Record<string, unknown>;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const required = (path: string) => errors.invalidParameter(`The parameter ${path} is required.`);
const wrongType = (path: string, expected: string) =>
  errors.invalidParameter(`The parameter ${path} must be ${expected}.`);

function str(
  obj: Obj,
  key: string,
  path: string,
  opts: { required?: boolean; max?: number } = {},
): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) {
    if (opts.required) throw required(path);
    return undefined;
  }
  if (typeof value !== 'string') throw wrongType(path, 'a string');
  if (opts.required && value.trim() === '') throw required(path);
  if (opts.max !== undefined && [...value].length > opts.max)
    throw errors.invalidParameter(`The parameter ${path} is too long: at most ${opts.max} characters.`);
  return value;
}

function obj(parent: Obj, key: string, path: string): Obj {
  const value = parent[key];
  if (value === undefined || value === null) throw required(path);
  if (!isObject(value)) throw wrongType(path, 'an object');
  return value;
}

/** Lone UTF-16 surrogates cannot be encoded as UTF-8, so WhatsApp cannot carry them. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
function noLoneSurrogates(value: unknown, path: string): void {
  if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value))
      throw errors.invalidParameter(`The parameter ${path} is not valid Unicode.`);
  } else if (Array.isArray(value)) value.forEach((v, i) => noLoneSurrogates(v, `${path}[${i}]`));
  else if (isObject(value))
    for (const [k, v] of Object.entries(value)) noLoneSurrogates(v, `${path}['${k}']`);
}

/** A phone number as WhatsApp reads it: digits, optionally led by `+` and spaced or dashed. */
export function toWaId(to: string): string | undefined {
  if (!/^\+?[\d\s().-]+$/.test(to)) return undefined;
  const digits = to.replace(/\D/g, '');
  return digits.length >= 7 && digits.length <= 15 ? digits : undefined;
}

function validateMedia(body: Obj, type: MediaType): MediaObject {
  const media = obj(body, type, type);
  const id = str(media, 'id', `${type}['id']`);
  const link = str(media, 'link', `${type}['link']`);
  if ((id === undefined) === (link === undefined))
    throw errors.invalidParameter(`The parameter ${type} must have exactly one of 'id' or 'link'.`);
  if (link !== undefined) {
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      throw errors.invalidParameter(`The parameter ${type}['link'] is not a valid URL.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw errors.invalidParameter(`The parameter ${type}['link'] must be an http or https URL.`);
  }
  const captionAllowed = type === 'image' || type === 'video' || type === 'document';
  if (!captionAllowed && media.caption !== undefined)
    throw errors.invalidParameter(`The parameter ${type}['caption'] is not allowed for ${type}.`);
  const caption = str(media, 'caption', `${type}['caption']`, { max: CAPTION_MAX });
  if (type !== 'document' && media.filename !== undefined)
    throw errors.invalidParameter(`The parameter ${type}['filename'] is only allowed for documents.`);
  const filename = str(media, 'filename', `${type}['filename']`, { max: 240 });
  return {
    ...(id === undefined ? {} : { id }),
    ...(link === undefined ? {} : { link }),
    ...(caption === undefined ? {} : { caption }),
    ...(filename === undefined ? {} : { filename }),
  };
}

function validateTemplate(body: Obj): TemplateObject {
  const template = obj(body, 'template', 'template');
  const name = str(template, 'name', "template['name']", { required: true, max: 512 })!;
  const language = obj(template, 'language', "template['language']");
  const code = str(language, 'code', "template['language']['code']", { required: true, max: 15 })!;
  const policy = str(language, 'policy', "template['language']['policy']");
  if (policy !== undefined && policy !== 'deterministic')
    throw errors.invalidParameter("The parameter template['language']['policy'] must be 'deterministic'.");
  const components = template.components ?? [];
  if (!Array.isArray(components)) throw wrongType("template['components']", 'an array');
  components.forEach((c, i) => {
    if (!isObject(c)) throw wrongType(`template['components'][${i}]`, 'an object');
    str(c, 'type', `template['components'][${i}]['type']`, { required: true });
    if (c.parameters !== undefined && !Array.isArray(c.parameters))
      throw wrongType(`template['components'][${i}]['parameters']`, 'an array');
  });
  return { name, language: { code, ...(policy ? { policy } : {}) }, components };
}

/** Validates a send body (already parsed JSON); throws a GraphError (code 100) on the first problem. */
export function validateSend(body: unknown): SendRequest {
  if (!isObject(body)) throw errors.invalidParameter('The request body must be a JSON object.');
  noLoneSurrogates(body, 'body');
  const product = body.messaging_product;
  if (product === undefined) throw required('messaging_product');
  if (product !== 'whatsapp')
    throw errors.invalidParameter("The parameter messaging_product must be 'whatsapp'.");
  const recipientType = body.recipient_type;
  if (recipientType !== undefined && recipientType !== 'individual')
    throw errors.invalidParameter("The parameter recipient_type must be 'individual'.");
  const to = str(body, 'to', 'to', { required: true })!;
  const waId = toWaId(to);
  if (waId === undefined)
    throw errors.invalidParameter(`The parameter to is not a valid phone number: ${to}.`);
  // The reference: `type` defaults to text when omitted.
  const type = body.type ?? 'text';
  if (typeof type !== 'string' || !(MESSAGE_TYPES as readonly string[]).includes(type))
    throw errors.invalidParameter(`The parameter type must be one of ${MESSAGE_TYPES.join(', ')}.`);
  let replyTo: string | undefined;
  if (body.context !== undefined) {
    const context = obj(body, 'context', 'context');
    replyTo = str(context, 'message_id', "context['message_id']", { required: true });
  }
  const callbackData = str(body, 'biz_opaque_callback_data', 'biz_opaque_callback_data', {
    max: CALLBACK_DATA_MAX,
  });
  const request: SendRequest = {
    to,
    waId,
    type: type as MessageType,
    raw: body,
    ...(replyTo ? { replyTo } : {}),
    ...(callbackData !== undefined ? { callbackData } : {}),
  };
  switch (request.type) {
    case 'text': {
      const text = obj(body, 'text', 'text');
      const textBody = str(text, 'body', "text['body']", { required: true, max: TEXT_MAX })!;
      const preview = text.preview_url ?? false;
      if (typeof preview !== 'boolean') throw wrongType("text['preview_url']", 'a boolean');
      request.text = { body: textBody, preview_url: preview };
      break;
    }
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker':
      request.media = validateMedia(body, request.type);
      break;
    case 'reaction': {
      const reaction = obj(body, 'reaction', 'reaction');
      str(reaction, 'message_id', "reaction['message_id']", { required: true });
      // An empty emoji removes the reaction (the reference), so only its type is checked.
      if (typeof reaction.emoji !== 'string') throw required("reaction['emoji']");
      break;
    }
    case 'location': {
      const location = obj(body, 'location', 'location');
      for (const [key, bound] of [
        ['latitude', 90],
        ['longitude', 180],
      ] as const) {
        const value = location[key];
        if (value === undefined) throw required(`location['${key}']`);
        const n = typeof value === 'string' ? Number(value) : value;
        if (typeof n !== 'number' || !Number.isFinite(n) || Math.abs(n) > bound)
          throw wrongType(`location['${key}']`, `a number between -${bound} and ${bound}`);
      }
      str(location, 'name', "location['name']");
      str(location, 'address', "location['address']");
      break;
    }
    case 'contacts': {
      const contacts = body.contacts;
      if (contacts === undefined) throw required('contacts');
      if (!Array.isArray(contacts) || contacts.length === 0) throw wrongType('contacts', 'a non-empty array');
      contacts.forEach((c, i) => {
        if (!isObject(c)) throw wrongType(`contacts[${i}]`, 'an object');
        const name = obj(c, 'name', `contacts[${i}]['name']`);
        str(name, 'formatted_name', `contacts[${i}]['name']['formatted_name']`, { required: true });
      });
      break;
    }
    case 'template':
      request.template = validateTemplate(body);
      break;
  }
  return request;
}
