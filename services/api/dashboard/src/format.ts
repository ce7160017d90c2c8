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

/** `15551234567` -> `+15551234567` (numbers are stored without the plus). */
/** A phone number as `+<digits>`; a LID (`<digits>@lid`, a contact hiding its number) as it is. */
export function phone(p: string | undefined): string {
  return p ? (p.endsWith('@lid') ? p : `+${p}`) : '';
}

export function initials(name: string | undefined, fallback: string): string {
  const words = (name ?? fallback)
    .trim()
    .split(/[\s_-]+/)
    .filter(Boolean);
  return (words.length > 1 ? words[0]![0]! + words[1]![0]! : (words[0] ?? '?').slice(0, 2)).toUpperCase();
}
