import type { ErrorRequestHandler, Express, RequestHandler } from 'express';
import type { ApiServices } from '../api-services.js';
import type { ApiConfig } from '../config.js';
import type { JsonSchema } from '../openapi/joi-schema.js';
import type { OperationSpec } from '../openapi/operation.js';
import { methodNotAllowed } from './api-error.js';
import { jsonBody, noBody, type JsonBodyOptions } from './body.js';
import { rawBody, type RawBodyOptions } from './raw-body.js';
import type { LimitedEndpoint } from './rate-limits.js';
import type { SendRateLimit } from './send-rate-limit.js';

/** The versioned API's base path; every feature's paths are under it unless `root`. */
export const API_BASE = '/api/messenger/v1';

/** The methods a route may have, in the order a 405's `Allow` names them. */
export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type Method = (typeof METHODS)[number];

/**
 * A route's body handling: a JSON body within these bounds, the raw bytes (POST /media), or
 * `none` (any body is a 400). The depth and the idle timeout are the app's, added when it mounts.
 * A function is given the configuration (a list's length is a setting). Absent: a GET, whose
 * body nobody reads.
 */
export type BodySpec =
  | { json: Omit<JsonBodyOptions, 'maxDepth' | 'idleTimeoutMs'> }
  | { raw: Omit<RawBodyOptions, 'idleTimeoutMs'> }
  | 'none';

/** Which per-token limit counts a route: a RATE_LIMIT_* endpoint, `send` (its own), or none. */
export type LimitName = LimitedEndpoint | 'send' | 'none';

/** One route of a feature: everything the app needs to mount it, declared once in its `mount.ts`. */
export interface RouteSpec<H extends string = string> {
  method: Method;
  /** An express path under API_BASE (`/labels/:labelId`), or from the root when `root`. */
  path: string;
  root?: true;
  /** `token` (default): the API token first; `subprotocol`: a WebSocket's token, then the same; `none`. */
  auth?: 'token' | 'subprotocol' | 'none';
  limit: LimitName;
  body?: BodySpec | ((config: ApiConfig) => BodySpec);
  /** The name of its handler in the feature's `handlers`. */
  handler: H;
  /**
   * express answers HEAD with a GET route. `refuse`: a HEAD is a 405 (GET /connect starts a
   * pairing); `unlisted`: a GET that does not name HEAD in its 405s (a WebSocket upgrade).
   */
  head?: 'refuse' | 'unlisted';
}

/** What a feature's handlers may need beyond the services: the /send limiter they settle. */
export interface MountKit {
  sendLimit: SendRateLimit;
}

/** The OpenAPI operations of a feature: a path (OpenAPI form, under API_BASE unless root) → method → operation. */
export type FeaturePaths = Record<string, Partial<Record<Method, JsonSchema>>>;

/**
 * A capability of the public API: its routes, the handlers that serve them, and what the OpenAPI
 * document says of them. The app mounts the routes, derives its 405 answers from them, and the
 * document takes its paths from the same features (openapi/document.ts), so the three lists are
 * one.
 */
export interface Feature<H extends string = string> {
  name: string;
  routes: readonly RouteSpec<H>[];
  handlers(s: ApiServices, kit: MountKit): Record<H, RequestHandler>;
  paths(config: ApiConfig, operation: (spec: OperationSpec) => JsonSchema): FeaturePaths;
  /** The components the feature's answers use (merged into `components.schemas`). */
  schemas?: Record<string, JsonSchema>;
}

/** Declares a feature (the handler names checked against its routes). */
export const feature = <H extends string>(f: Feature<H>): Feature<H> => f;

/** The OpenAPI path of an express path: `/labels/:labelId` → `/labels/{labelId}`. */
export const openApiPath = (route: Pick<RouteSpec, 'path' | 'root'>): string =>
  `${route.root ? '' : API_BASE}${route.path.replace(/:(\w+)/g, '{$1}')}`;

/** The full express path of a route. */
export const fullPath = (route: Pick<RouteSpec, 'path' | 'root'>): string =>
  `${route.root ? '' : API_BASE}${route.path}`;

/** A path's `Allow`: its methods in METHODS order, HEAD beside GET unless the GET says otherwise. */
export function allowedMethods(routes: readonly RouteSpec[]): Map<string, string> {
  const byPath = new Map<string, RouteSpec[]>();
  for (const route of routes) {
    const path = fullPath(route);
    byPath.set(path, [...(byPath.get(path) ?? []), route]);
  }
  const allow = new Map<string, string>();
  for (const [path, list] of byPath) {
    const names: string[] = [];
    for (const method of METHODS) {
      const route = list.find((r) => r.method === method);
      if (!route) continue;
      names.push(method.toUpperCase());
      if (method === 'get' && !route.head) names.push('HEAD');
    }
    allow.set(path, names.join(', '));
  }
  return allow;
}

/** The middleware in front of every versioned route, built once by the app. */
export interface RouteChainParts {
  auth: RequestHandler;
  tokenFromSubprotocol: RequestHandler;
  limits: Record<LimitedEndpoint, RequestHandler>;
  sendLimit: SendRateLimit;
  config: ApiConfig;
}

/**
 * Mounts the features' routes in their order (express tries them in order), then, per known path,
 * a 405 naming the methods it serves (after the token, like a 404, where the path wants one).
 * Every route runs: [its token] → its per-token limit → its body handling → its handler.
 */
export function mountFeatures(
  app: Express,
  features: readonly Feature[],
  s: ApiServices,
  parts: RouteChainParts,
): void {
  const kit: MountKit = { sendLimit: parts.sendLimit };
  const idleTimeoutMs = parts.config.http.bodyIdleTimeoutMs;
  const parsers = new Map<unknown, RequestHandler>();
  const bodyOf = (route: RouteSpec): RequestHandler[] => {
    if (route.body === undefined) return [];
    let parser = parsers.get(route.body);
    if (!parser) {
      const spec = typeof route.body === 'function' ? route.body(parts.config) : route.body;
      parser =
        spec === 'none'
          ? noBody()
          : 'raw' in spec
            ? rawBody({ ...spec.raw, idleTimeoutMs })
            : jsonBody({ ...spec.json, maxDepth: MAX_JSON_DEPTH, idleTimeoutMs });
      parsers.set(route.body, parser);
    }
    return [parser];
  };
  const authOf = (route: RouteSpec): RequestHandler[] =>
    route.auth === 'none'
      ? []
      : route.auth === 'subprotocol'
        ? [parts.tokenFromSubprotocol, parts.auth]
        : [parts.auth];
  const limitOf = (route: RouteSpec): RequestHandler[] =>
    route.limit === 'none'
      ? []
      : route.limit === 'send'
        ? [parts.sendLimit.start]
        : [parts.limits[route.limit]];
  const settle = (route: RouteSpec): ErrorRequestHandler[] =>
    route.limit === 'send' ? [parts.sendLimit.settleErrors] : [];

  const all: RouteSpec[] = [];
  for (const f of features) {
    const handlers = f.handlers(s, kit);
    for (const route of f.routes) {
      const path = fullPath(route);
      const handler = handlers[route.handler];
      if (!handler)
        throw new Error(`${f.name}: no handler ${route.handler} for ${route.method} ${route.path}`);
      if (route.head === 'refuse') app.head(path, ...authOf(route), methodNotAllowed(allowOf(f, route)));
      app[route.method](
        path,
        ...authOf(route),
        ...limitOf(route),
        ...bodyOf(route),
        handler,
        ...settle(route),
      );
      all.push(route);
    }
  }
  const allow = allowedMethods(all);
  for (const [path, methods] of allow) {
    // The token alone (a WebSocket's subprotocol token counts only for its upgrade).
    const route = all.find((r) => fullPath(r) === path)!;
    app.all(path, ...(route.auth === 'none' ? [] : [parts.auth]), methodNotAllowed(methods));
  }
}

/** The `Allow` of a route's path within its feature (a HEAD refused before the routes are mounted). */
function allowOf(f: Feature, route: RouteSpec): string {
  return allowedMethods(f.routes.filter((r) => fullPath(r) === fullPath(route))).get(fullPath(route))!;
}

/** Our bodies nest two levels (`{ attachment: {…} }`, `{ to: […] }`); 8 leaves room and refuses hostile JSON. */
export const MAX_JSON_DEPTH = 8;
/** Values a body may hold besides its lists (fields of the body and its attachment). */
export const FIELD_ALLOWANCE = 64;
