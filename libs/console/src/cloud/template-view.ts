/**
 * How a Cloud API number's templates read on the Templates tab (cloud-templates.tsx), without a
 * browser: Meta's statuses, categories and button types in words, the placeholders of a text
 * picked out, the parameters a template takes, and the tab's filter.
 */
import type { CloudTemplate } from '../kit/api';

/** A badge's band: the colour of the connection statuses it borrows (kit/styles.css). */
export type Band = 'connected' | 'connecting' | 'failed' | '';

/** An upper-case word of Meta's (`IN_APPEAL`) as words: `In appeal`. */
function spoken(word: string): string {
  const lower = word.toLowerCase().replace(/_/g, ' ');
  return lower.charAt(0).toUpperCase() + lower.slice(1);
}

/** A template's status in words, and its badge's band: approved green, waiting or paused amber, refused red. */
export function templateStatusOf(status: string): { words: string; band: Band } {
  switch (status) {
    case 'APPROVED':
      return { words: 'Approved', band: 'connected' };
    case 'PENDING':
      return { words: 'Pending review', band: 'connecting' };
    case 'IN_APPEAL':
    case 'PAUSED':
      return { words: spoken(status), band: 'connecting' };
    case 'REJECTED':
    case 'DISABLED':
      return { words: spoken(status), band: 'failed' };
    default:
      return { words: spoken(status), band: '' };
  }
}

/** What a status means for /send, for the badge's title. */
export function templateStatusHint(status: string): string {
  switch (status) {
    case 'APPROVED':
      return 'Approved by Meta: it can be sent.';
    case 'PAUSED':
      return 'Paused by Meta for low quality: it cannot be sent until it is active again.';
    case 'PENDING':
    case 'IN_APPEAL':
      return 'Not approved yet: it cannot be sent until Meta approves it.';
    default:
      return 'Not approved: it cannot be sent.';
  }
}

/** Meta's category in words (`Utility`). */
export const categoryWords = (category: string): string => (category ? spoken(category) : '—');

const BUTTON_WORDS: Record<string, string> = {
  QUICK_REPLY: 'Quick reply',
  URL: 'Link',
  PHONE_NUMBER: 'Call',
  OTP: 'Code',
  COPY_CODE: 'Copy code',
  FLOW: 'Flow',
  CATALOG: 'Catalogue',
  MPM: 'Products',
  VOICE_CALL: 'WhatsApp call',
};

/** A button's kind in words (`Quick reply`); an OTP button by its own kind (`Copy code`). */
export function buttonKind(b: { type: string; otpType?: string }): string {
  if (b.type === 'OTP' && b.otpType) return `Code (${spoken(b.otpType).toLowerCase()})`;
  return BUTTON_WORDS[b.type] ?? spoken(b.type);
}

/** A header that is no text, in words: `Image`, `Document`. */
export const mediaWords = (format: string): string => spoken(format);

const PLACEHOLDER = /\{\{\s*[A-Za-z0-9_]+\s*\}\}/g;

/** A text cut into its plain runs and its placeholders (`{{1}}`, `{{first_name}}`), in order. */
export function placeholderParts(text: string): { text: string; placeholder: boolean }[] {
  const parts: { text: string; placeholder: boolean }[] = [];
  let at = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (m.index > at) parts.push({ text: text.slice(at, m.index), placeholder: false });
    parts.push({ text: m[0], placeholder: true });
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push({ text: text.slice(at), placeholder: false });
  return parts;
}

/** The parameters /send gives a template, in words: `body 2, button 1: 1`; `none` when it takes none. */
export function parameterWords(p: CloudTemplate['parameters']): string {
  const words: string[] = [];
  if (p.header) words.push(`header ${p.header}`);
  if (p.body) words.push(`body ${p.body}`);
  for (const [index, count] of Object.entries(p.buttons ?? {}))
    if (count) words.push(`button ${index}: ${count}`);
  return words.length > 0 ? words.join(', ') : 'none';
}

/** Whether a template is one the filter keeps: its name holds `name` (any case), its status is `status`. */
export function templateMatches(t: CloudTemplate, name: string, status: string): boolean {
  const q = name.trim().toLowerCase();
  return (q === '' || t.name.toLowerCase().includes(q)) && (status === '' || t.status === status);
}

/** The statuses the list has, approved first, then by name: the status filter's choices. */
export function statusesOf(templates: CloudTemplate[]): string[] {
  return [...new Set(templates.map((t) => t.status))].sort((a, b) =>
    a === 'APPROVED' ? -1 : b === 'APPROVED' ? 1 : a.localeCompare(b),
  );
}
