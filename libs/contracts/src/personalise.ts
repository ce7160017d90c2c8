/**
 * Personalised lists: `{{name}}` placeholders in a message's text and caption, filled per
 * recipient from the `vars` of its `to` entry. Plain text: no expressions, no escaping.
 *
 * A placeholder is exactly `{{` + one or more of `A-Z a-z 0-9 _` + `}}`; anything else — `{{ name }}`
 * with spaces, a lone `{{`, `{{a-b}}` — is literal text and sent as written.
 */
import type { MessageContent } from './jobs.js';
import { PHONE_PATTERN, STRING_LIMITS } from './limits.js';
import { isSendAddress } from './contact.js';
import { hasLoneSurrogate } from './text.js';
import type { ValidationDetail } from './validation.js';

/** A recipient's variables: name -> value. */
export type RecipientVars = Record<string, string>;

/** Bounds of one recipient's `vars` (400 beyond them). */
export const VARS_LIMITS = {
  /** Variables per recipient. */
  count: 20,
  /** Characters of a variable's name. */
  name: 32,
  /** Characters of a variable's value. */
  value: 256,
  /** Characters of a recipient's names and values together. */
  total: 2048,
} as const;

/** A variable's name (`vars` keys): 1 to 32 of what a placeholder may hold between `{{` and `}}`. */
export const VAR_NAME_PATTERN = /^[A-Za-z0-9_]{1,32}$/;
const PLACEHOLDER = /\{\{([A-Za-z0-9_]+)\}\}/g;

/** At most this many `details` entries name recipients lacking a variable. */
const MAX_MISSING_DETAILS = 50;

/** The variable names `template` uses, in order of first use. */
export function placeholdersOf(template: string | undefined): string[] {
  if (!template) return [];
  return [...new Set(Array.from(template.matchAll(PLACEHOLDER), (m) => m[1]!))];
}

/** `template` with each placeholder replaced by its variable (callers make sure every one is there). */
export function renderTemplate(template: string, vars: RecipientVars): string {
  return template.replace(PLACEHOLDER, (whole, name: string) =>
    Object.hasOwn(vars, name) ? vars[name]! : whole,
  );
}

/** The names a content's text and caption use. */
export function contentPlaceholders(content: MessageContent): string[] {
  return [...new Set([...placeholdersOf(content.text), ...placeholdersOf(content.attachment?.caption)])];
}

/** The content one recipient gets: its text and caption rendered with its variables. */
export function personaliseContent(content: MessageContent, vars: RecipientVars): MessageContent {
  const out: MessageContent = { ...content };
  delete out.personalised;
  if (content.text !== undefined) out.text = renderTemplate(content.text, vars);
  if (content.attachment?.caption !== undefined)
    out.attachment = { ...content.attachment, caption: renderTemplate(content.attachment.caption, vars) };
  return out;
}

/**
 * Checks every recipient of a personalised request against the content: each placeholder must be
 * among its variables (one detail per recipient lacking one, path `["to", i, "vars", name]`),
 * its variables must fit `VARS_LIMITS.total`, and its rendered text and caption their limits.
 * `entries[i]` is undefined for a plain-number entry (it has no variables). At most 50 details.
 */
export function personalisationProblems(
  content: MessageContent,
  entries: readonly (RecipientVars | undefined)[],
): ValidationDetail[] {
  const names = contentPlaceholders(content);
  const lengths = [
    ...lengthOf(content.text, STRING_LIMITS.text, 'text'),
    ...lengthOf(content.attachment?.caption, STRING_LIMITS.caption, 'caption'),
  ];
  const details: ValidationDetail[] = [];
  for (let i = 0; i < entries.length && details.length < MAX_MISSING_DETAILS; i++) {
    const vars = entries[i] ?? {};
    const missing = names.find((n) => !Object.hasOwn(vars, n));
    if (missing !== undefined) {
      details.push({ path: ['to', i, 'vars', missing], message: `to[${i}].vars must include ${missing}` });
      continue;
    }
    let total = 0;
    for (const [k, v] of Object.entries(vars)) total += k.length + v.length;
    if (total > VARS_LIMITS.total) {
      details.push({
        path: ['to', i, 'vars'],
        message: `to[${i}].vars holds more than ${VARS_LIMITS.total} characters`,
      });
      continue;
    }
    const tooLong = lengths.find((l) => l.renderedLength(vars) > l.max);
    if (tooLong) details.push({ path: ['to', i, 'vars'], message: `to[${i}]: ${tooLong.what}` });
  }
  return details;
}

/**
 * A template's rendered length, worked out from its placeholder counts (not by rendering it: a
 * 60,000-character text for 10,000 recipients must not cost 600 MB of strings to check).
 */
function lengthOf(template: string | undefined, max: number, what: string) {
  if (template === undefined) return [];
  const uses = new Map<string, number>();
  for (const m of template.matchAll(PLACEHOLDER)) uses.set(m[1]!, (uses.get(m[1]!) ?? 0) + 1);
  return [
    {
      max,
      what: `the ${what} with its variables is longer than ${max} characters`,
      renderedLength(vars: RecipientVars): number {
        let n = template.length;
        for (const [name, count] of uses) n += count * ((vars[name]?.length ?? 0) - name.length - 4);
        return n;
      },
    },
  ];
}

/** Only the variables the content uses are stored (they are personal data): `vars` cut to `names`. */
export function usedVars(vars: RecipientVars | undefined, names: readonly string[]): RecipientVars {
  const out: RecipientVars = {};
  for (const n of names) if (vars && Object.hasOwn(vars, n)) out[n] = vars[n]!;
  return out;
}

const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/**
 * The phone number of a `to` entry the schema would pass unchanged — a well-formed number, or
 * `{ phone, vars? }` with well-formed variables — checked in plain JS (joi costs ~90 µs per object
 * entry: a second for 10,000); undefined for anything else, which joi then judges for its details.
 */
export function wellFormedEntryPhone(entry: unknown): string | undefined {
  if (typeof entry === 'string') return isSendAddress(entry) ? entry : undefined;
  if (!isJsonObject(entry)) return undefined;
  for (const key in entry)
    if (!Object.hasOwn(entry, key) || (key !== 'phone' && key !== 'vars')) return undefined;
  const { phone, vars } = entry;
  if (typeof phone !== 'string' || !PHONE_PATTERN.test(phone)) return undefined;
  if (vars === undefined) return phone;
  if (!isJsonObject(vars)) return undefined;
  let count = 0;
  for (const name in vars) {
    // `__proto__` is refused (with its detail) by the full validation.
    if (!Object.hasOwn(vars, name) || name === '__proto__' || !VAR_NAME_PATTERN.test(name)) return undefined;
    const value = vars[name];
    if (typeof value !== 'string' || value.length > VARS_LIMITS.value || ++count > VARS_LIMITS.count)
      return undefined;
    if (hasLoneSurrogate(value)) return undefined;
  }
  return phone;
}
