import type {
  IDataObject,
  IExecuteFunctions,
  IHookFunctions,
  IHttpRequestMethods,
  IHttpRequestOptions,
  ILoadOptionsFunctions,
  JsonObject,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError, sleep } from 'n8n-workflow';
import type { paths } from './api-types';

/** Where every route of the API lives, below the credential's base URL. */
export const API_PREFIX = '/api/messenger/v1';
export const CREDENTIAL = 'messengerGatewayApi';
/** The name of the Device ID, in the credential and as a node parameter (which overrides it). */
export const DEVICE_ID = 'deviceId';

/**
 * The ids the gateway gives devices (`DEVICE_ID_PATTERN` of its libs/contracts): a slug of 1 to
 * 32 lowercase letters, digits, `_` and `-`, starting with a letter or a digit.
 */
export const DEVICE_ID_PATTERN = /^[a-z0-9](?:[a-z0-9_-]{0,31})$/;

/** A workspace's own routes (its devices, its tokens): not a device's, so never under a device. */
const WORKSPACE_ROUTES = /^\/(workspace|devices|tokens)(\/|$)/;

/**
 * `path` (a route, filled in) as the API serves it for `deviceId`: `/send` for `d1` is
 * `/devices/d1/send` (docs/workspaces.md, "Naming the device"). Without a device, or for a
 * workspace's own route, `path` as it is: the token's own device, the contract's paths.
 */
export function devicePath(path: string, deviceId?: string): string {
  if (deviceId === undefined || deviceId === '' || WORKSPACE_ROUTES.test(path)) return path;
  return `/devices/${encodeURIComponent(deviceId)}${path}`;
}

type ApiPath = keyof paths;
/** A route of the API as the nodes name it, without the prefix: `/send`, `/messages/{id}`. */
export type Route = ApiPath extends `${typeof API_PREFIX}${infer R}` ? R : never;
export type Method = 'get' | 'post' | 'put' | 'delete' | 'patch';
type Operation<R extends Route, M extends Method> = paths[`${typeof API_PREFIX}${R}`][M];

/** The JSON body the API's document gives the operation (`never` for one without a body). */
export type Body<R extends Route, M extends Method> =
  Operation<R, M> extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
/** The path parameters of the operation. */
export type PathParams<R extends Route, M extends Method> =
  Operation<R, M> extends { parameters: { path: infer P } } ? P : never;
/** The query parameters of the operation. */
export type Query<R extends Route, M extends Method> =
  Operation<R, M> extends { parameters: { query?: infer Q } } ? Q : never;
/** What the operation answers on success (any of its 2xx). */
export type Answer<R extends Route, M extends Method> =
  Operation<R, M> extends { responses: infer Rs }
    ? {
        [S in keyof Rs]: S extends 200 | 201 | 202
          ? Rs[S] extends { content: { 'application/json': infer A } }
            ? A
            : never
          : never;
      }[keyof Rs]
    : never;

type ObjectPart<T> = T extends readonly unknown[] ? never : T extends object ? T : never;
/** The fields of a body, nested ones as `attachment.url`: what a node parameter may fill. */
export type BodyPath<T> = {
  [K in keyof ObjectPart<T> & string]: K | `${K}.${keyof ObjectPart<NonNullable<ObjectPart<T>[K]>> & string}`;
}[keyof ObjectPart<T> & string];

/** The gateway's error body: `{ success: false, error, details? }` (api.md, Errors). */
interface GatewayError {
  success?: false;
  error?: string;
  details?: Array<{ path?: Array<string | number>; message?: string }>;
  resetIn?: number;
}

export type GatewayContext = IExecuteFunctions | IHookFunctions | ILoadOptionsFunctions;

export interface GatewayRequest {
  method: Method;
  /** The route with its path parameters filled in (each encoded). */
  path: string;
  body?: unknown;
  qs?: IDataObject;
  headers?: IDataObject;
  itemIndex?: number;
  /** Statuses answered as they are instead of as an error (e.g. 404 for "no webhook"). */
  allow?: number[];
  /**
   * On a 429 whose `resetIn` is at most this many seconds: wait for it and try once more. For the
   * trigger's activation and deactivation, which n8n runs once (an action node has n8n's own
   * Retry On Fail); unset, a 429 is an error at once.
   */
  waitOnRateLimitS?: number;
}

/** The seconds a 429 says to wait (`resetIn`), or undefined when it says none. */
function resetInOf(status: number, body: unknown): number | undefined {
  if (status !== 429 || !body || typeof body !== 'object') return undefined;
  const resetIn = (body as GatewayError).resetIn;
  return typeof resetIn === 'number' && Number.isFinite(resetIn) && resetIn >= 0 ? resetIn : undefined;
}

interface Credentials {
  baseUrl?: string;
  deviceId?: string;
}

/** The base URL of the credential, checked: http(s), no query or fragment. */
function baseUrlOf(ctx: GatewayContext, credentials: Credentials, itemIndex?: number): string {
  const raw = String(credentials.baseUrl ?? '').trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new NodeOperationError(ctx.getNode(), `The credential's Base URL is not a URL: "${raw}"`, {
      itemIndex,
    });
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash) {
    throw new NodeOperationError(
      ctx.getNode(),
      `The credential's Base URL must be an http(s) address without query or fragment: "${raw}"`,
      { itemIndex },
    );
  }
  return raw.replace(/\/+$/, '');
}

/** The node's own Device ID parameter ('' when the node has none or it is empty). */
function nodeDeviceId(ctx: GatewayContext, itemIndex?: number): unknown {
  // An action node reads it per item (an expression may name another device for each); a
  // trigger's hooks and a node's lists (load options) have no item.
  return itemIndex === undefined
    ? (ctx as IHookFunctions).getNodeParameter(DEVICE_ID, '')
    : (ctx as IExecuteFunctions).getNodeParameter(DEVICE_ID, itemIndex, '');
}

/**
 * The device the request acts on: the node's Device ID, else the credential's, checked against
 * the gateway's rule; undefined when neither is set (the token's own device).
 */
export function deviceIdOf(
  ctx: GatewayContext,
  credentials: Credentials,
  itemIndex?: number,
): string | undefined {
  const fromNode = nodeDeviceId(ctx, itemIndex);
  const text = (value: unknown) => (value === undefined || value === null ? '' : String(value).trim());
  const [raw, where] =
    text(fromNode) !== ''
      ? [text(fromNode), "The node's Device ID"]
      : [text(credentials.deviceId), "The credential's Device ID"];
  if (raw === '') return undefined;
  if (!DEVICE_ID_PATTERN.test(raw)) {
    throw new NodeOperationError(
      ctx.getNode(),
      `${where} "${raw}" is not a device ID: 1 to 32 lowercase letters, digits, "_" or "-", starting with a letter or digit`,
      {
        itemIndex,
        description:
          'A workspace token names the device it acts on (e.g. d0123456789abcdef, as POST /devices answered); leave it empty for a device token',
      },
    );
  }
  return raw;
}

/** `route` with each `{name}` replaced by its value, encoded (a chat id may hold `@`). */
export function fillPath(route: string, params: Record<string, string> = {}): string {
  return route.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === '') throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

/** The gateway's `details` as one line per problem: `to[1]: must be a string`. */
export function describeDetails(details: GatewayError['details']): string | undefined {
  if (!Array.isArray(details) || details.length === 0) return undefined;
  return details
    .map((d) => {
      const at = Array.isArray(d?.path) && d.path.length > 0 ? `${d.path.join('.')}: ` : '';
      return `${at}${String(d?.message ?? '')}`;
    })
    .join('; ');
}

/**
 * One call of the API with the credential's token, on the device the node's or the credential's
 * Device ID names (under `/devices/{deviceId}`), else on the token's own. A refusal (any status
 * >= 400 the call does not `allow`, or `success: false`) throws a NodeApiError whose message is the
 * gateway's `error` and whose description lists its `details`.
 */
export async function gatewayRequest<T = IDataObject>(
  ctx: GatewayContext,
  request: GatewayRequest,
): Promise<{ status: number; body: T }> {
  const credentials = await ctx.getCredentials<Credentials>(CREDENTIAL, request.itemIndex);
  const base = baseUrlOf(ctx, credentials, request.itemIndex);
  const deviceId = deviceIdOf(ctx, credentials, request.itemIndex);
  const options: IHttpRequestOptions = {
    method: request.method.toUpperCase() as IHttpRequestMethods,
    url: `${base}${API_PREFIX}${devicePath(request.path, deviceId)}`,
    qs: request.qs,
    headers: { accept: 'application/json', ...request.headers },
    json: true,
    returnFullResponse: true,
    ignoreHttpStatusErrors: true,
  };
  if (request.body !== undefined) options.body = request.body as IDataObject;
  const call = async () =>
    (await ctx.helpers.httpRequestWithAuthentication.call(ctx, CREDENTIAL, options)) as {
      statusCode: number;
      body: unknown;
    };
  let response = await call();
  const resetIn = resetInOf(response.statusCode, response.body);
  if (
    resetIn !== undefined &&
    request.waitOnRateLimitS !== undefined &&
    resetIn <= request.waitOnRateLimitS
  ) {
    await sleep(resetIn * 1000 + 250); // resetIn is whole seconds, rounded up: a little past it
    response = await call();
  }
  const status = response.statusCode;
  const body = response.body as GatewayError;
  const refused = status >= 400 || (body !== null && typeof body === 'object' && body.success === false);
  if (refused && !(request.allow ?? []).includes(status)) {
    const message =
      body && typeof body === 'object' && typeof body.error === 'string'
        ? body.error
        : `The gateway answered HTTP ${status}`;
    throw new NodeApiError(ctx.getNode(), (body && typeof body === 'object' ? body : {}) as JsonObject, {
      message,
      description: describeDetails(body?.details),
      httpCode: String(status),
      itemIndex: request.itemIndex,
    });
  }
  return { status, body: response.body as T };
}

/** An answer without its `success` flag: what a node puts on its item. */
export function withoutSuccess(answer: unknown): IDataObject {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return { value: answer as string };
  const rest: IDataObject = { ...(answer as IDataObject) };
  delete rest.success;
  return rest;
}
