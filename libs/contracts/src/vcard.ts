/**
 * vCards (3.0) of the contact cards a message carries: built from validated fields with every
 * special character escaped, so no value can end its line or add a property; read back leniently
 * (what a phone sends) into the same fields, bounded.
 */

/** A contact card of `POST /send` `contacts` (and of an inbound card, read from its vCard). */
export interface ContactCard {
  name: string;
  /** International numbers, digits only (as `to`). */
  phones: string[];
  email?: string;
  organization?: string;
}

/** Escapes a text value (RFC 6350 §3.4): backslash, comma, semicolon, and any line break. */
export function escapeVCardText(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/,/g, '\\,')
    .replace(/;/g, '\\;')
    .replace(/\r\n|\r|\n/g, '\\n')
    .replace(/\p{Cc}/gu, '');
}

/** The vCard WhatsApp shows for a card: `FN`, one `TEL` per number (with its `waid`), EMAIL, ORG. */
export function buildVCard(card: ContactCard): string {
  const lines = ['BEGIN:VCARD', 'VERSION:3.0', `FN:${escapeVCardText(card.name)}`];
  for (const phone of card.phones) {
    const digits = phone.replace(/\D/g, '');
    lines.push(`TEL;type=CELL;type=VOICE;waid=${digits}:+${digits}`);
  }
  if (card.email !== undefined) lines.push(`EMAIL;type=INTERNET:${escapeVCardText(card.email)}`);
  if (card.organization !== undefined) lines.push(`ORG:${escapeVCardText(card.organization)}`);
  lines.push('END:VCARD');
  return lines.join('\n');
}

/** Limits of reading a vCard someone else wrote. */
const READ_LIMITS = { chars: 16_384, phones: 20, value: 512 } as const;

/** The components of a structured value (`N`, `ORG`): split on `;` not escaped. */
function components(value: string): string[] {
  return value.split(/(?<!\\);/).filter(Boolean);
}

function unescapeVCardText(value: string): string {
  return value.replace(/\\([\\,;nN])/g, (_m, c: string) => (c === 'n' || c === 'N' ? '\n' : c));
}

/**
 * The fields of a vCard (3.0 or 4.0, folded lines unfolded): `FN` (or `N`), each `TEL` (its
 * `waid` when given, else its digits), the first `EMAIL` and `ORG`. Undefined when it has no
 * name and no number; oversized input is cut, never parsed whole.
 */
export function parseVCard(vcard: string): ContactCard | undefined {
  const text = vcard.slice(0, READ_LIMITS.chars).replace(/\r?\n[ \t]/g, '');
  let name: string | undefined;
  let structured: string | undefined;
  const phones: string[] = [];
  let email: string | undefined;
  let organization: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const head = line.slice(0, colon);
    const value = line.slice(colon + 1).slice(0, READ_LIMITS.value);
    const prop = (head.split(';')[0] ?? '').replace(/^item\d+\./i, '').toUpperCase();
    if (prop === 'FN') name ??= unescapeVCardText(value).trim();
    else if (prop === 'N') structured ??= components(value).reverse().map(unescapeVCardText).join(' ');
    else if (prop === 'TEL' && phones.length < READ_LIMITS.phones) {
      const waid = /waid=(\d+)/i.exec(head)?.[1];
      const digits = waid ?? value.replace(/\D/g, '');
      if (digits) phones.push(digits);
    } else if (prop === 'EMAIL') email ??= unescapeVCardText(value).trim();
    else if (prop === 'ORG') organization ??= unescapeVCardText(components(value)[0] ?? '').trim();
  }
  const fullName = name || structured?.trim() || '';
  if (!fullName && phones.length === 0) return undefined;
  return {
    name: fullName,
    phones,
    ...(email ? { email } : {}),
    ...(organization ? { organization } : {}),
  };
}
