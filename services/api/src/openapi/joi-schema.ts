import type Joi from 'joi';
import {
  BASE64_RULE,
  DISPLAY_NAME_RULE,
  EMOJI_RULE,
  FILE_NAME_RULE,
  SEND_AT_RULE,
  TEXT_RULES,
  USERNAME_ADDRESS_RULE,
  USERNAME_RULE,
  USERNAME_RULES_IN_WORDS,
} from '@mgw/contracts';
import { TOKEN_LIFETIME_RULE } from '@mgw/store';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1). */
export type JsonSchema = Record<string, unknown>;

/** The parts of joi's `describe()` output this converter reads. */
interface Description {
  type: string;
  flags?: {
    presence?: 'required' | 'optional' | 'forbidden';
    default?: unknown;
    only?: boolean;
    description?: string;
  };
  allow?: unknown[];
  rules?: { name: string; args?: Record<string, unknown> }[];
  keys?: Record<string, Description>;
  patterns?: { regex: string; rule: Description }[];
  items?: Description[];
  matches?: { schema?: Description; is?: Description; then?: Description; otherwise?: Description }[];
  dependencies?: { rel: string; key?: string | null; peers: string[] }[];
  whens?: { ref: { path: string[] }; is: Description; then?: Description; otherwise?: Description }[];
  preferences?: unknown;
}

// joi's own base64 expression (paddingRequired: false): the same strings `isBase64` accepts.
const BASE64 = '^(?:[A-Za-z0-9+/]{2}[A-Za-z0-9+/]{2})*(?:[A-Za-z0-9+/]{2}(==)?|[A-Za-z0-9+/]{3}=?)?$';

function unsupported(what: string): never {
  throw new Error(`joi-schema: no JSON Schema for ${what}; extend services/api/src/openapi/joi-schema.ts`);
}

/** `/^a$/flags` as joi describes a regex -> the expression (flags other than none are refused). */
function pattern(regex: unknown): string {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(String(regex));
  if (!m || m[2]) unsupported(`the regex ${String(regex)}`);
  return m[1]!;
}

function stringSchema(d: Description): JsonSchema {
  const s: JsonSchema = { type: 'string' };
  const patterns: string[] = [];
  for (const rule of d.rules ?? []) {
    const args = rule.args ?? {};
    switch (rule.name) {
      case 'min':
        s.minLength = args.limit;
        break;
      case 'max':
        s.maxLength = args.limit;
        break;
      case 'pattern':
        patterns.push(pattern(args.regex));
        break;
      case 'uri': {
        const schemes = (args.options as { scheme?: string[] } | undefined)?.scheme;
        s.format = 'uri';
        if (schemes) patterns.push(`^(?:${schemes.join('|')}):`);
        break;
      }
      // Base64 is checked by our own rule (`isBase64`): joi's can overflow V8's regexp stack on
      // ~10 MB values. The document states it with joi's expression, which accepts the same strings.
      case 'custom':
        if (args.description === SEND_AT_RULE) {
          // Stated as a date-time (RFC 3339: an offset is required); the 30 days are in the description.
          s.format = 'date-time';
          s.description = `${SEND_AT_RULE}.`;
          break;
        }
        // A token's lifetime: the shape is the rule's pattern; its maximum is said in words.
        if (args.description === TOKEN_LIFETIME_RULE) {
          s.description = `${TOKEN_LIFETIME_RULE[0]!.toUpperCase()}${TOKEN_LIFETIME_RULE.slice(1)}.`;
          break;
        }
        if (args.description === EMOJI_RULE) {
          s.description = `${EMOJI_RULE} (one grapheme).`;
          break;
        }
        // WhatsApp's rules for a username (libs/contracts/src/usernames.ts): the shape as a
        // pattern, the rest (a letter, periods, www., domain endings, reserved words) in words.
        if (args.description === USERNAME_RULE || args.description === USERNAME_ADDRESS_RULE) {
          patterns.push(args.description === USERNAME_RULE ? '^@?[A-Za-z0-9_.]+$' : '^@[A-Za-z0-9_.]+$');
          s.description = USERNAME_RULES_IN_WORDS;
          break;
        }
        // Any other rule the schema describes in words (`.custom(fn, 'what it checks')`): said so.
        if (typeof args.description === 'string' && args.description !== BASE64_RULE) {
          s.description = `${args.description[0]!.toUpperCase()}${args.description.slice(1)}.`;
          break;
        }
        if (args.description !== BASE64_RULE)
          unsupported(`the string rule "custom" (${String(args.description)})`);
        s.contentEncoding = 'base64';
        patterns.push(BASE64);
        break;
      // Surrounding spaces are removed (a normalisation, not a constraint).
      case 'trim':
        break;
      // Converted to one case (a user name: lowercase), also a normalisation.
      case 'case':
        break;
      // A name: no controls, bidi controls or invisible characters (libs/contracts/src/text.ts).
      // Said in words: a second pattern would make an `allOf` that typed clients render badly.
      case TEXT_RULES.displayName:
        s.description = DISPLAY_NAME_RULE;
        break;
      // A file name is reduced to its base name, else refused: no pattern says it (docs/media.md).
      case TEXT_RULES.fileName:
        s.description = FILE_NAME_RULE;
        break;
      default:
        unsupported(`the string rule "${rule.name}"`);
    }
  }
  if (patterns.length === 1) s.pattern = patterns[0];
  if (patterns.length > 1) s.allOf = patterns.map((p) => ({ pattern: p }));
  // joi refuses '' unless it is allowed explicitly.
  if (s.minLength === undefined && !(d.allow ?? []).includes('')) s.minLength = 1;
  return s;
}

function numberSchema(d: Description): JsonSchema {
  const s: JsonSchema = { type: 'number' };
  for (const rule of d.rules ?? []) {
    const args = rule.args ?? {};
    if (rule.name === 'integer') s.type = 'integer';
    else if (rule.name === 'min') s.minimum = args.limit;
    else if (rule.name === 'max') s.maximum = args.limit;
    // A custom rule of ours only normalises (e.g. the OTP code to its digit string).
    else if (rule.name !== 'custom') unsupported(`the number rule "${rule.name}"`);
  }
  return s;
}

/**
 * A rule of an object or an array no JSON Schema keyword states (`.custom(fn, 'what it checks')`,
 * e.g. a template's components: one body at most): said in words, as its description.
 */
function ruleInWords(rule: { args?: Record<string, unknown> }, type: string): string {
  const words = rule.args?.description;
  if (typeof words !== 'string' || words.length === 0) unsupported(`the ${type} rule "custom" without words`);
  return `${words[0]!.toUpperCase()}${words.slice(1)}.`;
}

function objectSchema(d: Description): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const conditions: JsonSchema[] = [];
  for (const [key, child] of Object.entries(d.keys ?? {})) {
    properties[key] = describeToSchema(child);
    if (child.flags?.presence === 'required') required.push(key);
    for (const when of child.whens ?? []) conditions.push(conditionalRequirement(key, when));
  }
  const s: JsonSchema = { type: 'object', properties, additionalProperties: false };
  if (required.length > 0) s.required = required;
  // `.pattern(regex, schema)`: keys matching the regex, each value of the schema.
  if (d.patterns)
    s.patternProperties = Object.fromEntries(
      d.patterns.map((p) => [pattern(p.regex), describeToSchema(p.rule)]),
    );
  for (const rule of d.rules ?? []) {
    if (rule.name === 'max') s.maxProperties = rule.args?.limit;
    else if (rule.name === 'min') s.minProperties = rule.args?.limit;
    else if (rule.name === 'custom') s.description = ruleInWords(rule, 'object');
    else unsupported(`the object rule "${rule.name}"`);
  }
  for (const dep of d.dependencies ?? []) {
    const each = dep.peers.map((p) => ({ required: [p] }));
    if (dep.rel === 'or') conditions.push({ anyOf: each });
    else if (dep.rel === 'xor') conditions.push({ oneOf: each });
    // `.oxor(peers)`: at most one of them.
    else if (dep.rel === 'oxor')
      conditions.push(
        ...dep.peers.flatMap((p, i) => dep.peers.slice(i + 1).map((q) => ({ not: { required: [p, q] } }))),
      );
    // `.without(key, peers)`: the key never comes with any of its peers.
    else if (dep.rel === 'without' && dep.key)
      conditions.push(...dep.peers.map((p) => ({ not: { required: [dep.key!, p] } })));
    else unsupported(`the object dependency "${dep.rel}"`);
  }
  if (conditions.length === 1) Object.assign(s, conditions[0]);
  if (conditions.length > 1) s.allOf = conditions;
  return s;
}

/** `key: x.when('other', { is: value, then: required })` -> if other = value then key is required. */
function conditionalRequirement(key: string, when: NonNullable<Description['whens']>[number]): JsonSchema {
  const values = (when.is.allow ?? []).filter((v) => typeof v !== 'object');
  const other = when.ref.path.join('.');
  if (when.ref.path.length !== 1 || values.length !== 1 || when.otherwise)
    unsupported(`the condition on "${key}"`);
  if (
    when.then?.flags?.presence !== 'required' ||
    Object.keys(when.then).some((k) => !['type', 'flags'].includes(k))
  )
    unsupported(`the condition on "${key}" (only "then: required" is supported)`);
  return {
    if: { properties: { [other]: { const: values[0] } }, required: [other] },
    then: { required: [key] },
  };
}

function alternativesSchema(d: Description): JsonSchema {
  const options = (d.matches ?? []).flatMap((m) => {
    if (m.schema) return [describeToSchema(m.schema)];
    // conditional(Joi.array(), { then, otherwise }): a test of the value's type only.
    if (m.is && m.then && m.otherwise && Object.keys(m.is).length === 1 && m.is.type === m.then.type)
      return [describeToSchema(m.then), describeToSchema(m.otherwise)];
    // conditional(Joi.string().pattern(p), { then, otherwise }): two string forms (a group id or
    // a phone number), each with its own pattern; the value matches one of them.
    if (m.is?.type === 'string' && m.then?.type === 'string' && m.otherwise)
      return [describeToSchema(m.then), describeToSchema(m.otherwise)];
    return unsupported('this alternatives().conditional() form');
  });
  return { anyOf: options };
}

function arraySchema(d: Description): JsonSchema {
  const s: JsonSchema = { type: 'array' };
  if ((d.items ?? []).length > 1) unsupported('an array of several item types');
  if (d.items?.[0]) s.items = describeToSchema(d.items[0]);
  for (const rule of d.rules ?? []) {
    const args = rule.args ?? {};
    if (rule.name === 'min') s.minItems = args.limit;
    else if (rule.name === 'max') s.maxItems = args.limit;
    else if (rule.name === 'unique') s.uniqueItems = true;
    else if (rule.name === 'custom') s.description = ruleInWords(rule, 'array');
    else unsupported(`the array rule "${rule.name}"`);
  }
  return s;
}

/** One joi description -> JSON Schema; anything it cannot express exactly throws. */
export function describeToSchema(d: Description): JsonSchema {
  let s: JsonSchema;
  if (d.flags?.only) {
    s = { enum: (d.allow ?? []).filter((v) => typeof v !== 'object') };
    if (d.type === 'string') s.type = 'string';
  } else if (d.type === 'string') s = stringSchema(d);
  else if (d.type === 'number') s = numberSchema(d);
  else if (d.type === 'boolean') s = { type: 'boolean' };
  else if (d.type === 'object') s = objectSchema(d);
  else if (d.type === 'alternatives') s = alternativesSchema(d);
  else if (d.type === 'array') s = arraySchema(d);
  else return unsupported(`the joi type "${d.type}"`);
  if (d.flags?.default !== undefined) s.default = d.flags.default;
  // `.description(text)`: the field's meaning, ahead of what a rule says of it.
  if (d.flags?.description)
    s.description = s.description ? `${d.flags.description} ${String(s.description)}` : d.flags.description;
  return s;
}

export function joiToJsonSchema(schema: Joi.Schema): JsonSchema {
  return describeToSchema(schema.describe() as unknown as Description);
}
