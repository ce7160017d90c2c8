import type { QuotaName, Quotas } from '../kit/api';

/**
 * A workspace's quotas as the console shows and edits them (docs/workspaces.md "Quotas"): an
 * empty field is no limit. Media is typed in MB (1 MB = 1,000,000 bytes) and sent in bytes.
 */
export const QUOTAS: { name: QuotaName; label: string; unit?: 'MB'; hint: string }[] = [
  { name: 'devices', label: 'Devices', hint: 'devices it owns' },
  { name: 'messagesPerDay', label: 'Messages per day', hint: 'accepted per UTC day' },
  { name: 'queuedMessages', label: 'Messages queued', hint: 'accepted, not yet sent' },
  { name: 'mediaBytes', label: 'Media stored (MB)', unit: 'MB', hint: 'uploads and inbound media kept' },
];

const MB = 1_000_000;

/** The fields' text of a workspace's quotas (empty: no limit). */
export function quotaText(quotas: Quotas): Record<QuotaName, string> {
  const out = {} as Record<QuotaName, string>;
  for (const q of QUOTAS) {
    const v = quotas[q.name];
    out[q.name] = v === undefined ? '' : String(q.unit === 'MB' ? v / MB : v);
  }
  return out;
}

/**
 * The quotas typed, for the API: a number per filled field; an empty one absent (`create`) or
 * `null` (an edit: no limit any more). A field that is no whole number is named in `invalid`.
 */
export function quotasOf(
  text: Record<QuotaName, string>,
  emptyAs: 'absent' | 'null',
): { quotas: Record<string, number | null>; invalid: QuotaName[] } {
  const quotas: Record<string, number | null> = {};
  const invalid: QuotaName[] = [];
  for (const q of QUOTAS) {
    const raw = text[q.name].trim();
    if (raw === '') {
      if (emptyAs === 'null') quotas[q.name] = null;
      continue;
    }
    const n = Number(raw);
    const value = q.unit === 'MB' ? Math.round(n * MB) : n;
    if (!Number.isFinite(n) || n < 0 || !Number.isInteger(value)) invalid.push(q.name);
    else quotas[q.name] = value;
  }
  return { quotas, invalid };
}

/** A quota's limit as read: "5,000", "20 MB", or "no limit". */
export function limitText(name: QuotaName, quotas: Quotas): string {
  const v = quotas[name];
  if (v === undefined) return 'no limit';
  return name === 'mediaBytes' ? bytes(v) : v.toLocaleString('en');
}

/** Bytes as people read them: "512 B", "3.4 MB". */
export function bytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < MB) return `${(n / 1000).toFixed(1)} kB`;
  if (n < 1000 * MB) return `${(n / MB).toFixed(1)} MB`;
  return `${(n / (1000 * MB)).toFixed(2)} GB`;
}

/** The quota fields of a workspace's form: one number field each, empty for no limit. */
export function QuotaFields(props: {
  prefix: string;
  text: Record<QuotaName, string>;
  invalid: QuotaName[];
  onChange: (name: QuotaName, value: string) => void;
}) {
  return (
    <fieldset class="quota-fields">
      <legend>Quotas (empty: no limit)</legend>
      {QUOTAS.map((q) => (
        <div key={q.name}>
          <label for={`${props.prefix}-${q.name}`}>{q.label}</label>
          <input
            id={`${props.prefix}-${q.name}`}
            type="number"
            min={0}
            step={q.unit === 'MB' ? 'any' : 1}
            inputMode={q.unit === 'MB' ? 'decimal' : 'numeric'}
            placeholder="no limit"
            class={props.invalid.includes(q.name) ? 'invalid' : ''}
            aria-invalid={props.invalid.includes(q.name) ? 'true' : undefined}
            aria-describedby={`${props.prefix}-${q.name}-hint`}
            value={props.text[q.name]}
            onInput={(e) => props.onChange(q.name, (e.target as HTMLInputElement).value)}
          />
          <p id={`${props.prefix}-${q.name}-hint`} class="hint">
            {q.hint}
          </p>
        </div>
      ))}
    </fieldset>
  );
}
