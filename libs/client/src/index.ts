import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths } from './schema.js';

/** The API's path prefix; every path of `paths` starts with it. */
export const API_BASE = '/api/messenger/v1';

type Schemas = components['schemas'];
type Json<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type Answer<P extends keyof paths, M extends 'get' | 'post', S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer B } } };
}
  ? B
  : never;

/** Every error answer of the API: `{ success: false, error, details? }` (and `resetIn` on 429…). */
export type ApiErrorBody = Schemas['Error'];
/** The body of POST /send. */
export type SendBody = Json<'/api/messenger/v1/send', 'post'>;
/** POST /send's 202: one `messageId`, or a list's batch id and its `messageIds`. */
export type SendAccepted = Answer<'/api/messenger/v1/send', 'post', 202>;
/** GET /status's 200. */
export type DeviceStatus = Answer<'/api/messenger/v1/status', 'get', 200>;
/** GET /messages/{id}'s 200. */
export type MessageAnswer = Answer<'/api/messenger/v1/messages/{id}', 'get', 200>;
/** GET /messages's 200. */
export type MessagesPage = Answer<'/api/messenger/v1/messages', 'get', 200>;
/** GET /messages's query. */
export type MessagesQuery = NonNullable<paths['/api/messenger/v1/messages']['get']['parameters']['query']>;
/** POST /contacts/check's 200. */
export type ContactCheck = Answer<'/api/messenger/v1/contacts/check', 'post', 200>;
/** POST /contacts/username's 200: `found` (with `contact`), `pin_required` or `not_found`. */
export type UsernameResolution = Answer<'/api/messenger/v1/contacts/username', 'post', 200>;

/**
 * What each helper resolves to: the API's success body, or its error body with the HTTP status
 * (the API answers every failure as `{ success: false, error }`; nothing is thrown for those —
 * only a network failure rejects).
 */
export type Result<T> =
  { ok: true; status: number; data: T } | { ok: false; status: number; error: ApiErrorBody };

export interface GatewayClientOptions {
  /** Where the gateway is, e.g. `http://localhost:3000` (the API's path is added). */
  baseUrl: string;
  /** An API token (`npm run -s token -- create`): sent as `Authorization: Bearer`. */
  token: string;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: ClientOptions['fetch'];
  /** Headers sent with every request besides the token. */
  headers?: Record<string, string>;
  /**
   * The device a workspace token acts on (docs/workspaces.md): every request goes to it, under
   * `/api/messenger/v1/devices/{deviceId}/…`; the workspace's own routes (`/workspace`, `/devices`,
   * `/tokens`) are left as they are. Not needed with a device token.
   */
  deviceId?: string;
}

export interface GatewayClient {
  /**
   * openapi-fetch's typed client on the whole API: `api.GET('/api/messenger/v1/status')`,
   * `api.POST('/api/messenger/v1/send', { body })` — every path, parameter and answer typed from
   * the OpenAPI document.
   */
  api: Client<paths>;
  /** POST /send: a text, an attachment, a kind… to one recipient or a list. */
  send(body: SendBody, opts?: { idempotencyKey?: string }): Promise<Result<SendAccepted>>;
  /** POST /send with a text, to one number or a list. */
  sendText(to: string | string[], text: string): Promise<Result<SendAccepted>>;
  /** GET /status: the device's link and sending state. */
  status(): Promise<Result<DeviceStatus>>;
  /** GET /messages/{id}: one message of the token's device. */
  getMessage(id: string): Promise<Result<MessageAnswer>>;
  /** GET /messages: a page of the device's messages, newest first. */
  listMessages(query?: MessagesQuery): Promise<Result<MessagesPage>>;
  /** POST /contacts/check: whether each number is on WhatsApp. */
  checkNumbers(phones: string[]): Promise<Result<ContactCheck>>;
  /**
   * POST /contacts/username: who has a WhatsApp username (`@` optional), with its 4-digit PIN when
   * it is guarded by one; a found username may then be sent to as `to: "@name"`.
   */
  resolveUsername(username: string, pin?: string): Promise<Result<UsernameResolution>>;
  /** The same client for one device of a workspace token's workspace (`deviceId`). */
  forDevice(deviceId: string): GatewayClient;
}

/** A workspace's own routes: not a device's, so never under the device prefix. */
const WORKSPACE_PATHS = /^\/api\/messenger\/v1\/(workspace|devices|tokens)(\/|$)/;

/** `/api/messenger/v1/send` for `d1` is `/api/messenger/v1/devices/d1/send`. */
export function devicePath(pathname: string, deviceId: string): string {
  if (!pathname.startsWith(`${API_BASE}/`) || WORKSPACE_PATHS.test(pathname)) return pathname;
  return `${API_BASE}/devices/${encodeURIComponent(deviceId)}${pathname.slice(API_BASE.length)}`;
}

/** openapi-fetch's answer as a `Result`. */
async function settle<T>(
  call: Promise<{ data?: unknown; error?: unknown; response: Response }>,
): Promise<Result<T>> {
  const { data, error, response } = await call;
  if (response.ok) return { ok: true, status: response.status, data: data as T };
  return { ok: false, status: response.status, error: errorBody(error, response) };
}

/** The error body; a non-JSON failure (a proxy's 502 page, say) in the same shape. */
function errorBody(error: unknown, response: Response): ApiErrorBody {
  if (error && typeof error === 'object' && 'error' in error) return error as ApiErrorBody;
  return { success: false, error: response.statusText || `HTTP ${response.status}` };
}

/** A client of one gateway under one token. */
export function createGatewayClient(opts: GatewayClientOptions): GatewayClient {
  const api = createFetchClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    headers: { ...opts.headers, Authorization: `Bearer ${opts.token}` },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const { deviceId } = opts;
  if (deviceId) {
    // The request as openapi-fetch built it, to the device's path: the same method, headers and body.
    api.use({
      onRequest({ request }) {
        const url = new URL(request.url);
        const moved = devicePath(url.pathname, deviceId);
        if (moved === url.pathname) return request;
        url.pathname = moved;
        return new Request(url, request);
      },
    });
  }
  const client: GatewayClient = {
    api,
    send: (body, o) =>
      settle(
        api.POST('/api/messenger/v1/send', {
          body,
          ...(o?.idempotencyKey ? { params: { header: { 'Idempotency-Key': o.idempotencyKey } } } : {}),
        }),
      ),
    sendText: (to, text) => client.send({ to, text }),
    status: () => settle(api.GET('/api/messenger/v1/status')),
    getMessage: (id) => settle(api.GET('/api/messenger/v1/messages/{id}', { params: { path: { id } } })),
    listMessages: (query) =>
      settle(api.GET('/api/messenger/v1/messages', query ? { params: { query } } : {})),
    checkNumbers: (phones) => settle(api.POST('/api/messenger/v1/contacts/check', { body: { phones } })),
    resolveUsername: (username, pin) =>
      settle(
        api.POST('/api/messenger/v1/contacts/username', {
          body: { username, ...(pin !== undefined ? { pin } : {}) },
        }),
      ),
    forDevice: (id) => createGatewayClient({ ...opts, deviceId: id }),
  };
  return client;
}
