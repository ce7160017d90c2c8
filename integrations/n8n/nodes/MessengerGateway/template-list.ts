/**
 * The device's templates as the Send Template's lists show them, read from
 * `GET /cloud/templates` (`{ success, data: { templates: [{ name, language, status, category,
 * parameters: { header?, body?, buttons? }, components }], fetchedAt } }`, a Cloud API device's
 * WABA's templates; a linked device answers 404). Plain code, no n8n import at run time
 * (test/fast/integrations reads it without n8n); MessengerGateway.node.ts's list search methods
 * call it.
 */

/** One template in one language, as the list shows it. */
export interface TemplateSummary {
  name: string;
  language: string;
  /** APPROVED, PAUSED, PENDING, REJECTED… (APPROVED ones alone can be sent). */
  status: string;
  category: string;
  /** How many parameters each component takes: `body`, `header`, `buttons` by index. */
  parameters: { header?: number; body?: number; buttons?: Record<string, number> };
}

/** An entry of an n8n list (INodeListSearchItems' shape). */
export interface ListItem {
  name: string;
  value: string;
  description?: string;
}

const text = (v: unknown) => (typeof v === 'string' ? v : '');
const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);

/**
 * The templates of the gateway's answer; an entry without a name or a language is left out. An
 * answer that is not the list's shape throws (the list shows the error; the fields still take a
 * name typed in).
 */
export function templatesOf(answer: unknown): TemplateSummary[] {
  const data = (answer as { data?: { templates?: unknown } } | null)?.data;
  if (!data || !Array.isArray(data.templates))
    throw new Error("The gateway's answer holds no template list (data.templates)");
  const list: TemplateSummary[] = [];
  for (const raw of data.templates as unknown[]) {
    if (!raw || typeof raw !== 'object') continue;
    const t = raw as Record<string, unknown>;
    const [name, language] = [text(t.name), text(t.language)];
    if (name === '' || language === '') continue;
    const p = (t.parameters && typeof t.parameters === 'object' ? t.parameters : {}) as Record<
      string,
      unknown
    >;
    const parameters: TemplateSummary['parameters'] = {};
    if (count(p.header) !== undefined) parameters.header = count(p.header);
    if (count(p.body) !== undefined) parameters.body = count(p.body);
    if (p.buttons && typeof p.buttons === 'object') {
      const buttons = Object.entries(p.buttons as Record<string, unknown>).filter(
        ([, n]) => count(n) !== undefined,
      );
      if (buttons.length > 0) parameters.buttons = Object.fromEntries(buttons) as Record<string, number>;
    }
    list.push({
      name,
      language,
      status: text(t.status).toUpperCase(),
      category: text(t.category),
      parameters,
    });
  }
  return list;
}

const matches = (value: string, filter?: string) =>
  !filter || value.toLowerCase().includes(filter.trim().toLowerCase());
const byName = (a: ListItem, b: ListItem) => a.name.localeCompare(b.name);

/** A language with its status when it cannot be sent: `en_US`, `ar (PAUSED)`. */
const languageWithStatus = (t: TemplateSummary) =>
  t.status === 'APPROVED' || t.status === '' ? t.language : `${t.language} (${t.status})`;

/** One entry per template name (whose name has `filter`): its category and languages. */
export function templateNameItems(templates: TemplateSummary[], filter?: string): ListItem[] {
  const byTemplate = new Map<string, TemplateSummary[]>();
  for (const t of templates)
    if (matches(t.name, filter)) byTemplate.set(t.name, [...(byTemplate.get(t.name) ?? []), t]);
  return [...byTemplate]
    .map(([name, languages]) => ({
      name,
      value: name,
      description: [languages[0]!.category, languages.map(languageWithStatus).sort().join(', ')]
        .filter((part) => part !== '')
        .join(' · '),
    }))
    .sort(byName);
}

/** What a template takes, for the fields: `header 1, body 2, button 0: 1`. */
export function parametersLine(p: TemplateSummary['parameters']): string {
  const parts: string[] = [];
  if (p.header) parts.push(`header ${p.header}`);
  if (p.body) parts.push(`body ${p.body}`);
  for (const [index, n] of Object.entries(p.buttons ?? {})) parts.push(`button ${index}: ${n}`);
  return parts.length > 0 ? `parameters: ${parts.join(', ')}` : 'no parameters';
}

/**
 * One entry per language of the template `name` (of every template when no name is chosen yet),
 * with its status and the parameters it takes.
 */
export function templateLanguageItems(
  templates: TemplateSummary[],
  name?: string,
  filter?: string,
): ListItem[] {
  const chosen = name ? templates.filter((t) => t.name === name) : templates;
  const items = new Map<string, ListItem>();
  for (const t of chosen) {
    if (!matches(t.language, filter) || items.has(t.language)) continue;
    const item: ListItem = { name: t.language, value: t.language };
    if (name) item.description = [t.status, parametersLine(t.parameters)].filter((s) => s !== '').join(' · ');
    items.set(t.language, item);
  }
  return [...items.values()].sort(byName);
}
