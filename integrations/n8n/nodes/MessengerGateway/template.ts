import type { Body } from './transport';

/**
 * The `template` of a Send Template (POST /send, Cloud API devices; docs/message-kinds.md), built
 * from the node's fields: body parameters as a list of texts, an optional header (text, or an
 * image, video or document by link or Graph media id), button parameters by index — or the
 * components as raw JSON in Meta's shape. It checks what the gateway would refuse and the fields
 * can say, so the node fails with the field's name before any request; the gateway checks the
 * rest (the template's placeholders against the number's WABA).
 *
 * Plain code, no n8n import at run time: a refusal is a TemplateFieldError, which the node's
 * execute() turns into a NodeOperationError with the same message; test/fast/integrations reads
 * this file without n8n.
 */

export type SendTemplate = NonNullable<Body<'/send', 'post'>['template']>;
type Component = NonNullable<SendTemplate['components']>[number];
type Parameter = Component['parameters'][number];

/**
 * The gateway's bounds (TEMPLATE_LIMITS, TEMPLATE_NAME_PATTERN, TEMPLATE_LANGUAGE_PATTERN of
 * libs/contracts templates.ts; this package has no runtime dependency, so they are copied, and a
 * fast test holds the copy to the originals).
 */
export const TEMPLATE_LIMITS = {
  components: 10,
  parametersPerComponent: 20,
  text: 1024,
  headerText: 60,
  couponCode: 15,
  payload: 256,
  filename: 240,
  mediaId: 64,
  maxButtonIndex: 9,
} as const;
/** A media link's length (STRING_LIMITS.url of libs/contracts limits.ts). */
export const LINK_MAX = 2048;
export const TEMPLATE_NAME_PATTERN = /^[a-z0-9_]{1,512}$/;
export const TEMPLATE_LANGUAGE_PATTERN = /^[a-z]{2,3}(_[A-Z]{2})?$/;
const PARAMETER_NAME_PATTERN = /^[a-z0-9_]{1,512}$/;

/** A field the node refuses before any request (execute() reports it as a NodeOperationError). */
export class TemplateFieldError extends Error {
  override name = 'TemplateFieldError';
}

export const HEADER_TYPES = ['none', 'text', 'image', 'video', 'document'] as const;
export const BUTTON_TYPES = ['quick_reply', 'url', 'copy_code'] as const;

/** The node's template fields as n8n gives them (a fixedCollection is `{ <group>: [values] }`). */
export interface TemplateFields {
  name: string;
  language: string;
  /** `fields`: the parameters below; `json`: `componentsJson`. */
  parametersMode?: string;
  bodyParameters?: { parameter?: Array<{ text?: unknown; parameterName?: unknown }> };
  headerType?: string;
  headerText?: unknown;
  headerMedia?: unknown;
  headerFileName?: unknown;
  buttonParameters?: { button?: Array<{ index?: unknown; type?: unknown; value?: unknown }> };
  /** JSON text, or (from an expression) the array itself. */
  componentsJson?: unknown;
}

const fail = (message: string): never => {
  throw new TemplateFieldError(message);
};

const chars = (text: string) => [...text].length;

/**
 * A text parameter as WhatsApp takes it: not empty, no line break, tab or other control
 * character, at most 4 spaces in a row (Meta's error 132018), at most `max` characters.
 */
function paramText(value: unknown, label: string, max: number): string {
  const text = value === undefined || value === null ? '' : String(value);
  if (text.trim() === '') fail(`${label} is empty`);
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  if (/[\x00-\x1F\x7F-\x9F]/.test(text))
    fail(
      `${label} has a line break, a tab or another control character: WhatsApp refuses them (error 132018)`,
    );
  if (/ {5,}/.test(text))
    fail(`${label} has more than 4 spaces in a row: WhatsApp refuses them (error 132018)`);
  if (chars(text) > max) fail(`${label} is ${chars(text)} characters: at most ${max}`);
  return text;
}

/** The template's name and language, checked as the gateway checks them. */
function nameAndLanguage(fields: TemplateFields): Pick<SendTemplate, 'name' | 'language'> {
  const name = String(fields.name ?? '').trim();
  const language = String(fields.language ?? '').trim();
  if (name === '') fail('Template is required');
  if (!TEMPLATE_NAME_PATTERN.test(name))
    fail(`Template "${name}" is not a template name: 1 to 512 lower-case letters, digits and _`);
  if (language === '') fail('Language is required');
  if (!TEMPLATE_LANGUAGE_PATTERN.test(language))
    fail(`Language "${language}" is not a template language code such as en_US or ar`);
  return { name, language };
}

function bodyComponent(fields: TemplateFields): Component | undefined {
  const entries = fields.bodyParameters?.parameter ?? [];
  if (entries.length === 0) return undefined;
  if (entries.length > TEMPLATE_LIMITS.parametersPerComponent)
    fail(`Body Parameters has ${entries.length}: at most ${TEMPLATE_LIMITS.parametersPerComponent}`);
  const names = entries.map((e) => String(e.parameterName ?? '').trim());
  const named = names.filter((n) => n !== '').length;
  if (named !== 0 && named !== entries.length)
    fail(
      'Body Parameters: give every parameter a name (a template with {{first_name}}) or none ({{1}}, {{2}})',
    );
  const parameters = entries.map((entry, i): Parameter => {
    const label = `Body Parameter ${i + 1}`;
    const parameter: Parameter = { type: 'text', text: paramText(entry.text, label, TEMPLATE_LIMITS.text) };
    if (named > 0) {
      if (!PARAMETER_NAME_PATTERN.test(names[i]!))
        fail(`${label}'s name "${names[i]}" is not a parameter name: lower-case letters, digits and _`);
      parameter.parameter_name = names[i];
    }
    return parameter;
  });
  return { type: 'body', parameters };
}

/** A media header's source: a Graph media id (digits) or an http(s) link. */
function mediaOf(value: unknown, fileName: unknown, document: boolean) {
  const text = String(value ?? '').trim();
  if (text === '') fail('Header Media is required: an http(s) link or a media ID');
  let media: { id?: string; link?: string; filename?: string };
  if (/^[0-9]+$/.test(text)) {
    if (text.length > TEMPLATE_LIMITS.mediaId) fail(`Header Media "${text}" is too long for a media ID`);
    media = { id: text };
  } else {
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      url = undefined;
    }
    if (!url || !['http:', 'https:'].includes(url.protocol))
      fail(`Header Media "${text}" is neither an http(s) link nor a media ID (digits)`);
    if (text.length > LINK_MAX)
      fail(`Header Media is ${text.length} characters: a link is at most ${LINK_MAX}`);
    media = { link: text };
  }
  const name = String(fileName ?? '').trim();
  if (document && name !== '') {
    if (chars(name) > TEMPLATE_LIMITS.filename)
      fail(`Header File Name is ${chars(name)} characters: at most ${TEMPLATE_LIMITS.filename}`);
    media.filename = name;
  }
  return media;
}

function headerComponent(fields: TemplateFields): Component | undefined {
  const type = fields.headerType ?? 'none';
  if (type === 'none') return undefined;
  if (type === 'text')
    return {
      type: 'header',
      parameters: [
        { type: 'text', text: paramText(fields.headerText, 'Header Text', TEMPLATE_LIMITS.headerText) },
      ],
    };
  if (type !== 'image' && type !== 'video' && type !== 'document')
    return fail(`Header "${type}" is not a header type: ${HEADER_TYPES.join(', ')}`);
  const media = mediaOf(fields.headerMedia, fields.headerFileName, type === 'document');
  const parameter: Parameter =
    type === 'image'
      ? { type, image: media }
      : type === 'video'
        ? { type, video: media }
        : { type, document: media };
  return { type: 'header', parameters: [parameter] };
}

/** Each button's parameter: a quick reply's payload, a URL button's text, a copy-code button's code. */
function buttonComponents(fields: TemplateFields): Component[] {
  const entries = fields.buttonParameters?.button ?? [];
  const seen = new Set<number>();
  return entries.map((entry): Component => {
    const index = Number(entry.index);
    if (!Number.isInteger(index) || index < 0 || index > TEMPLATE_LIMITS.maxButtonIndex)
      fail(
        `Button index ${String(entry.index)} is not a button's index: 0 to ${TEMPLATE_LIMITS.maxButtonIndex}`,
      );
    if (seen.has(index)) fail(`Button Parameters has two buttons of index ${index}`);
    seen.add(index);
    const label = `Button ${index}'s value`;
    const type = String(entry.type ?? 'url');
    if (type === 'quick_reply') {
      const payload = paramText(entry.value, label, TEMPLATE_LIMITS.payload);
      return { type: 'button', sub_type: type, index, parameters: [{ type: 'payload', payload }] };
    }
    if (type === 'copy_code') {
      const coupon = paramText(entry.value, label, TEMPLATE_LIMITS.couponCode);
      return {
        type: 'button',
        sub_type: type,
        index,
        parameters: [{ type: 'coupon_code', coupon_code: coupon }],
      };
    }
    if (type !== 'url') fail(`Button ${index}'s type "${type}" is not one of ${BUTTON_TYPES.join(', ')}`);
    const text = paramText(entry.value, label, TEMPLATE_LIMITS.text);
    return { type: 'button', sub_type: 'url', index, parameters: [{ type: 'text', text }] };
  });
}

/**
 * The raw components: a JSON array (text, or an array from an expression) of objects with a
 * `type`, at most 10. What is inside each is the gateway's to check: its 400 names the field.
 */
function jsonComponents(value: unknown): Component[] | undefined {
  let parsed = value;
  if (typeof value === 'string') {
    if (value.trim() === '') return undefined;
    try {
      parsed = JSON.parse(value);
    } catch (err) {
      fail(`Components (JSON) is not JSON: ${(err as Error).message}`);
    }
  }
  if (parsed === undefined || parsed === null) return undefined;
  if (!Array.isArray(parsed))
    fail('Components (JSON) must be an array of components: [{ "type": "body", "parameters": [...] }]');
  const list = parsed as unknown[];
  if (list.length > TEMPLATE_LIMITS.components)
    fail(`Components (JSON) has ${list.length} components: at most ${TEMPLATE_LIMITS.components}`);
  list.forEach((c, i) => {
    const type = c && typeof c === 'object' && !Array.isArray(c) ? (c as { type?: unknown }).type : undefined;
    if (!['header', 'body', 'button', 'footer'].includes(String(type)))
      fail(`Components (JSON) [${i}] must be an object whose type is header, body, button or footer`);
  });
  return list.length > 0 ? (list as Component[]) : undefined;
}

/** The `template` of POST /send from the node's fields (components left out when there are none). */
export function templateOf(fields: TemplateFields): SendTemplate {
  const template: SendTemplate = nameAndLanguage(fields);
  const components =
    fields.parametersMode === 'json'
      ? jsonComponents(fields.componentsJson)
      : [headerComponent(fields), bodyComponent(fields), ...buttonComponents(fields)].filter(
          (c): c is Component => c !== undefined,
        );
  if (components && components.length > 0) template.components = components;
  return template;
}
