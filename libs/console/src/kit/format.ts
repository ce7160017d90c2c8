/**
 * A table's own entry for a key the gateway sent (a reason, a code), or undefined: never one the
 * object inherits (`constructor`, `toString`), which an unknown key would otherwise find.
 */
export function ownEntry<T>(table: Readonly<Record<string, T>>, key: string | undefined): T | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

/** Dates as people read them: "3 min ago", with the exact time in the title. */
export function ago(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(s)) return '—';
  if (s < 0) return inFuture(-s);
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

function inFuture(s: number): string {
  if (s < 3600) return `in ${Math.max(1, Math.round(s / 60))} min`;
  if (s < 86_400) return `in ${Math.round(s / 3600)} h`;
  return `in ${Math.round(s / 86_400)} d`;
}

export function exact(iso: string | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '';
}

export function shortDate(iso: string | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

/** `15551234567` (numbers are stored without the plus, a JID may end `@s.whatsapp.net`) -> `+15551234567`. */
export function phone(p: string | undefined): string {
  if (!p) return '';
  const digits = /^(\d+)(@s\.whatsapp\.net)?$/.exec(p)?.[1];
  // Anything else (a LID, a group…) is no number: it keeps its own spelling, never a "+".
  return digits ? `+${digits}` : p;
}

/**
 * What a WhatsApp chat id names: a person by number (`<digits>`) or by LID (`<digits>@lid`, a
 * contact hiding its number), a group (`…@g.us`), a channel (`…@newsletter`), or the account's
 * status updates (`status@broadcast`, where POST /statuses sends: never a conversation).
 */
export type IdKind = 'phone' | 'lid' | 'group' | 'channel' | 'status';

export function idKind(id: string): IdKind {
  if (id === 'status@broadcast') return 'status';
  if (id.endsWith('@newsletter')) return 'channel';
  if (id.endsWith('@g.us')) return 'group';
  if (id.endsWith('@lid')) return 'lid';
  return 'phone';
}

/** How the pages name an id: `tag` ("Group", "Channel") before `name`; `title`, the whole id, on hover. */
export interface IdName {
  kind: IdKind;
  tag?: string;
  name: string;
  title?: string;
}

/**
 * The one way every page names an id, with what its record knows besides: a group's subject or a
 * channel's name (`name`), a LID's number (`phone`). Long ids are shown whole and cut by CSS
 * (`.id-text`), the whole id in the title.
 */
export function nameOf(id: string, known: { name?: string; phone?: string } = {}): IdName {
  const kind = idKind(id);
  switch (kind) {
    case 'status':
      return { kind, name: 'Status', title: id };
    case 'channel':
      return { kind, tag: 'Channel', name: known.name || id, title: id };
    case 'group':
      return { kind, tag: 'Group', name: known.name || id, title: id };
    case 'lid':
      return { kind, name: known.phone ? phone(known.phone) : id, title: id };
    case 'phone':
      return { kind, name: phone(id) };
  }
}

export function initials(name: string | undefined, fallback: string): string {
  const words = (name ?? fallback)
    .trim()
    .split(/[\s_-]+/)
    .filter(Boolean);
  return (words.length > 1 ? words[0]![0]! + words[1]![0]! : (words[0] ?? '?').slice(0, 2)).toUpperCase();
}
