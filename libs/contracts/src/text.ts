import BaseJoi from 'joi';
import type { CustomHelpers, Root, StringSchema } from 'joi';

/**
 * Text a client gives is valid Unicode everywhere, and a name is what it looks like: one `Joi`
 * (joi extended) for every schema of a request, whose `string()` refuses a lone surrogate, with two
 * rules for names (`displayName()`) and file names (`fileName()`). A name is stored as sent or
 * refused, never silently changed (a file name only loses its folders: see `safeFileName`).
 */

/** Node 20+ has `String.prototype.isWellFormed` (ES2024); the expression is its fallback. */
const isWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A UTF-16 surrogate without its pair: JSON's `"\ud800"` parses to one, but it is no character,
 * cannot be written as UTF-8, and makes the JSON we answer unreadable to strict parsers (jq).
 */
export function hasLoneSurrogate(value: string): boolean {
  return isWellFormed ? !isWellFormed.call(value) : LONE_SURROGATE.test(value);
}

/**
 * What a name may not contain: C0 and C1 controls (NUL, newlines, tabs, escapes), the line and
 * paragraph separators, the bidi controls that reorder what follows (U+061C, U+200E, U+200F,
 * U+202A–U+202E, U+2066–U+2069) and the invisible characters that make two names look alike
 * (U+200B, U+2060, U+FEFF). ZWNJ and ZWJ (U+200C, U+200D) stay: Persian and Indic names and
 * emoji sequences need them.
 */
const NAME_REFUSED =
  // eslint-disable-next-line no-control-regex -- control characters are what it finds
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;

/** The first character a name may not contain, as `U+XXXX`; undefined when there is none. */
export function refusedNameCharacter(value: string): string | undefined {
  const found = NAME_REFUSED.exec(value);
  if (!found) return undefined;
  return `U+${found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The most a file name may take in UTF-8: what ext4, NTFS (in UTF-16 units, fewer) and APFS allow. */
export const FILE_NAME_MAX_BYTES = 255;

/** Windows device names: `CON`, `con.txt`, `Com1.tar.gz` open a device there, not a file. */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[1-9¹²³]|lpt[1-9¹²³])$/i;

/** A file name reduced to its base name, or why it is refused (`must …`, after the field's name). */
export type FileNameVerdict = { name: string; refused?: undefined } | { name?: undefined; refused: string };

/**
 * A client's file name as one safe to hand to any file system: reduced to its base name (what
 * follows the last `/` or `\`: a path says where the file was, not what it is called), otherwise
 * kept as sent or refused. U+FFFD is refused: it is what bytes that were not UTF-8 decode to.
 */
export function safeFileName(raw: string): FileNameVerdict {
  const name = raw.slice(Math.max(raw.lastIndexOf('/'), raw.lastIndexOf('\\')) + 1);
  if (!/\S/.test(name)) return { refused: 'must name a file (a base name, not blank and not a folder)' };
  if (hasLoneSurrogate(name)) return { refused: LONE_SURROGATE_RULE };
  if (name.includes('\ufffd'))
    return { refused: 'must be valid UTF-8 (it has U+FFFD, what bytes that are not UTF-8 decode to)' };
  const refused = refusedNameCharacter(name);
  if (refused) return { refused: `${NAME_RULE} (found ${refused})` };
  if (name === '.' || name === '..') return { refused: 'must not be . or ..' };
  if (WINDOWS_DEVICE.test(name.split('.')[0]!.trimEnd()))
    return { refused: 'must not be a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9)' };
  if (Buffer.byteLength(name, 'utf8') > FILE_NAME_MAX_BYTES)
    return { refused: `must be at most ${FILE_NAME_MAX_BYTES} bytes in UTF-8` };
  return { name };
}

const LONE_SURROGATE_RULE =
  'must be valid Unicode text: it has a lone surrogate (half of a UTF-16 pair, no character)';
const NAME_RULE = 'must not contain control characters, direction controls or invisible characters';

/** How the OpenAPI document names the two rules (joi's `describe()` shows them by these names). */
export const TEXT_RULES = { displayName: 'displayName', fileName: 'fileName' } as const;

/** How the OpenAPI document states the rule of file names. */
export const FILE_NAME_RULE =
  'A file name: reduced to its base name (what follows the last / or \\); refused when it is . or .., a Windows device name (CON, NUL, COM1...), has control, bidi or invisible characters or U+FFFD, or is over 255 bytes in UTF-8.';

/** How the OpenAPI document states the rule of names. */
export const DISPLAY_NAME_RULE =
  'A name: no control characters (line breaks included), bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) or invisible characters (U+200B, U+2060, U+FEFF); ZWNJ and ZWJ are kept.';

/** `Joi.string()` of this module: the two rules besides joi's own. */
export interface TextStringSchema<TSchema = string> extends StringSchema<TSchema> {
  /** A name people see (a profile, label, group, channel): no controls, bidi or invisible characters. */
  displayName(): this;
  /** A file name: reduced to its base name, or refused (see `safeFileName`); at most 255 characters. */
  fileName(): this;
}

export interface TextRoot extends Root {
  string<TSchema = string>(): TextStringSchema<TSchema>;
}

/**
 * joi for request schemas: import it from here, not from `joi`. Every `string()` refuses a lone
 * surrogate (before its own rules: a pattern or a list of values would otherwise say less).
 */
export const Joi = BaseJoi.extend((joi: Root) => ({
  type: 'string',
  base: joi.string(),
  messages: {
    'string.loneSurrogate': `{{#label}} ${LONE_SURROGATE_RULE}`,
    'string.displayName': `{{#label}} ${NAME_RULE} (found {{#character}})`,
    'string.fileName': '{{#label}} {{#reason}}',
  },
  validate(value: unknown, helpers: CustomHelpers) {
    if (typeof value === 'string' && hasLoneSurrogate(value))
      return { value, errors: helpers.error('string.loneSurrogate') };
    return undefined;
  },
  rules: {
    [TEXT_RULES.displayName]: {
      method() {
        return this.$_addRule(TEXT_RULES.displayName);
      },
      validate(value: string, helpers: CustomHelpers) {
        const character = refusedNameCharacter(value);
        return character ? helpers.error('string.displayName', { character }) : value;
      },
    },
    [TEXT_RULES.fileName]: {
      // With joi's `max` at the byte limit: over it in characters is over it in bytes, said once.
      method() {
        return (this as unknown as StringSchema).max(FILE_NAME_MAX_BYTES).$_addRule(TEXT_RULES.fileName);
      },
      validate(value: string, helpers: CustomHelpers) {
        if (value.length > FILE_NAME_MAX_BYTES) return value;
        const verdict = safeFileName(value);
        return verdict.refused === undefined
          ? verdict.name
          : helpers.error('string.fileName', { reason: verdict.refused });
      },
    },
  },
})) as TextRoot;
