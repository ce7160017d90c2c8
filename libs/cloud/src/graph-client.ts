/**
 * The one client of Meta's Graph API (the Cloud API engine, docs/cloud-api.md): plain HTTPS through
 * the guarded outbound client, nothing else. Each call names the number it acts for
 * (`GraphNumber`: its ids, access token and API version); the client holds none of them.
 *
 * Reference: https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages ,
 * …/reference/media , …/reference/phone-numbers , and the WABA's `message_templates` edge.
 */
import { createHash } from 'node:crypto';
import {
  createOutboundClient,
  OutboundError,
  OutboundTooLargeError,
  type AllowList,
  type OutboundClient,
} from '@mgw/common';
import type { CloudNumberProfile } from '@mgw/contracts';
import { GraphError, GraphUnreachableError, MediaTooLargeError, graphErrorOf } from './graph-errors.js';

/** Meta's Graph API. */
export const GRAPH_BASE_URL = 'https://graph.facebook.com';

/** The number a call acts for. */
export interface GraphNumber {
  phoneNumberId: string;
  wabaId: string;
  accessToken: string;
  graphVersion: string;
}

export interface GraphClientOptions {
  /** Where the Graph API is: Meta's, or the simulator's in the sandbox and the tests. */
  baseUrl?: string;
  /** Private hosts the guard lets through (the simulator on loopback). */
  allowList?: AllowList;
  /** A whole call's budget (resolution, request, answer). */
  timeoutMs?: number;
  /** Extra CAs (a simulator over TLS). */
  ca?: string;
  /** A media download's budget (its URL's answer is the file). Default 30 000 ms. */
  mediaTimeoutMs?: number;
}

/** A message as the Graph API takes it, less `messaging_product` (the client adds it). */
export type GraphMessage = { to: string; type: string } & Record<string, unknown>;

/** One template of the WABA (GET /{waba-id}/message_templates). */
export interface GraphTemplate {
  id: string;
  name: string;
  language: string;
  status: string;
  category: string;
  components: unknown[];
}

/** A file of the number's, downloaded (GraphClient.downloadMedia). */
export interface GraphMediaFile {
  bytes: Buffer;
  /** The type Meta names for it (`mime_type` of GET /{media-id}). */
  mimeType: string;
}

/**
 * The hosts Meta serves media URLs from (`https://lookaside.fbsbx.com/whatsapp_business/attachments/…`):
 * the access token goes to them, and to the Graph API's own origin (the simulator's), nowhere else.
 */
const MEDIA_HOST_SUFFIXES = ['.fbsbx.com', '.facebook.com'];

/** Answers bigger than this are no Graph API answer (a template page is a few hundred KB at most). */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
/** Media the Cloud API takes: 100 MB for documents (the largest type). */
const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
/** Pages of templates read at most (of 100 each): a WABA holds at most a few hundred templates. */
const MAX_TEMPLATE_PAGES = 20;

const PROFILE_FIELDS = 'display_phone_number,verified_name,quality_rating,messaging_limit_tier';

export class GraphClient {
  private readonly http: OutboundClient;
  private readonly base: string;
  private readonly mediaTimeoutMs: number;

  constructor(options: GraphClientOptions = {}) {
    this.base = (options.baseUrl ?? GRAPH_BASE_URL).replace(/\/+$/, '');
    this.mediaTimeoutMs = options.mediaTimeoutMs ?? 30_000;
    const base = new URL(this.base);
    this.http = createOutboundClient({
      ...(options.allowList ? { allowList: options.allowList } : {}),
      // The simulator listens on a free port; Meta on 443.
      allowedPorts: [443, 80, ...(base.port ? [Number(base.port)] : [])],
      // Graph calls never redirect; one that does is not followed with the token.
      maxRedirects: 0,
      timeoutMs: options.timeoutMs ?? 20_000,
      maxBytes: MAX_ANSWER_BYTES,
      userAgent: 'messenger-gateway',
      ...(options.ca ? { ca: options.ca } : {}),
    });
  }

  /** What the number says of itself: checks the token reaches it (GET /{phone-number-id}). */
  async phoneNumber(n: GraphNumber, now = new Date()): Promise<CloudNumberProfile> {
    const body = await this.call(n, 'GET', `${n.phoneNumberId}?fields=${PROFILE_FIELDS}`);
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    return {
      displayPhoneNumber: str(body.display_phone_number) ?? '',
      verifiedName: str(body.verified_name) ?? '',
      qualityRating: str(body.quality_rating) ?? 'UNKNOWN',
      ...(str(body.messaging_limit_tier) ? { messagingLimitTier: str(body.messaging_limit_tier)! } : {}),
      checkedAt: now.toISOString(),
    };
  }

  /**
   * Sends one message (POST /{phone-number-id}/messages) and answers its WhatsApp id (`wamid.…`)
   * and the contact's wa_id. A GraphUnreachableError means the outcome is unknown: the request may
   * have reached Meta.
   */
  async send(n: GraphNumber, message: GraphMessage): Promise<{ wamid: string; waId?: string }> {
    const body = await this.call(n, 'POST', `${n.phoneNumberId}/messages`, {
      'content-type': 'application/json',
      body: JSON.stringify({ messaging_product: 'whatsapp', recipient_type: 'individual', ...message }),
    });
    const messages = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
    const wamid = messages[0]?.id;
    if (typeof wamid !== 'string' || wamid.length === 0)
      throw new GraphError(502, 0, 'The Graph API answered a send without a message id');
    const contacts = Array.isArray(body.contacts) ? (body.contacts as Record<string, unknown>[]) : [];
    const waId = contacts[0]?.wa_id;
    return { wamid, ...(typeof waId === 'string' ? { waId } : {}) };
  }

  /** Uploads media for this number (POST /{phone-number-id}/media): answers its media id. */
  async uploadMedia(n: GraphNumber, bytes: Buffer, mimeType: string, fileName = 'file'): Promise<string> {
    const boundary = `mgw${Date.now().toString(16)}${Math.random().toString(16).slice(2)}`;
    const safeName = fileName.replace(/["\r\n\\]/g, '_').slice(0, 200) || 'file';
    const safeType = /^[\w.+-]+\/[\w.+-]+$/.test(mimeType) ? mimeType : 'application/octet-stream';
    const head = (name: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"`;
    const body = Buffer.concat([
      Buffer.from(`${head('messaging_product')}\r\n\r\nwhatsapp\r\n`),
      Buffer.from(`${head('type')}\r\n\r\n${safeType}\r\n`),
      Buffer.from(`${head('file')}; filename="${safeName}"\r\ncontent-type: ${safeType}\r\n\r\n`),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    if (body.length > MAX_UPLOAD_BYTES + 4096) throw new GraphError(413, 131053, 'Media too large to upload');
    const answer = await this.call(n, 'POST', `${n.phoneNumberId}/media`, {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      body,
    });
    if (typeof answer.id !== 'string')
      throw new GraphError(502, 0, 'The Graph API answered an upload without an id');
    return answer.id;
  }

  /**
   * A file the number received (an inbound message's attachment, by the media id its webhook
   * named), as Meta's media reference says to fetch it
   * (https://developers.facebook.com/documentation/business-messaging/whatsapp/business-phone-numbers/media):
   * GET /{media-id} answers its URL, `mime_type`, `sha256` and `file_size`; the URL answers the
   * bytes to the same bearer token. Through the guarded client like every call: the URL must be
   * Meta's media host (or the Graph API's own origin), else the token is not sent; a redirect is
   * not followed (the client follows none); a file over `maxBytes` is refused before and while it
   * downloads (MediaTooLargeError); bytes that do not hash to the `sha256` Meta named are refused.
   */
  async downloadMedia(n: GraphNumber, mediaId: string, maxBytes: number): Promise<GraphMediaFile> {
    if (!/^\d{1,32}$/.test(mediaId)) throw new GraphError(400, 100, 'A media id is digits');
    const query = new URLSearchParams({ phone_number_id: n.phoneNumberId });
    const meta = await this.call(n, 'GET', `${mediaId}?${query}`);
    const url = typeof meta.url === 'string' ? meta.url : '';
    const size = Number(meta.file_size);
    if (Number.isFinite(size) && size > maxBytes) throw new MediaTooLargeError(maxBytes);
    if (!this.isMediaUrl(url))
      throw new GraphError(502, 0, 'The Graph API named a media URL that is not Meta’s media host');
    let res;
    try {
      res = await this.http.fetch(url, {
        headers: { authorization: `Bearer ${n.accessToken}` },
        maxBytes,
        timeoutMs: this.mediaTimeoutMs,
      });
    } catch (err) {
      if (err instanceof OutboundTooLargeError) throw new MediaTooLargeError(maxBytes);
      if (err instanceof OutboundError) throw new GraphUnreachableError(err.message, { cause: err });
      throw err;
    }
    if (res.status !== 200) throw graphErrorOf(res.status, jsonOrUndefined(res.body));
    const sha256 = typeof meta.sha256 === 'string' ? meta.sha256 : undefined;
    if (sha256 !== undefined && !hashes(res.body, sha256))
      throw new GraphError(502, 0, 'The media does not match the SHA-256 Meta named');
    return { bytes: res.body, mimeType: mimeTypeOf(meta.mime_type) };
  }

  /** Whether the token may go to `url`: https on Meta's media hosts, or the Graph API's own origin. */
  private isMediaUrl(url: string): boolean {
    if (!URL.canParse(url)) return false;
    const target = new URL(url);
    if (target.origin === new URL(this.base).origin) return true;
    return target.protocol === 'https:' && MEDIA_HOST_SUFFIXES.some((s) => target.hostname.endsWith(s));
  }

  /** The WABA's templates (all pages, bounded), optionally only those of one name. */
  async templates(n: GraphNumber, name?: string): Promise<GraphTemplate[]> {
    const found: GraphTemplate[] = [];
    let after: string | undefined;
    for (let page = 0; page < MAX_TEMPLATE_PAGES; page++) {
      const query = new URLSearchParams({ limit: '100' });
      if (name) query.set('name', name);
      if (after) query.set('after', after);
      const body = await this.call(n, 'GET', `${n.wabaId}/message_templates?${query}`);
      for (const t of Array.isArray(body.data) ? (body.data as Record<string, unknown>[]) : []) {
        if (typeof t.name !== 'string' || typeof t.language !== 'string') continue;
        found.push({
          id: String(t.id ?? ''),
          name: t.name,
          language: t.language,
          status: String(t.status ?? ''),
          category: String(t.category ?? ''),
          components: Array.isArray(t.components) ? t.components : [],
        });
      }
      const paging = body.paging as { cursors?: { after?: unknown }; next?: unknown } | undefined;
      after = typeof paging?.cursors?.after === 'string' && paging.next ? paging.cursors.after : undefined;
      if (!after) break;
    }
    return found;
  }

  private async call(
    n: GraphNumber,
    method: 'GET' | 'POST',
    path: string,
    send?: { 'content-type': string; body: string | Buffer },
  ): Promise<Record<string, unknown>> {
    const url = `${this.base}/${n.graphVersion}/${path}`;
    let res;
    try {
      res = await this.http.fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${n.accessToken}`,
          accept: 'application/json',
          ...(send ? { 'content-type': send['content-type'] } : {}),
        },
        ...(send ? { body: send.body } : {}),
      });
    } catch (err) {
      if (err instanceof OutboundError) throw new GraphUnreachableError(err.message, { cause: err });
      throw err;
    }
    const body = jsonOrUndefined(res.body);
    if (res.status < 200 || res.status > 299) throw graphErrorOf(res.status, body);
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new GraphError(502, 0, `The Graph API answered ${res.status} without a JSON object`);
    return body as Record<string, unknown>;
  }
}

/** A MIME type as a header may carry it (`audio/ogg; codecs=opus`); anything else is octet-stream. */
const MIME_TYPE = /^[\w.+-]{1,64}\/[\w.+-]{1,64}(?:; ?[\w.+-]{1,32}=[\w.+-]{1,64})*$/;
const mimeTypeOf = (v: unknown): string =>
  typeof v === 'string' && v.length <= 200 && MIME_TYPE.test(v) ? v : 'application/octet-stream';

function jsonOrUndefined(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Whether the bytes hash to `sha256`: Meta writes it in hex (older payloads: base64). */
function hashes(bytes: Buffer, sha256: string): boolean {
  const digest = createHash('sha256').update(bytes).digest();
  return sha256.toLowerCase() === digest.toString('hex') || sha256 === digest.toString('base64');
}
