/**
 * Link previews of texts (issue 29): the title, description and image of a text's first URL,
 * fetched by us through the guarded outbound client (the SSRF rules: private and loopback
 * addresses refused unless allow-listed, ports 80/443, redirects re-checked) with small size and
 * time limits — never by Baileys, whose own fetch is unguarded (outgoing-text.ts always hands it
 * a preview or null). A refused, slow, failing or preview-less URL sends the text without one,
 * never fails it. One request's URL is fetched once per device for a while, however many
 * recipients a batch has. The cache is kept per device, not per sender: a preview fetched for one
 * tenant (perhaps from a host only the operator's ALLOWED_PRIVATE_HOSTS admits) never answers
 * another tenant's text.
 */
import { createOutboundClient, OutboundRefusedError, type Logger, type OutboundConfig } from '@mgw/common';
import type { Agent } from 'node:http';
import type { LinkPreviewInput } from '@mgw/messenger';

/**
 * A link preview lookup for a text `deviceId` sends: undefined when the text has no URL or no
 * preview could be had.
 */
export type LinkPreviewer = (
  text: string,
  deviceId: string,
  /** The device's proxy: the page and its image are fetched through it (still vetted by the guard). */
  via?: Agent,
) => Promise<LinkPreviewInput | undefined>;

export const PREVIEW_PAGE_MAX_BYTES = 512 * 1024;
export const PREVIEW_IMAGE_MAX_BYTES = 64 * 1024;
export const PREVIEW_PAGE_TIMEOUT_MS = 3000;
export const PREVIEW_IMAGE_TIMEOUT_MS = 2000;
const CACHE_MS = 10 * 60_000;
const CACHE_MAX = 500;
const TITLE_MAX = 200;
const DESCRIPTION_MAX = 400;
const URL_MAX = 2048;

/** The outcome of one preview fetch, for the metric. */
export type PreviewOutcome = 'ok' | 'refused' | 'failed' | 'none';

/** The first http(s) URL of a text, without the punctuation that usually follows one. */
export function firstUrl(text: string): string | undefined {
  const m = /https?:\/\/[^\s<>"'`]+/i.exec(text);
  if (!m) return undefined;
  const url = m[0].replace(/[.,;:!?)\]}'"]+$/, '');
  return url.length <= URL_MAX ? url : undefined;
}

export function createLinkPreviewer(opts: {
  outbound: OutboundConfig;
  logger: Logger;
  /** Counts each fetch's outcome (a metric). */
  onOutcome?: (outcome: PreviewOutcome) => void;
  ca?: string;
}): LinkPreviewer {
  const client = createOutboundClient({
    allowList: opts.outbound.allowList,
    timeoutMs: PREVIEW_PAGE_TIMEOUT_MS,
    maxBytes: PREVIEW_PAGE_MAX_BYTES,
    maxRedirects: 3,
    userAgent: 'messenger-gateway (link preview)',
    ...(opts.ca ? { ca: opts.ca } : {}),
  });
  const cache = new Map<string, { at: number; preview: Promise<LinkPreviewInput | undefined> }>();

  async function fetchPreview(url: string, via: Agent | undefined): Promise<LinkPreviewInput | undefined> {
    let outcome: PreviewOutcome = 'none';
    try {
      const res = await client.fetch(url, { headers: { accept: 'text/html' }, ...(via ? { via } : {}) });
      const type = String(res.headers['content-type'] ?? '');
      if (res.status < 200 || res.status > 299 || !/html/i.test(type)) return undefined;
      const page = readPage(res.body.toString('utf8'));
      if (!page.title) return undefined;
      const jpegThumbnail = page.image ? await thumbnail(new URL(page.image, res.url).href, via) : undefined;
      outcome = 'ok';
      return {
        matchedText: url,
        url: res.url,
        title: page.title,
        ...(page.description ? { description: page.description } : {}),
        ...(jpegThumbnail ? { jpegThumbnail } : {}),
      };
    } catch (err) {
      outcome = err instanceof OutboundRefusedError ? 'refused' : 'failed';
      // The host only: a URL's path and query may carry a client's tokens.
      opts.logger.info('link preview skipped', { host: hostOf(url), outcome, error: (err as Error).name });
      return undefined;
    } finally {
      opts.onOutcome?.(outcome);
    }
  }

  /** A small JPEG thumbnail (other image types are sent without one: no image decoder here). */
  async function thumbnail(url: string, via: Agent | undefined): Promise<Buffer | undefined> {
    try {
      const res = await client.fetch(url, {
        ...(via ? { via } : {}),
        timeoutMs: PREVIEW_IMAGE_TIMEOUT_MS,
        maxBytes: PREVIEW_IMAGE_MAX_BYTES,
      });
      const type = String(res.headers['content-type'] ?? '');
      const jpeg = res.body[0] === 0xff && res.body[1] === 0xd8;
      return res.status >= 200 && res.status <= 299 && /image\/jpe?g/i.test(type) && jpeg
        ? res.body
        : undefined;
    } catch {
      return undefined;
    }
  }

  return async (text, deviceId, via) => {
    const url = firstUrl(text);
    if (!url) return undefined;
    const now = Date.now();
    for (const [k, v] of cache) if (now - v.at > CACHE_MS) cache.delete(k);
    const key = `${deviceId}\n${url}`;
    const hit = cache.get(key);
    if (hit) return hit.preview;
    const preview = fetchPreview(url, via);
    cache.set(key, { at: now, preview });
    if (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value!);
    return preview;
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '?';
  }
}

/** The page's title, description and image: Open Graph first, then `<title>` and the description meta. */
export function readPage(html: string): { title?: string; description?: string; image?: string } {
  const head = html.slice(0, PREVIEW_PAGE_MAX_BYTES);
  const meta = new Map<string, string>();
  for (const tag of head.match(/<meta\s[^>]{0,2000}>/gi) ?? []) {
    const attrs = new Map<string, string>();
    for (const a of tag.matchAll(/([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g))
      attrs.set(a[1]!.toLowerCase(), a[2] ?? a[3] ?? '');
    const name = (attrs.get('property') ?? attrs.get('name'))?.toLowerCase();
    const content = attrs.get('content');
    if (name && content !== undefined && !meta.has(name)) meta.set(name, content);
  }
  const titleTag = /<title[^>]{0,200}>([^<]{0,2000})<\/title>/i.exec(head)?.[1];
  const title = clean(meta.get('og:title') ?? titleTag, TITLE_MAX);
  const description = clean(meta.get('og:description') ?? meta.get('description'), DESCRIPTION_MAX);
  const image = meta.get('og:image')?.trim();
  return {
    ...(title ? { title } : {}),
    ...(description ? { description } : {}),
    ...(image ? { image } : {}),
  };
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };

function clean(value: string | undefined, max: number): string | undefined {
  if (value === undefined) return undefined;
  const text = value
    .replace(/&(amp|lt|gt|quot|apos|#39);/g, (_m, e: string) => ENTITIES[e]!)
    .replace(/\s+/g, ' ')
    .trim();
  return text ? text.slice(0, max) : undefined;
}
