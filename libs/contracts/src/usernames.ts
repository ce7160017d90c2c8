/**
 * WhatsApp usernames (`@alice.shop`, 2026): a contact may be reached by a username, optionally
 * guarded by a 4-digit PIN (the "username key"), with its phone number hidden. What the services
 * agree on: WhatsApp's own rules for a username and a PIN, the body of POST /contacts/username, its
 * answer, the device command that asks WhatsApp, and the errors. See docs/usernames.md.
 *
 * The rules are WhatsApp Web's (`WAWebUsernameConstants`, `WAWebUsernameValidationUtils`) as
 * wppconnect's wa-js mirrors them (`src/util/username.ts`, PR #3574) and zapo does
 * (`src/protocol/username.ts`), checked in the same order, so a malformed username is told apart
 * from one that does not exist (WhatsApp answers both alike). whatsmeow (33cfac51, `user.go`)
 * asks the usync `username` protocol but has no username lookup and no rules of its own.
 */
import { Joi } from './text.js';
import type { ContactIdentity } from './contact.js';

export const USERNAME_LIMITS = {
  /** `USERNAME_MIN_LENGTH` and `USERNAME_MAX_LENGTH` of WhatsApp Web (AB props `username_min_length`, `username_max_length`). */
  minLength: 3,
  maxLength: 35,
  /** The username key (PIN): `USERNAME_KEY_LENGTH`, digits only. */
  pinLength: 4,
} as const;

/** Endings that make a username look like a domain or a file (WhatsApp Web's list). */
export const USERNAME_DOMAIN_SUFFIXES = [
  '.com',
  '.org',
  '.net',
  '.int',
  '.edu',
  '.gov',
  '.mil',
  '.arpa',
  '.html',
  '.htm',
  '.txt',
  '.xml',
] as const;

/** Words a username may not contain anywhere (WhatsApp Web's list: Meta's own brands). */
export const USERNAME_RESERVED_WORDS = ['whatsapp', 'instagram', 'facebook', 'oculus'] as const;

/** Which of WhatsApp's rules a username breaks, in the order WhatsApp Web checks them. */
export const USERNAME_RULES = [
  'invalid_character',
  'invalid_length',
  'no_letter',
  'invalid_periods',
  'www_prefix',
  'domain_suffix',
  'reserved_word',
] as const;
export type UsernameRule = (typeof USERNAME_RULES)[number];

/**
 * What each rule says, after the field's name (a 400's detail ends with `(rule: <rule>)`); no double
 * quotes: the API's details drop them.
 */
export const USERNAME_RULE_MESSAGES: Record<UsernameRule, string> = {
  invalid_character: 'may hold only letters a-z, digits, _ and . (after an optional leading @)',
  invalid_length: `must be ${USERNAME_LIMITS.minLength} to ${USERNAME_LIMITS.maxLength} characters long`,
  no_letter: 'must hold at least one letter',
  invalid_periods: 'may not start or end with a period nor hold two in a row',
  www_prefix: 'may not start with www.',
  domain_suffix: `may not end like a domain (${USERNAME_DOMAIN_SUFFIXES.join(', ')})`,
  reserved_word: `may not contain ${USERNAME_RESERVED_WORDS.join(', ')}`,
};

export type UsernameCheck =
  { ok: true; username: string } | { ok: false; rule: UsernameRule; message: string };

const LETTER = /[A-Za-z]/;
const ALLOWED = /^[A-Za-z0-9_.]*$/;

/**
 * A username by WhatsApp's rules: one leading `@` is dropped (how a username is written; WhatsApp
 * Web drops it too), then the first rule it breaks, or the username in lower case. **Choice:**
 * lower case, because WhatsApp's usernames are lower case only (its apps turn what one types into
 * lower case; WhatsApp Web's rules accept A-Z in what is typed): `@Alice.Shop` and `@alice.shop`
 * are one username, asked of WhatsApp and remembered as `alice.shop`.
 */
export function checkUsername(input: string): UsernameCheck {
  const value = input.startsWith('@') ? input.slice(1) : input;
  const refuse = (rule: UsernameRule): UsernameCheck => ({
    ok: false,
    rule,
    message: USERNAME_RULE_MESSAGES[rule],
  });
  if (!ALLOWED.test(value)) return refuse('invalid_character');
  if (value.length < USERNAME_LIMITS.minLength || value.length > USERNAME_LIMITS.maxLength)
    return refuse('invalid_length');
  if (!LETTER.test(value)) return refuse('no_letter');
  if (value.startsWith('.') || value.endsWith('.') || value.includes('..')) return refuse('invalid_periods');
  const lower = value.toLowerCase();
  if (lower.startsWith('www.')) return refuse('www_prefix');
  if (USERNAME_DOMAIN_SUFFIXES.some((s) => lower.endsWith(s))) return refuse('domain_suffix');
  if (USERNAME_RESERVED_WORDS.some((w) => lower.includes(w))) return refuse('reserved_word');
  return { ok: true, username: lower };
}

/** WhatsApp's username key: exactly 4 digits (`USERNAME_KEY_LENGTH`). */
export const USERNAME_PIN_PATTERN = /^\d{4}$/;

export function isUsernamePin(value: string): boolean {
  return USERNAME_PIN_PATTERN.test(value);
}

/** A `to` that names a username (`@alice.shop`): whether it is a valid one is `checkUsername`'s. */
export function isUsernameAddress(to: string): boolean {
  return to.startsWith('@');
}

/** The username of a valid `@name` address (lower case, without `@`); undefined for anything else. */
export function usernameOfAddress(to: string): string | undefined {
  if (!isUsernameAddress(to)) return undefined;
  const checked = checkUsername(to);
  return checked.ok ? checked.username : undefined;
}

/** The rule a 400's detail gives for a username that breaks one. */
export const usernameRuleDetail = (label: string, check: Extract<UsernameCheck, { ok: false }>) =>
  `${label} is not a WhatsApp username: it ${check.message} (rule: ${check.rule})`;

/** The `custom` rules' descriptions: the OpenAPI document states them (openapi/joi-schema.ts). */
export const USERNAME_RULE = "WhatsApp's username rules";
export const USERNAME_ADDRESS_RULE = "a WhatsApp username, @ first (WhatsApp's username rules)";

/** The rules as the OpenAPI document says them. */
export const USERNAME_RULES_IN_WORDS =
  "A WhatsApp username by WhatsApp's rules (docs/usernames.md): 3 to 35 of a-z, 0-9, _ and . (capitals are taken as lower case), at least one letter, no period first, last or twice in a row, not www. first, no domain ending (.com, .org, .net, …), none of whatsapp, instagram, facebook, oculus; a 400 names the rule it breaks.";

/** joi's own length errors (empty, far too long) said as the rule they break. */
function lengthMessages(): Record<string, string> {
  const rule = usernameRuleDetail('{{#label}}', {
    ok: false,
    rule: 'invalid_length',
    message: USERNAME_RULE_MESSAGES.invalid_length,
  });
  return { 'string.empty': rule, 'string.max': rule };
}

/**
 * A username field: WhatsApp's rules, the value made `alice.shop` (no `@`, lower case). Bounded
 * before the rules read it (a 64-character cap: any longer breaks `invalid_length` anyway).
 */
export const usernameSchema = Joi.string()
  .max(64)
  .custom((value: string, helpers) => {
    const checked = checkUsername(value);
    if (checked.ok) return checked.username;
    return helpers.message({ custom: usernameRuleDetail('{{#label}}', checked) });
  }, USERNAME_RULE)
  .messages(lengthMessages());

/**
 * A `to` entry naming a username: the same rules, the value kept as `@alice.shop` (the `@` tells it
 * from a number). A list naming one username twice, in any case, is refused as a list naming a
 * number twice is (the comparison sees the lower-case value).
 */
export const usernameAddressSchema = Joi.string()
  .max(65)
  .custom((value: string, helpers) => {
    const checked = checkUsername(value);
    if (checked.ok) return `@${checked.username}`;
    return helpers.message({ custom: usernameRuleDetail('{{#label}}', checked) });
  }, USERNAME_ADDRESS_RULE)
  .messages(lengthMessages());

export interface UsernameResolveBody {
  username: string;
  pin?: string;
}

/** POST /contacts/username: the username (with or without `@`) and, for one guarded by a key, its PIN. */
export const usernameResolveBodySchema = Joi.object<UsernameResolveBody>({
  username: usernameSchema.required(),
  pin: Joi.string()
    .max(16)
    .pattern(USERNAME_PIN_PATTERN)
    .messages({ 'string.pattern.base': '{{#label}} must be the username key: exactly 4 digits' }),
});

/** What WhatsApp answered a username lookup. */
export const USERNAME_STATUSES = ['found', 'pin_required', 'not_found'] as const;
export type UsernameStatus = (typeof USERNAME_STATUSES)[number];

/**
 * One lookup's answer, as the holder gives it: `found` with the contact's LID (`<digits>@lid`)
 * and its phone when WhatsApp tells it; `pin_required` when the username is guarded by a key and
 * none (or a wrong one) was given; `not_found` when no account has it.
 */
export interface UsernameLookup {
  username: string;
  status: UsernameStatus;
  lid?: string;
  phone?: string;
}

/** POST /contacts/username's `data`: the username, what WhatsApp said, and the contact when found. */
export interface UsernameResolution {
  username: string;
  status: UsernameStatus;
  /** Present when found: its LID (usable as `to`), its phone when WhatsApp tells it, the username. */
  contact?: ContactIdentity;
}

/** The account command that looks usernames up (one usync query each, in order, by the holder). */
export interface UsernameLookupCommand {
  type: 'account-usernames-resolve';
  deviceId: string;
  requestId: string;
  /** Each username (lower case, no `@`) and its PIN when given. The PIN is never logged nor kept. */
  lookups: { username: string; pin?: string }[];
}

/** Its answer (DeviceCommandReply.data): one lookup per username asked, in order. */
export interface UsernameLookupResult {
  usernames: UsernameLookup[];
}

/** The most usernames one /send may name that the device has not resolved yet (each is one lookup). */
export const MAX_SEND_USERNAME_LOOKUPS = 10;

/** The usernames' errors clients see. */
export const USERNAME_ERRORS = {
  /** 502 on POST /contacts/username (and /send naming a username the device has not resolved). */
  lookupFailed: 'The WhatsApp username lookup failed; try again shortly',
  /** 504: the holder did not answer in time. */
  lookupTimeout: 'The WhatsApp username lookup did not finish in time; try again shortly',
  /** 413 on POST /contacts/username. */
  bodyTooLarge: 'Request body too large: a username lookup is limited to 4 KB',
  /** 422 on /send: a username no account has. */
  notFound: 'Username not found: no WhatsApp account has it',
  /** 422 on /send: a username guarded by a key, never resolved with its PIN on this device. */
  pinRequired: 'The username is guarded by a PIN: resolve it with its PIN first (POST /contacts/username)',
  /** 400 detail on /send through a pool token. */
  throughPool:
    'a username is resolved by one device: send to it with a device token (or resolve it and send to its LID)',
  /** 400 detail on /send naming more unresolved usernames than MAX_SEND_USERNAME_LOOKUPS. */
  tooManyUnresolved: `names more than ${MAX_SEND_USERNAME_LOOKUPS} usernames this device has not resolved: resolve them first with POST /contacts/username`,
} as const;
