/**
 * A device's opt-out settings: which whole messages put a contact on the suppression list or take
 * it off, and the confirmation it gets. Stored with the device's other settings
 * (`keys.deviceSettings`, as the policy overrides: only what an operator changed), read by the
 * sender for every inbound text and shown and changed through the admin API.
 */
import type { RedisClient } from '@mgw/common';
import { Joi, keys } from '@mgw/contracts';

export type OptOutLanguage = 'en' | 'ar';

export interface OptOutSettings {
  /** Whole messages that opt a contact out (matched after `normalizeKeyword`). */
  optOutKeywords: string[];
  /** Whole messages that take it off the list again. */
  optInKeywords: string[];
  /** Whether the contact gets a confirmation message. */
  confirmation: boolean;
  optOutTextEn: string;
  optOutTextAr: string;
  optInTextEn: string;
  optInTextAr: string;
}

export const OPT_OUT_DEFAULTS: OptOutSettings = {
  optOutKeywords: ['STOP', 'UNSUBSCRIBE', 'إلغاء', 'توقف'],
  optInKeywords: ['START', 'ابدأ'],
  confirmation: true,
  optOutTextEn: 'You are unsubscribed and will get no more messages from us. Reply START to subscribe again.',
  optOutTextAr: 'تم إلغاء اشتراكك ولن تصلك رسائل أخرى منا. أرسل ابدأ لإعادة الاشتراك.',
  optInTextEn: 'You are subscribed again. Reply STOP to unsubscribe.',
  optInTextAr: 'تمت إعادة اشتراكك. أرسل توقف لإلغاء الاشتراك.',
};

/** The fields, in the order the admin API shows them. */
export const OPT_OUT_FIELDS = Object.keys(OPT_OUT_DEFAULTS) as (keyof OptOutSettings)[];
const LIST_FIELDS = new Set<keyof OptOutSettings>(['optOutKeywords', 'optInKeywords']);

/** The stored field of a setting in the device's settings hash (beside the policy's). */
const stored = (field: keyof OptOutSettings) => `optOut.${field}`;

const ARABIC = /\p{Script=Arabic}/u;
/** Arabic marks that do not change a word (harakat, superscript alef, tatweel). */
const ARABIC_MARKS = /[\u064B-\u065F\u0670\u0640]/g;
/** Alef with hamza or madda, as people type it either way (إلغاء / الغاء). */
const ALEF_FORMS = /[\u0622\u0623\u0625]/g;

/**
 * A message as keywords are compared: Unicode-normalised (NFKC), trimmed, inner whitespace
 * collapsed, case folded (upper then lower, so ß and SS match), Arabic marks dropped and alef
 * forms unified.
 */
export function normalizeKeyword(text: string): string {
  return text
    .normalize('NFKC')
    .trim()
    .replace(/\s+/gu, ' ')
    .toUpperCase()
    .toLowerCase()
    .replace(ARABIC_MARKS, '')
    .replace(ALEF_FORMS, '\u0627');
}

/** What a whole message asks for, and in which language to confirm it (that of the keyword). */
export interface KeywordMatch {
  direction: 'out' | 'in';
  language: OptOutLanguage;
}

export function matchKeyword(settings: OptOutSettings, text: string): KeywordMatch | undefined {
  const said = normalizeKeyword(text);
  if (!said || said.length > 64) return undefined;
  const language: OptOutLanguage = ARABIC.test(said) ? 'ar' : 'en';
  if (settings.optOutKeywords.some((k) => normalizeKeyword(k) === said))
    return { direction: 'out', language };
  if (settings.optInKeywords.some((k) => normalizeKeyword(k) === said)) return { direction: 'in', language };
  return undefined;
}

/** The confirmation text for a match. */
export function confirmationText(settings: OptOutSettings, match: KeywordMatch): string {
  if (match.direction === 'out')
    return match.language === 'ar' ? settings.optOutTextAr : settings.optOutTextEn;
  return match.language === 'ar' ? settings.optInTextAr : settings.optInTextEn;
}

const keywordList = Joi.array()
  .items(
    Joi.string()
      .min(1)
      .max(40)
      .custom((v: string, h) => (normalizeKeyword(v) ? v : h.error('any.invalid')))
      .messages({ 'any.invalid': '{{#label}} must hold more than white space' }),
  )
  .max(20)
  // joi compares the entries as they came (a null or a number too): only strings can be the same keyword.
  .unique(
    (a: unknown, b: unknown) =>
      typeof a === 'string' && typeof b === 'string' && normalizeKeyword(a) === normalizeKeyword(b),
  );
const text = Joi.string().trim().min(1).max(1000);

/**
 * A change of the opt-out settings as the admin API takes it: a field set to null goes back to
 * its default. A keyword may not both opt out and opt in.
 */
export const optOutSettingsSchema = Joi.object({
  optOutKeywords: keywordList.allow(null),
  optInKeywords: keywordList.allow(null),
  confirmation: Joi.boolean().allow(null),
  optOutTextEn: text.allow(null),
  optOutTextAr: text.allow(null),
  optInTextEn: text.allow(null),
  optInTextAr: text.allow(null),
}).min(1);

export type OptOutSettingsChange = { [K in keyof OptOutSettings]?: OptOutSettings[K] | null };

/** The settings in force for the device, and which of them the operator changed. */
export async function readOptOutSettings(
  redis: RedisClient,
  deviceId: string,
): Promise<{ settings: OptOutSettings; overrides: Partial<OptOutSettings> }> {
  const raw = await redis.hmget(keys.deviceSettings(deviceId), ...OPT_OUT_FIELDS.map(stored));
  const overrides: Record<string, unknown> = {};
  OPT_OUT_FIELDS.forEach((field, i) => {
    const v = raw[i];
    if (v === null || v === undefined) return;
    if (LIST_FIELDS.has(field)) overrides[field] = JSON.parse(v) as string[];
    else if (field === 'confirmation') overrides[field] = v === '1';
    else overrides[field] = v;
  });
  return {
    settings: { ...OPT_OUT_DEFAULTS, ...(overrides as Partial<OptOutSettings>) },
    overrides: overrides as Partial<OptOutSettings>,
  };
}

/**
 * Stores a validated change (see `optOutSettingsSchema`). Answers the field names of keywords that
 * would both opt out and opt in once applied (nothing is written then).
 */
export async function writeOptOutSettings(
  redis: RedisClient,
  deviceId: string,
  change: OptOutSettingsChange,
): Promise<string[]> {
  const { settings } = await readOptOutSettings(redis, deviceId);
  const next = { ...settings };
  for (const field of OPT_OUT_FIELDS) {
    const v = change[field];
    if (v !== undefined) (next as Record<string, unknown>)[field] = v ?? OPT_OUT_DEFAULTS[field];
  }
  const outs = new Set(next.optOutKeywords.map(normalizeKeyword));
  const clashes = next.optInKeywords.filter((k) => outs.has(normalizeKeyword(k)));
  if (clashes.length) return clashes;
  const key = keys.deviceSettings(deviceId);
  const tx = redis.multi();
  for (const field of OPT_OUT_FIELDS) {
    const v = change[field];
    if (v === undefined) continue;
    if (v === null) tx.hdel(key, stored(field));
    else if (Array.isArray(v)) tx.hset(key, stored(field), JSON.stringify(v));
    else if (typeof v === 'boolean') tx.hset(key, stored(field), v ? '1' : '0');
    else tx.hset(key, stored(field), v);
  }
  await tx.exec();
  return [];
}
