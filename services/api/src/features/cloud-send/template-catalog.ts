import type { RedisClient } from '@mgw/common';
import type { GraphClient, GraphTemplate } from '@mgw/cloud';
import { keys, type CloudDeviceConfig } from '@mgw/contracts';

/**
 * How many parameters a template takes, per component, where its text says so: the distinct
 * placeholders (`{{1}}`, `{{first_name}}`) of its header text and body, one for a media header,
 * and one for each button whose URL has a placeholder or that copies a code. A component the
 * template's text says nothing about (a quick reply's optional payload) is not counted.
 */
export interface TemplateParams {
  header?: number;
  body?: number;
  /** By button index. */
  buttons?: Record<number, number>;
}

/** One template of the number's WABA as the check needs it. */
export interface CatalogEntry {
  name: string;
  language: string;
  /** APPROVED, PAUSED, PENDING, REJECTED, DISABLED… as Meta says. */
  status: string;
  category: string;
  params: TemplateParams;
}

/** What is kept in Redis (`keys.cloudTemplates`): the list, whose WABA it is and when it was read. */
interface Kept {
  wabaId: string;
  fetchedAt: number;
  templates: CatalogEntry[];
}

export interface TemplateCatalogOptions {
  /** How long a list read from the Graph API is used (templates change rarely: 10 minutes). */
  ttlSeconds: number;
  /**
   * A template missing from the list read it again (it may be new), but not more often than this:
   * a stream of names that do not exist must not become a stream of Graph calls.
   */
  refreshFloorMs: number;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

/** The distinct placeholders of a template's text. */
function placeholders(text: unknown): number {
  if (typeof text !== 'string') return 0;
  return new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1])).size;
}

/** The parameters a template takes, from its components as `message_templates` lists them. */
export function templateParams(components: unknown[]): TemplateParams {
  const params: TemplateParams = {};
  for (const raw of components) {
    if (!raw || typeof raw !== 'object') continue;
    const c = raw as { type?: unknown; format?: unknown; text?: unknown; buttons?: unknown };
    const type = typeof c.type === 'string' ? c.type.toUpperCase() : '';
    if (type === 'BODY') params.body = placeholders(c.text);
    else if (type === 'HEADER') {
      const format = typeof c.format === 'string' ? c.format.toUpperCase() : 'TEXT';
      if (format === 'TEXT') params.header = placeholders(c.text);
      else if (['IMAGE', 'VIDEO', 'DOCUMENT'].includes(format)) params.header = 1;
    } else if (type === 'BUTTONS' && Array.isArray(c.buttons)) {
      c.buttons.forEach((b: unknown, index: number) => {
        const button = (b ?? {}) as { type?: unknown; url?: unknown };
        const kind = typeof button.type === 'string' ? button.type.toUpperCase() : '';
        // An authentication template's code button (OTP) and a coupon's copy-code button take the
        // code; a URL button takes its placeholder's value.
        const takes =
          kind === 'OTP' || kind === 'COPY_CODE' ? 1 : kind === 'URL' ? placeholders(button.url) : 0;
        if (takes > 0) (params.buttons ??= {})[index] = takes;
      });
    }
  }
  return params;
}

function entryOf(t: GraphTemplate): CatalogEntry {
  return {
    name: t.name,
    language: t.language,
    status: t.status.toUpperCase(),
    category: t.category,
    params: templateParams(t.components),
  };
}

/**
 * A cloud device's WABA's templates, read from the Graph API once and kept in Redis for
 * `ttlSeconds` (they are not secret: names, languages, statuses, parameter counts), so the API
 * processes share one read. A template the kept list lacks reads the list again (a template just
 * approved), at most once per `refreshFloorMs`. A reconfigured device (another WABA) reads anew.
 */
export class TemplateCatalog {
  constructor(
    private readonly redis: RedisClient,
    private readonly graph: Pick<GraphClient, 'templates'>,
    private readonly opts: TemplateCatalogOptions = { ttlSeconds: 600, refreshFloorMs: 30_000 },
  ) {}

  /**
   * The templates of this name in every language the WABA has it. Rejects when the Graph API
   * does not answer (GraphError, GraphUnreachableError) and no kept list has the name.
   */
  async named(
    deviceId: string,
    config: CloudDeviceConfig,
    name: string,
    now = Date.now(),
  ): Promise<CatalogEntry[]> {
    const kept = await this.kept(deviceId, config);
    const found = kept?.templates.filter((t) => t.name === name) ?? [];
    if (kept && (found.length > 0 || now - kept.fetchedAt < this.opts.refreshFloorMs)) return found;
    const fresh = await this.read(deviceId, config, now);
    return fresh.templates.filter((t) => t.name === name);
  }

  private async kept(deviceId: string, config: CloudDeviceConfig): Promise<Kept | undefined> {
    const raw = await this.redis.get(keys.cloudTemplates(deviceId));
    if (!raw) return undefined;
    try {
      const kept = JSON.parse(raw) as Kept;
      return kept.wabaId === config.wabaId && Array.isArray(kept.templates) ? kept : undefined;
    } catch {
      return undefined;
    }
  }

  private async read(deviceId: string, config: CloudDeviceConfig, now: number): Promise<Kept> {
    const templates = await this.graph.templates(config);
    const kept: Kept = { wabaId: config.wabaId, fetchedAt: now, templates: templates.map(entryOf) };
    await this.redis.set(keys.cloudTemplates(deviceId), JSON.stringify(kept), 'EX', this.opts.ttlSeconds);
    return kept;
  }
}
