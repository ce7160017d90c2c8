import type { CloudTemplatesQuery } from '@mgw/contracts';
import type {
  CatalogEntry,
  TemplateCatalog,
  TemplateComponentView,
  TemplateParams,
} from '../cloud-send/index.js';
import { graphFailure, type GraphRefused, type GraphUnreachable } from './check-number.js';
import type { CloudDeps } from './configure-cloud.js';
import type { NotCloud } from './connect-cloud.js';

/** One template as GET /cloud/templates shows it. */
export interface TemplateShown {
  name: string;
  language: string;
  status: string;
  category: string;
  /** The parameters /send gives it: how many its header, its body and each button (by index) take. */
  parameters: TemplateParams;
  components: TemplateComponentView[];
}

/** GET /cloud/templates: the number's templates, and when the list was read from the Graph API. */
export interface TemplatesShown {
  templates: TemplateShown[];
  fetchedAt: string;
}

export type TemplatesOutcome =
  { ok: true; data: TemplatesShown } | NotCloud | GraphRefused | GraphUnreachable;

const shown = (t: CatalogEntry): TemplateShown => ({
  name: t.name,
  language: t.language,
  status: t.status,
  category: t.category,
  parameters: t.params,
  components: t.components,
});

const byNameThenLanguage = (a: TemplateShown, b: TemplateShown) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.language < b.language ? -1 : a.language > b.language ? 1 : 0;

/**
 * The device's number's templates (its WABA's), from the list the API keeps for /send's check
 * (TemplateCatalog: read from the Graph API at most once per refresh floor, whatever is asked),
 * those of the query's name, language and status, by name then language. Not a cloud device:
 * `not_cloud`. The Graph API refusing the token (or the WABA id), or not answering, with no list
 * kept: what Meta said, as PUT /cloud says it. A refused token changes nothing here: /connect and
 * the sender are where a device turns disconnected.
 */
export async function listTemplates(
  d: Pick<CloudDeps, 'cloudDevices'> & { templates: Pick<TemplateCatalog, 'all'> },
  deviceId: string,
  query: Omit<CloudTemplatesQuery, 'token'>,
  now = Date.now(),
): Promise<TemplatesOutcome> {
  const config = await d.cloudDevices.get(deviceId);
  if (!config) return { ok: false, reason: 'not_cloud' };
  let list;
  try {
    list = await d.templates.all(deviceId, config, { refresh: query.refresh, now });
  } catch (err) {
    return graphFailure(err, config.accessToken, 'wabaId');
  }
  const templates = list.templates
    .filter(
      (t) =>
        (query.name === undefined || t.name === query.name) &&
        (query.language === undefined || t.language === query.language) &&
        (query.status === undefined || t.status === query.status),
    )
    .map(shown)
    .sort(byNameThenLanguage);
  return { ok: true, data: { templates, fetchedAt: new Date(list.fetchedAt).toISOString() } };
}
