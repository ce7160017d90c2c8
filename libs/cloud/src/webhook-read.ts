/**
 * Reading Meta's webhook JSON defensively (webhook.ts, webhook-messages.ts): every string bounded
 * and well-formed, every list cut, ids of their own shape; nothing here throws.
 */
/** An error of a `failed` status (or of an unsupported inbound message). */
export interface WebhookError {
  code: number;
  title: string;
  details?: string;
}

/** Bounds of what one delivery may make the gateway read (Meta batches up to a few hundred). */
export const WEBHOOK_LIMITS = {
  entries: 100,
  changesPerEntry: 100,
  itemsPerChange: 1000,
  errorsPerItem: 10,
  contactCards: 20,
  phonesPerCard: 20,
  /** A wamid is `wamid.` and base64 of a few dozen bytes. */
  wamid: 256,
  /** `biz_opaque_callback_data`: Meta caps it at 512 characters. */
  callbackData: 512,
  text: 4096,
  caption: 1024,
  name: 256,
  title: 300,
  details: 1000,
  small: 128,
} as const;

export type Obj = Record<string, unknown>;
export const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const list = (v: unknown, max: number): unknown[] => (Array.isArray(v) ? v.slice(0, max) : []);

/** Whether the string is well-formed UTF-16 (no lone surrogate, which no JSON writer of Meta's sends). */
const wellFormed = (s: string): boolean =>
  !/[\uD800-\uDFFF]/.test(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''));

/** A string of at most `max` characters (longer, empty or ill-formed: undefined). */
export function str(v: unknown, max: number): string | undefined {
  if (typeof v !== 'string' || v === '' || v.length > max || !wellFormed(v)) return undefined;
  return v;
}
/** A string cut to `max` characters (text a person wrote: kept, bounded). */
export function cut(v: unknown, max: number): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  if (!wellFormed(v)) return undefined;
  // A cut through a surrogate pair would leave its first half alone: it goes too.
  return v.length <= max ? v : v.slice(0, /[\uD800-\uDBFF]/.test(v[max - 1]!) ? max - 1 : max);
}
const DIGITS = /^[0-9]{1,32}$/;
export const digits = (v: unknown): string | undefined =>
  typeof v === 'string' && DIGITS.test(v) ? v : undefined;
const WAMID = /^[\x21-\x7e]+$/;
export const wamid = (v: unknown): string | undefined => {
  const s = str(v, WEBHOOK_LIMITS.wamid);
  return s && WAMID.test(s) ? s : undefined;
};
/** Meta's timestamps are Unix seconds as a string of digits. */
export function timestampMs(v: unknown): number | undefined {
  const s = typeof v === 'number' ? String(v) : v;
  if (typeof s !== 'string' || !/^[0-9]{1,12}$/.test(s)) return undefined;
  return Number(s) * 1000;
}
export const finite = (v: unknown, min: number, max: number): number | undefined => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n >= min && n <= max ? n : undefined;
};

export function errorsOf(v: unknown): WebhookError[] | undefined {
  const out: WebhookError[] = [];
  for (const e of list(v, WEBHOOK_LIMITS.errorsPerItem)) {
    if (!isObject(e)) continue;
    const code = typeof e.code === 'number' && Number.isInteger(e.code) && e.code >= 0 ? e.code : undefined;
    if (code === undefined) continue;
    const data = isObject(e.error_data) ? e.error_data : {};
    const details = cut(data.details, WEBHOOK_LIMITS.details);
    out.push({
      code,
      title: cut(e.title, WEBHOOK_LIMITS.title) ?? cut(e.message, WEBHOOK_LIMITS.title) ?? '',
      ...(details !== undefined ? { details } : {}),
    });
  }
  return out.length ? out : undefined;
}
