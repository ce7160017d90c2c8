/**
 * Scheduled sends: `sendAt` on POST /send, an ISO 8601 date and time with an explicit offset
 * (`Z` or `±hh:mm`), at most 30 days ahead. A time in the past is sent now.
 */

/** How far ahead a message may be scheduled. */
export const SEND_AT_MAX_AHEAD_MS = 30 * 24 * 3600 * 1000;

/** How the schemas name the `sendAt` rule (its `custom` rule's description; see the OpenAPI document). */
export const SEND_AT_RULE = 'ISO 8601 date-time with offset, at most 30 days ahead';

const ISO_WITH_OFFSET =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/;

/**
 * The instant `value` names (epoch ms), or why it is refused: `format` (not ISO 8601 with an
 * explicit offset, or no such date: 2026-02-30) or `tooFar` (more than 30 days after `now`).
 */
export function parseSendAt(value: string, now = Date.now()): number | 'format' | 'tooFar' {
  const m = ISO_WITH_OFFSET.exec(value);
  if (!m) return 'format';
  const [, y, mo, d, h, mi, s, , oh, om] = m;
  const month = Number(mo);
  const day = Number(d);
  const daysInMonth = new Date(Date.UTC(Number(y), month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return 'format';
  if (Number(h) > 23 || Number(mi) > 59 || Number(s ?? 0) > 59) return 'format';
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return 'format';
  const at = Date.parse(value);
  if (Number.isNaN(at)) return 'format';
  return at - now > SEND_AT_MAX_AHEAD_MS ? 'tooFar' : at;
}
