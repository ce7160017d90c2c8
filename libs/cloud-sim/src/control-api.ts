/**
 * The control API tests drive the simulator with (no auth; JSON in and out), under `/control/`:
 *
 * | route | does |
 * |---|---|
 * | `POST /control/numbers` | adds a number (PhoneNumberConfig) |
 * | `PATCH /control/numbers/{id}` | sets `qualityRating`, `messagingLimitTier`, `throughputPerSecond` |
 * | `POST /control/tokens/expire` `{ token }` | expires a token (then 190/463) |
 * | `POST /control/numbers/{id}/inbound` `{ from, text, name?, replyTo? }` | a user writes (opens the window) |
 * | `POST /control/messages/{wamid}/status` `{ status, error? }` | delivered / read / failed |
 * | `GET /control/forms` | the webhook forms the simulator writes (name, group, about, reference) |
 * | `POST /control/numbers/{id}/forms/{name}` `{ from?, name?, username?, target?, times? }` | delivers that form; answers its bodies, the user's wamids and files (bytes in base64) |
 * | `POST /control/templates` | adds a template (TemplateConfig) |
 * | `POST /control/templates/status` `{ wabaId, name, language, status }` | pauses (or sets) a template |
 * | `POST /control/webhooks` `{ appId, callbackUrl, verifyToken }` | verifies and subscribes a callback |
 * | `GET /control/messages?phoneNumberId=` | what was sent |
 * | `GET /control/deliveries` | the webhook events and their attempts |
 * | `POST /control/clock` `{ advanceMs }` | moves the simulator's clock forward |
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTooLarge, readBody, sendJson, utf8 } from './http-body.js';
import { WEBHOOK_FORMS } from './forms/table.js';
import { CloudSimError, type CloudSim } from './sim.js';

const MAX_CONTROL_BYTES = 256 * 1024;

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = utf8(await readBody(req, MAX_CONTROL_BYTES));
  if (text === undefined) throw new CloudSimError(400, 'body is not UTF-8');
  let body: unknown;
  try {
    body = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new CloudSimError(400, 'body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new CloudSimError(400, 'body must be an object');
  return body as Record<string, unknown>;
}

export function createControlApi(sim: CloudSim) {
  async function handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname.replace(/^\/control/, '');
    const method = req.method ?? 'GET';
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/numbers') {
      sim.addNumber((await jsonBody(req)) as never);
      return sendJson(res, 201, { ok: true });
    }
    if (method === 'PATCH' && (m = /^\/numbers\/(\d+)$/.exec(path))) {
      sim.updateNumber(m[1]!, await jsonBody(req));
      return sendJson(res, 200, { ok: true });
    }
    if (method === 'POST' && path === '/tokens/expire') {
      const { token } = await jsonBody(req);
      if (typeof token !== 'string') throw new CloudSimError(400, 'token is required');
      sim.expireToken(token);
      return sendJson(res, 200, { ok: true });
    }
    if (method === 'POST' && (m = /^\/numbers\/(\d+)\/inbound$/.exec(path))) {
      return sendJson(res, 200, sim.inbound(m[1]!, await jsonBody(req)));
    }
    if (method === 'GET' && path === '/forms') {
      return sendJson(
        res,
        200,
        WEBHOOK_FORMS.map(({ name, group, about, reference }) => ({ name, group, about, reference })),
      );
    }
    if (method === 'POST' && (m = /^\/numbers\/(\d+)\/forms\/([a-z0-9._-]{1,80})$/.exec(path))) {
      const delivered = sim.deliverForm(m[1]!, m[2]!, await jsonBody(req));
      return sendJson(res, 200, {
        ...delivered,
        files: delivered.files.map((f) => ({ ...f, bytes: f.bytes.toString('base64') })),
      });
    }
    if (method === 'POST' && (m = /^\/messages\/([A-Za-z0-9._=-]+)\/status$/.exec(path))) {
      const { status, error } = await jsonBody(req);
      const message = sim.markStatus(
        m[1]!,
        status,
        typeof error === 'object' && error !== null ? error : undefined,
      );
      return sendJson(res, 200, message);
    }
    if (method === 'POST' && path === '/templates') {
      return sendJson(res, 201, sim.addTemplate((await jsonBody(req)) as never));
    }
    if (method === 'POST' && path === '/templates/status') {
      const { wabaId, name, language, status } = await jsonBody(req);
      sim.setTemplateStatus(String(wabaId), String(name), String(language), status);
      return sendJson(res, 200, { ok: true });
    }
    if (method === 'POST' && path === '/webhooks') {
      const { appId, callbackUrl, verifyToken } = await jsonBody(req);
      await sim.subscribe(String(appId), callbackUrl, verifyToken);
      return sendJson(res, 200, { ok: true });
    }
    if (method === 'GET' && path === '/messages') {
      return sendJson(res, 200, sim.sent(url.searchParams.get('phoneNumberId') ?? undefined));
    }
    if (method === 'GET' && path === '/deliveries') {
      return sendJson(res, 200, sim.webhooks.deliveries);
    }
    if (method === 'POST' && path === '/clock') {
      const { advanceMs } = await jsonBody(req);
      sim.advanceClock(Number(advanceMs));
      return sendJson(res, 200, { now: sim.now() });
    }
    throw new CloudSimError(404, `no control route ${method} ${url.pathname}`);
  }

  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    try {
      await handle(req, res, url);
    } catch (err) {
      if (err instanceof BodyTooLarge) sendJson(res, 413, { error: 'body too large' }, true);
      else if (err instanceof CloudSimError) sendJson(res, err.status, { error: err.message });
      else sendJson(res, 500, { error: String(err) });
    }
  };
}
