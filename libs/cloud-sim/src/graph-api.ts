/**
 * The Graph API paths of the slice, on `/{version}/…` (version `v<major>.<minor>`):
 * - `GET /{phone-number-id}?fields=…` — the number's fields;
 * - `POST /{phone-number-id}/messages` — send (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages);
 * - `POST /{phone-number-id}/media` — upload, multipart/form-data with `messaging_product`,
 *   `type` and `file` (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media);
 * - `GET /{media-id}` — its url, mime_type, sha256, file_size; the url (`/media-download/{id}`)
 *   answers the bytes to the same bearer token;
 * - `GET /{waba-id}/message_templates` — the WABA's templates
 *   (https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/message_templates/).
 * Every call needs `Authorization: Bearer <token>`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphError, errors } from './errors.js';
import { BodyTooLarge, readBody, sendJson, utf8 } from './http-body.js';
import { multipartBoundary, parseMultipart } from './multipart.js';
import type { CloudSim } from './sim.js';

export const GRAPH_PATH = /^\/(v\d{1,3}\.\d{1,3})\/([A-Za-z0-9_.-]{1,64})(?:\/([a-z_]{1,32}))?\/?$/;
/** A send body is a few kilobytes at most; the bound leaves room for long template components. */
export const MAX_JSON_BYTES = 256 * 1024;
/** Multipart overhead allowed above the largest media limit. */
const MULTIPART_OVERHEAD = 64 * 1024;

/** An access token is required: Graph's code 104 when none is given at all. */
const noToken = () =>
  new GraphError(
    401,
    104,
    'An access token is required to request this resource.',
    'No Authorization header.',
  );

function bearer(req: IncomingMessage): string {
  const header = req.headers.authorization;
  if (!header) throw noToken();
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw errors.invalidToken('Invalid OAuth access token - Cannot parse access token');
  return match[1]!;
}

/** A host as a Host header may name one (name or address, optional port): nothing else is echoed. */
const HOST = /^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?$/;

/**
 * The origin the client reached the simulator by, as Meta's media URLs are on a host the client
 * can reach: in a container network that is the service's name (`cloud-sandbox:3101`), not the
 * address it listens on (`0.0.0.0`). Without a usable Host header: where it listens.
 */
function originOf(req: IncomingMessage, fallback: string): string {
  const host = req.headers.host;
  return host && HOST.test(host) ? `http://${host}` : fallback;
}

function parseJson(req: IncomingMessage, raw: Buffer): unknown {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    throw errors.invalidParameter(`The request body must be application/json; got '${type || 'none'}'.`);
  const text = utf8(raw);
  if (text === undefined) throw errors.invalidParameter('The request body is not valid UTF-8.');
  try {
    return JSON.parse(text);
  } catch {
    throw errors.invalidParameter('The request body is not valid JSON.');
  }
}

export function createGraphApi(sim: CloudSim) {
  const maxUpload = Math.max(...Object.values(sim.mediaLimits)) + MULTIPART_OVERHEAD;

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const download = /^\/media-download\/(\d{1,20})$/.exec(url.pathname);
    if (download && req.method === 'GET') {
      const reach = sim.authenticate(bearer(req));
      const node = sim.resolve(download[1]!, reach);
      if (node.kind !== 'media') throw errors.unknownObject(download[1]!);
      res.writeHead(200, { 'content-type': node.media.mimeType, 'content-length': node.media.data.length });
      res.end(node.media.data);
      return;
    }
    const match = GRAPH_PATH.exec(url.pathname);
    if (!match) throw new GraphError(400, 2500, `Unknown path components: ${url.pathname}`, url.pathname);
    const [, , id, edge] = match as unknown as [string, string, string, string | undefined];
    const reach = sim.authenticate(bearer(req));
    const node = sim.resolve(id, reach);
    const route = `${req.method} ${node.kind}${edge ? `/${edge}` : ''}`;
    switch (route) {
      case 'GET number': {
        if (node.kind !== 'number') break;
        const fields = url.searchParams.get('fields');
        const list =
          fields === null
            ? undefined
            : fields
                .split(',')
                .map((f) => f.trim())
                .filter(Boolean);
        sendJson(res, 200, sim.numberFields(node.number, list));
        return;
      }
      case 'POST number/messages': {
        if (node.kind !== 'number') break;
        const body = parseJson(req, await readBody(req, MAX_JSON_BYTES));
        sendJson(res, 200, sim.send(node.number, body));
        return;
      }
      case 'POST number/media': {
        if (node.kind !== 'number') break;
        const boundary = multipartBoundary(req.headers['content-type']);
        if (!boundary) throw errors.invalidParameter('The request body must be multipart/form-data.');
        const parts = parseMultipart(await readBody(req, maxUpload), boundary);
        if (!parts) throw errors.invalidParameter('The request body is not well-formed multipart/form-data.');
        const field = (name: string) =>
          parts.find((p) => p.name === name && p.filename === undefined)?.data.toString('utf8');
        const product = field('messaging_product');
        if (product === undefined)
          throw errors.invalidParameter('The parameter messaging_product is required.');
        if (product !== 'whatsapp')
          throw errors.invalidParameter("The parameter messaging_product must be 'whatsapp'.");
        const file = parts.find((p) => p.name === 'file');
        if (!file) throw errors.invalidParameter('The parameter file is required.');
        const type = field('type');
        if (type === undefined) throw errors.invalidParameter('The parameter type is required.');
        sendJson(res, 200, { id: sim.upload(node.number, file, type) });
        return;
      }
      case 'GET media': {
        if (node.kind !== 'media') break;
        const m = node.media;
        sendJson(res, 200, {
          messaging_product: 'whatsapp',
          url: `${sim.mediaOrigin ?? originOf(req, sim.baseUrl)}/media-download/${m.id}`,
          mime_type: m.mimeType,
          sha256: m.sha256,
          file_size: m.data.length,
          id: m.id,
        });
        return;
      }
      case 'GET waba/message_templates': {
        if (node.kind !== 'waba') break;
        sendJson(res, 200, listTemplates(sim, node.wabaId, url.searchParams));
        return;
      }
    }
    throw new GraphError(
      400,
      100,
      `Unsupported ${String(req.method).toLowerCase()} request.`,
      `The simulator does not serve ${req.method} ${url.pathname}.`,
      33,
      'GraphMethodException',
    );
  }

  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    try {
      await handle(req, res, url);
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        sendJson(res, 413, errors.invalidParameter('The request body is too large.').body(), true);
      } else if (err instanceof GraphError) {
        sendJson(res, err.status, err.body());
      } else {
        sendJson(res, 500, new GraphError(500, 1, 'An unknown error occurred', String(err)).body());
      }
    }
  };
}

/**
 * `message_templates`: `{ data: [{ name, language, status, category, id, components }], paging }`,
 * filtered by `name`, `status`, `category`, `language`; `limit` (default 25) with an `after` cursor.
 */
function listTemplates(sim: CloudSim, wabaId: string, query: URLSearchParams) {
  let list = sim.templatesOf(wabaId);
  for (const key of ['name', 'status', 'category', 'language'] as const) {
    const value = query.get(key);
    if (value !== null) list = list.filter((t) => t[key] === value);
  }
  const limitParam = query.get('limit');
  const limit = limitParam === null ? 25 : Number(limitParam);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw errors.invalidParameter('The parameter limit must be an integer between 1 and 1000.');
  const afterParam = query.get('after');
  let start = 0;
  if (afterParam !== null) {
    start = Number(Buffer.from(afterParam, 'base64url').toString('utf8')) + 1;
    if (!Number.isInteger(start) || start < 1)
      throw errors.invalidParameter('The parameter after is not a valid cursor.');
  }
  const page = list.slice(start, start + limit);
  const cursor = (i: number) => Buffer.from(String(i)).toString('base64url');
  return {
    data: page.map((t) => ({
      name: t.name,
      parameter_format: 'POSITIONAL',
      components: t.components,
      language: t.language,
      status: t.status,
      category: t.category,
      id: t.id,
    })),
    paging: {
      cursors: { before: cursor(start), after: cursor(start + Math.max(page.length, 1) - 1) },
      ...(start + limit < list.length ? { next: `?limit=${limit}&after=${cursor(start + limit - 1)}` } : {}),
    },
  };
}
