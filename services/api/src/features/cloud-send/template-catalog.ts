import type { RedisClient } from '@mgw/common';
import type { GraphClient, GraphTemplate } from '@mgw/cloud';
import { keys, type CloudDeviceConfig } from '@mgw/contracts';
import {
  templateComponents,
  templateParams,
  type TemplateComponentView,
  type TemplateParams,
} from './template-components.js';

/** One template of the number's WABA: what /send's check needs, and what GET /cloud/templates shows. */
export interface CatalogEntry {
  name: string;
  language: string;
  /** APPROVED, PAUSED, PENDING, REJECTED, DISABLED… as Meta says. */
  status: string;
  category: string;
  params: TemplateParams;
  components: TemplateComponentView[];
}

/** A number's whole list, and when it was read from the Graph API (ms since the epoch). */
export interface CatalogList {
  templates: CatalogEntry[];
  fetchedAt: number;
}

/** What is kept in Redis (`keys.cloudTemplates`): the list, whose WABA it is and when it was read. */
interface Kept extends CatalogList {
  wabaId: string;
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

function entryOf(t: GraphTemplate): CatalogEntry {
  return {
    name: t.name,
    language: t.language,
    status: t.status.toUpperCase(),
    category: t.category,
    params: templateParams(t.components),
    components: templateComponents(t.components),
  };
}

/**
 * A cloud device's WABA's templates, read from the Graph API once and kept in Redis for
 * `ttlSeconds` (they are not secret: names, languages, statuses, parameter counts, and the
 * business's own template texts with their placeholders — never a message's), so the API
 * processes share one read. A template the kept list lacks reads the list again (a template just
 * approved), and so does a list asked to be refreshed, at most once per `refreshFloorMs`. A
 * reconfigured device (another WABA) reads anew. One process reads a device's list once at a
 * time: the requests that miss it meanwhile wait for that one read.
 */
export class TemplateCatalog {
  /** The reads under way, by device and WABA. */
  private readonly reading = new Map<string, Promise<Kept>>();

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

  /**
   * The whole list (GET /cloud/templates): the kept one, or read when none is kept. `refresh`
   * reads it again once the kept one is `refreshFloorMs` old (younger, it is answered as it is).
   * A refresh the Graph API does not answer leaves the kept list, whose `fetchedAt` says its age;
   * with none kept, rejects as `named` does.
   */
  async all(
    deviceId: string,
    config: CloudDeviceConfig,
    opts: { refresh?: boolean; now?: number } = {},
  ): Promise<CatalogList> {
    const now = opts.now ?? Date.now();
    const kept = await this.kept(deviceId, config);
    if (kept && !(opts.refresh && now - kept.fetchedAt >= this.opts.refreshFloorMs)) return kept;
    try {
      return await this.read(deviceId, config, now);
    } catch (err) {
      if (kept) return kept;
      throw err;
    }
  }

  private async kept(deviceId: string, config: CloudDeviceConfig): Promise<Kept | undefined> {
    const raw = await this.redis.get(keys.cloudTemplates(deviceId));
    if (!raw) return undefined;
    try {
      const kept = JSON.parse(raw) as Kept;
      // A list kept before its entries had their components is read again.
      return kept.wabaId === config.wabaId &&
        Array.isArray(kept.templates) &&
        kept.templates.every((t) => Array.isArray(t.components))
        ? kept
        : undefined;
    } catch {
      return undefined;
    }
  }

  private read(deviceId: string, config: CloudDeviceConfig, now: number): Promise<Kept> {
    const key = `${deviceId} ${config.wabaId}`;
    const under = this.reading.get(key);
    if (under) return under;
    const reading = (async () => {
      const templates = await this.graph.templates(config);
      const kept: Kept = { wabaId: config.wabaId, fetchedAt: now, templates: templates.map(entryOf) };
      await this.redis.set(keys.cloudTemplates(deviceId), JSON.stringify(kept), 'EX', this.opts.ttlSeconds);
      return kept;
    })().finally(() => this.reading.delete(key));
    this.reading.set(key, reading);
    return reading;
  }
}
