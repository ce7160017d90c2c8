/**
 * What the Graph API's template list (`GET /{waba-id}/message_templates`) says of a template's
 * components, read defensively (the list is Meta's answer: anything may be missing or of another
 * type): how many parameters each takes (`/send`'s check), and what each shows (the template as
 * GET /cloud/templates and the console show it).
 * https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates/components
 */

/**
 * How many parameters a template takes, per component, where its text says so: the distinct
 * placeholders (`{{1}}`, `{{first_name}}`) of its header text and body, one for a media header,
 * and one for each button whose URL has a placeholder or that copies a code. A component the
 * template's text says nothing about (a quick reply's optional payload) is not counted.
 */
export interface TemplateParams {
  header?: number;
  body?: number;
  /** By button index. */
  buttons?: Record<number, number>;
}

/** One button of a template as it is shown: Meta's type, its label, and where it goes. */
export interface TemplateButtonView {
  /** QUICK_REPLY, URL, PHONE_NUMBER, OTP, COPY_CODE, FLOW… as Meta says. */
  type: string;
  text?: string;
  /** A URL button's address (its `{{1}}` is the parameter /send gives). */
  url?: string;
  phoneNumber?: string;
  /** An OTP button's kind: COPY_CODE, ONE_TAP, ZERO_TAP. */
  otpType?: string;
}

/**
 * One component of a template as it is shown: a header (its format, and its text when it is
 * text), the body's and the footer's text (placeholders as written), the buttons. The texts are
 * the business's template, not a message anyone sent: not secret.
 */
export interface TemplateComponentView {
  type: 'HEADER' | 'BODY' | 'FOOTER' | 'BUTTONS';
  /** A header's: TEXT, IMAGE, VIDEO, DOCUMENT or LOCATION. */
  format?: string;
  text?: string;
  buttons?: TemplateButtonView[];
}

/** Bounds of what is kept and shown of a template: Meta's own are smaller (a body is 1,024 characters). */
export const TEMPLATE_VIEW_LIMITS = {
  components: 10,
  buttons: 10,
  text: 4096,
  url: 2048,
  /** A type or format name (`QUICK_REPLY`). */
  word: 32,
} as const;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;
const WORD = /^[A-Z_]+$/;

/** The distinct placeholders of a template's text. */
function placeholders(text: unknown): number {
  if (typeof text !== 'string') return 0;
  return new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1])).size;
}

/** A field's type or format name, upper-cased ('' when it is none). */
const upper = (value: unknown): string => (typeof value === 'string' ? value.toUpperCase() : '');

/** The parameters a template takes, from its components as `message_templates` lists them. */
export function templateParams(components: unknown[]): TemplateParams {
  const params: TemplateParams = {};
  for (const raw of components) {
    if (!raw || typeof raw !== 'object') continue;
    const c = raw as { type?: unknown; format?: unknown; text?: unknown; buttons?: unknown };
    const type = upper(c.type);
    if (type === 'BODY') params.body = placeholders(c.text);
    else if (type === 'HEADER') {
      const format = upper(c.format) || 'TEXT';
      if (format === 'TEXT') params.header = placeholders(c.text);
      else if (['IMAGE', 'VIDEO', 'DOCUMENT'].includes(format)) params.header = 1;
    } else if (type === 'BUTTONS' && Array.isArray(c.buttons)) {
      c.buttons.forEach((b: unknown, index: number) => {
        const button = (b ?? {}) as { type?: unknown; url?: unknown };
        const kind = upper(button.type);
        // An authentication template's code button (OTP) and a coupon's copy-code button take the
        // code; a URL button takes its placeholder's value.
        const takes =
          kind === 'OTP' || kind === 'COPY_CODE' ? 1 : kind === 'URL' ? placeholders(button.url) : 0;
        if (takes > 0) (params.buttons ??= {})[index] = takes;
      });
    }
  }
  return params;
}

/** A string of Meta's, at most `max` characters (whole code points); undefined when it is none. */
function text(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return value.length <= max ? value : [...value].slice(0, max).join('');
}

/** A type or format name of Meta's (`QUICK_REPLY`), or undefined when it is no such word. */
function word(value: unknown): string | undefined {
  const w = upper(value);
  return w.length > 0 && w.length <= TEMPLATE_VIEW_LIMITS.word && WORD.test(w) ? w : undefined;
}

function buttonView(raw: unknown): TemplateButtonView | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const b = raw as {
    type?: unknown;
    text?: unknown;
    url?: unknown;
    phone_number?: unknown;
    otp_type?: unknown;
  };
  const type = word(b.type);
  if (!type) return undefined;
  const label = text(b.text, TEMPLATE_VIEW_LIMITS.text);
  const url = text(b.url, TEMPLATE_VIEW_LIMITS.url);
  const phoneNumber = text(b.phone_number, TEMPLATE_VIEW_LIMITS.word);
  const otpType = word(b.otp_type);
  return {
    type,
    ...(label ? { text: label } : {}),
    ...(url ? { url } : {}),
    ...(phoneNumber ? { phoneNumber } : {}),
    ...(otpType ? { otpType } : {}),
  };
}

/**
 * What a template shows, from its components as `message_templates` lists them: the header,
 * body, footer and buttons, bounded (TEMPLATE_VIEW_LIMITS). A component of another type (a
 * carousel, a limited-time offer) is left out: what is shown is what the view knows to show.
 */
export function templateComponents(components: unknown[]): TemplateComponentView[] {
  const views: TemplateComponentView[] = [];
  for (const raw of components.slice(0, TEMPLATE_VIEW_LIMITS.components)) {
    if (!raw || typeof raw !== 'object') continue;
    const c = raw as { type?: unknown; format?: unknown; text?: unknown; buttons?: unknown };
    const type = upper(c.type);
    const body = text(c.text, TEMPLATE_VIEW_LIMITS.text);
    if (type === 'HEADER') {
      views.push({ type, format: word(c.format) ?? 'TEXT', ...(body ? { text: body } : {}) });
    } else if (type === 'BODY' || type === 'FOOTER') {
      views.push({ type, text: body ?? '' });
    } else if (type === 'BUTTONS' && Array.isArray(c.buttons)) {
      const buttons = c.buttons
        .slice(0, TEMPLATE_VIEW_LIMITS.buttons)
        .map(buttonView)
        .filter((b): b is TemplateButtonView => b !== undefined);
      views.push({ type, buttons });
    }
  }
  return views;
}
