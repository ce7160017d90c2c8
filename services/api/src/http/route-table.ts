import type { ErrorRequestHandler, Express, RequestHandler } from 'express';
import type { ApiServices } from '../api-services.js';
import type { ApiConfig } from '../config.js';
import type { JsonSchema } from '../openapi/joi-schema.js';
import type { AdminOperationSpec } from '../openapi/admin-operation.js';
import type { OperationSpec } from '../openapi/operation.js';
import { methodNotAllowed, noSuchPath } from './api-error.js';
import { jsonBody, noBody, type JsonBodyOptions } from './body.js';
import { rawBody, type RawBodyOptions } from './raw-body.js';
import type { LimitedEndpoint } from './rate-limits.js';
import type { SendRateLimit } from './send-rate-limit.js';
import type { ApiGuard } from './auth.js';
import type { AdminAuth } from './session/admin-auth.js';
import { scopedMethodNotAllowed, type ConsoleAccess } from './session/console-scope.js';
import { oneLayer } from './one-layer.js';

/** The versioned API's base path; every public route is under it unless `root`. */
export const API_BASE = '/api/messenger/v1';
/** The admin API's base path (the dashboard's, and automation's with an admin token). */
export const ADMIN_BASE = '/api/admin/v1';

/** The methods a route may have, in the order a 405's `Allow` names them. */
export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type Method = (typeof METHODS)[number];

/**
 * A route's body handling: a JSON body within these bounds, the raw bytes (POST /media), or
 * `none` (any body is a 400). The idle timeout is the app's, and the depth the surface's unless
 * the row says (MAX_JSON_DEPTH, ADMIN_MAX_DEPTH), added when it mounts. A function is given the
 * configuration (a list's length is a setting). Absent: a GET, whose body nobody reads.
 */
export type BodySpec =
  | { json: Omit<JsonBodyOptions, 'maxDepth' | 'idleTimeoutMs'> & { maxDepth?: number } }
  | { raw: Omit<RawBodyOptions, 'idleTimeoutMs'> }
  | 'none';

/** Which per-token limit counts a route: a RATE_LIMIT_* endpoint, `send` (its own), or none. */
export type LimitName = LimitedEndpoint | 'send' | 'none';

/** What every route row says, whichever surface it is on. */
interface RouteRow<H extends string> {
  method: Method;
  /** An express path under its surface's base (`/labels/:labelId`), or from the root when `root`. */
  path: string;
  body?: BodySpec | ((config: ApiConfig) => BodySpec);
  /** The name of its handler in the feature's `handlers`. */
  handler: H;
  /**
   * express answers HEAD with a GET route. `refuse`: a HEAD is a 405 (GET /connect starts a
   * pairing); `unlisted`: a GET that does not name HEAD in its 405s (a WebSocket upgrade).
   */
  head?: 'refuse' | 'unlisted';
}

/** A route of the public API: under API_BASE, an API token, a per-token limit, an OpenAPI operation. */
export interface ApiRoute<H extends string = string> extends RouteRow<H> {
  surface?: 'api';
  root?: true;
  /** `token` (default): the API token first; `subprotocol`: a WebSocket's token, then the same; `none`. */
  auth?: 'token' | 'subprotocol' | 'none';
  limit: LimitName;
  /**
   * What the route acts on, which decides who may call it (http/auth.ts, docs/workspaces.md):
   * `device` (absent) — one device: a device token's, or the one a workspace token names in the
   * path; `workspace` — the workspace itself: a workspace token only (403 for any other).
   */
  scope?: 'device' | 'workspace';
  /** A pool token may call it (docs/pools.md: sending, and reading and controlling what it sent). */
  pool?: true;
  /**
   * One of the busiest routes (`POST /send`, `POST /otp`): also mounted first, ahead of the path
   * middleware and every other route, for a request whose URL is exactly its path (no query, no
   * `/devices/{id}` prefix: those take the usual way to the same chain). Such a URL is already in
   * its one spelling, so nothing it skips would change it (`routeMounts`).
   */
  hot?: true;
}

/**
 * A route of the admin API (the dashboard's): under ADMIN_BASE, a dashboard session (with its CSRF
 * token for a change) or an admin token, and no per-token limit. `auth: 'none'`: the sign-in only.
 */
export interface AdminRoute<H extends string = string> extends RouteRow<H> {
  surface: 'admin';
  auth?: 'admin' | 'none';
  /**
   * Who of a workspace's console may call it (docs/workspaces.md "The console";
   * http/session/console-scope.ts): absent, the operator only (a console session gets 404 `Not
   * found`, as for a path that does not exist); `read` and `chat` both roles; `admin` the
   * workspace's admin (an agent gets 403); `session` everyone signed in. The path's
   * `:workspaceId`, `:deviceId` and `:poolId` are then checked against the session's workspace.
   */
  console?: ConsoleAccess;
}

/** One route of a feature, on either surface: everything the app needs to mount it. */
export type RouteSpec<H extends string = string> = ApiRoute<H> | AdminRoute<H>;

/** Admin bodies are a few short fields: 16 KB, 64 values (a row may say more). */
export const ADMIN_JSON: BodySpec = {
  json: {
    limitBytes: 16 * 1024,
    maxValues: 64,
    tooLargeError: 'Request body too large: admin bodies are limited to 16 KB',
  },
};

/** What a feature's handlers may need beyond the services, built once by the app. */
export interface MountKit {
  /** The /send limiter the send routes settle. */
  sendLimit: SendRateLimit;
  /** The admin sign-in and its guard; absent when the admin API is off (no password, no token). */
  adminAuth?: AdminAuth;
}

/** The OpenAPI operation of each public route, by its handler's name (the row's own key). */
export type Operations<H extends string> = Record<H, JsonSchema>;

/**
 * A capability: its routes on both surfaces (one list), the handlers that serve them, and the
 * OpenAPI operation of each public route, keyed by the route's handler (never by a second path).
 * The app mounts the routes and derives its 405 answers from them; the document takes its paths
 * from the same rows (openapi/document.ts): the lists are one.
 */
export interface Feature<H extends string = string, A extends string = never> {
  name: string;
  routes: readonly (ApiRoute<H> | AdminRoute<A>)[];
  handlers(s: ApiServices, kit: MountKit): Record<H | A, RequestHandler>;
  operations(config: ApiConfig, operation: (spec: OperationSpec) => JsonSchema): Operations<H>;
  /** The components the feature's answers use (merged into `components.schemas`). */
  schemas?: Record<string, JsonSchema>;
  /**
   * The admin document's operation of each admin route but those that mirror a public route
   * (`admin<Name>` serving the public `<name>` for the path's device: derived from the public
   * operation, openapi/admin-operation.ts `mirrored`), keyed by the route's handler. `operations`
   * are the feature's public ones (an admin route serving a public handler by another name may
   * mirror it).
   */
  adminOperations?(
    config: ApiConfig,
    operation: (spec: AdminOperationSpec) => JsonSchema,
    operations: Operations<H>,
  ): Partial<Record<A, JsonSchema>>;
  /** The components only the admin answers use (merged into the admin document's schemas). */
  adminSchemas?: Record<string, JsonSchema>;
}

/** Declares a feature (the handler names checked against its routes and operations). */
export const feature = <H extends string, A extends string = never>(f: Feature<H, A>): Feature<H, A> => f;

/** A feature as the app's lists hold it (its names forgotten). */
export type AnyFeature = Feature<string, string>;

const isAdmin = (route: RouteSpec): route is AdminRoute => route.surface === 'admin';

/** The OpenAPI path of an admin route: `/pools/:poolId` → `/api/admin/v1/pools/{poolId}`. */
export const adminOpenApiPath = (route: Pick<AdminRoute, 'path'>): string =>
  `${ADMIN_BASE}${route.path.replace(/:(\w+)/g, '{$1}')}`;

/** The OpenAPI path of a public route: `/labels/:labelId` → `/api/messenger/v1/labels/{labelId}`. */
export const openApiPath = (route: Pick<ApiRoute, 'path' | 'root'>): string =>
  `${route.root ? '' : API_BASE}${route.path.replace(/:(\w+)/g, '{$1}')}`;

/** The full express path of a route. */
export const fullPath = (route: RouteSpec): string =>
  `${isAdmin(route) ? ADMIN_BASE : route.root ? '' : API_BASE}${route.path}`;

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

/** The middleware in front of every route, built once by the app. */
export interface RouteChainParts {
  auth: ApiGuard;
  tokenFromSubprotocol: RequestHandler;
  limits: Record<LimitedEndpoint, RequestHandler>;
  sendLimit: SendRateLimit;
  config: ApiConfig;
}

/** The two steps of mounting the features (`routeMounts`), taken in the app's order. */
export interface RouteMounts {
  /** The `hot` rows, each as one layer for its exact path: before the path middleware. */
  hot(app: Express): void;
  /** Every row, then the 405s and each base's 404: after the path middleware. */
  all(app: Express): void;
}

/**
 * Mounts both surfaces of the features in their order (express tries routes in order), then, per
 * known path, a 405 naming the methods it serves, then each base's 404 — all after the caller's
 * credentials, so nothing about a path is revealed without them. A public route runs: [its token]
 * → its per-token limit → its body → its handler; an admin route: [the admin guard] → [the
 * console's guard of its `console`] → its body → its handler. Each route's chain is one express
 * layer (`oneLayer`). With the admin API off (no ADMIN_PASSWORD, no ADMIN_API_TOKEN), everything
 * under ADMIN_BASE is a 404 and no admin route is mounted.
 *
 * A `hot` row is mounted twice with the same chain: first (`hot`), for a request whose URL is
 * exactly the route's path — canonical by itself, so `canonicalPath` would pass it and
 * `devicePath` would not touch it — and in its place (`all`) for every other spelling that reaches
 * it (a query, a `/devices/{id}` prefix). Its guard, limit, body and handler are the same either way.
 */
export function routeMounts(
  features: readonly AnyFeature[],
  s: ApiServices,
  parts: RouteChainParts,
  kit: MountKit,
): RouteMounts {
  const idleTimeoutMs = parts.config.http.bodyIdleTimeoutMs;
  const guard = kit.adminAuth?.require();
  // One parser per body spec and surface (the surface gives its depth unless the spec says).
  const parsers = { api: new Map<unknown, RequestHandler>(), admin: new Map<unknown, RequestHandler>() };
  const bodyOf = (route: RouteSpec): RequestHandler[] => {
    if (route.body === undefined) return [];
    const cache = parsers[isAdmin(route) ? 'admin' : 'api'];
    let parser = cache.get(route.body);
    if (!parser) {
      const spec = typeof route.body === 'function' ? route.body(parts.config) : route.body;
      const maxDepth = isAdmin(route) ? ADMIN_MAX_DEPTH : MAX_JSON_DEPTH;
      parser =
        spec === 'none'
          ? noBody()
          : 'raw' in spec
            ? rawBody({ ...spec.raw, idleTimeoutMs })
            : jsonBody({ maxDepth, ...spec.json, idleTimeoutMs });
      cache.set(route.body, parser);
    }
    return [parser];
  };
  const authOf = (route: RouteSpec): RequestHandler[] => {
    if (route.auth === 'none') return [];
    if (isAdmin(route)) return [guard!, kit.adminAuth!.scope(route.console)];
    // The route's own guard: its row's scope decides, never a second reading of the path.
    const token = parts.auth.route(route);
    return route.auth === 'subprotocol' ? [parts.tokenFromSubprotocol, token] : [token];
  };
  const limitOf = (route: RouteSpec): RequestHandler[] =>
    isAdmin(route) || route.limit === 'none'
      ? []
      : route.limit === 'send'
        ? [parts.sendLimit.start]
        : [parts.limits[route.limit]];
  const settle = (route: RouteSpec): ErrorRequestHandler[] =>
    !isAdmin(route) && route.limit === 'send' ? [parts.sendLimit.settleErrors] : [];

  const rows = features.flatMap((f) => f.routes.map((route) => ({ f, route })));
  const mounted = guard ? rows : rows.filter(({ route }) => !isAdmin(route));
  const handlersOf = new Map(features.map((f) => [f, f.handlers(s, kit)]));
  // Public routes first (the busiest), then the admin API's, which no cache may keep.
  const ordered = [
    ...mounted.filter(({ route }) => !isAdmin(route)),
    ...mounted.filter(({ route }) => isAdmin(route)),
  ].map(({ f, route }) => {
    const handler = handlersOf.get(f)![route.handler];
    if (!handler) throw new Error(`${f.name}: no handler ${route.handler} for ${route.method} ${route.path}`);
    const chain = oneLayer([...authOf(route), ...limitOf(route), ...bodyOf(route), handler], settle(route));
    return { f, route, chain };
  });

  return {
    hot(app) {
      for (const { route, chain } of ordered) {
        if (isAdmin(route) || !route.hot) continue;
        const path = fullPath(route);
        // express would also match `…/send/` (a trailing slash) and `…/Send` never: only the exact URL.
        app[route.method](path, (req, res, next) => (req.url === path ? chain(req, res, next) : next()));
      }
    },
    all(app) {
      let adminStarted = false;
      for (const { f, route, chain } of ordered) {
        if (isAdmin(route) && !adminStarted) {
          adminStarted = true;
          app.use(ADMIN_BASE, noStore);
        }
        const path = fullPath(route);
        if (route.head === 'refuse')
          app.head(path, parts.auth.credentials, methodNotAllowed(allowOf(f, route)));
        app[route.method](path, chain);
      }
      const all = ordered.map(({ route }) => route);
      // What a console session may call of each admin path: its 405 names those methods only.
      const consoleMethods = allowedMethods(all.filter((r) => isAdmin(r) && r.console !== undefined));
      for (const [path, methods] of allowedMethods(all)) {
        // The credentials alone (a WebSocket's subprotocol token counts only for its upgrade).
        const route = all.find((r) => fullPath(r) === path)!;
        if (isAdmin(route)) {
          app.all(path, guard!, scopedMethodNotAllowed(methods, consoleMethods.get(path)));
          continue;
        }
        const credentials = route.auth === 'none' ? [] : [parts.auth.credentials];
        app.all(path, ...credentials, methodNotAllowed(methods));
      }
      // Unknown paths under either base need credentials too: without them, nothing is revealed.
      app.use(API_BASE, parts.auth.credentials, noSuchPath);
      app.use(ADMIN_BASE, ...(guard ? [guard] : []), noSuchPath);
    },
  };
}

/** Admin answers (sessions, tokens, account details) are never for a cache to keep. */
const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/** The `Allow` of a route's path within its feature (a HEAD refused before the routes are mounted). */
function allowOf(f: AnyFeature, route: RouteSpec): string {
  return allowedMethods(f.routes.filter((r) => fullPath(r) === fullPath(route))).get(fullPath(route))!;
}

/** Our bodies nest two levels (`{ attachment: {…} }`, `{ to: […] }`); 8 leaves room and refuses hostile JSON. */
export const MAX_JSON_DEPTH = 8;
/** Admin bodies are flat but for a field or two: 4 levels. */
export const ADMIN_MAX_DEPTH = 4;
/** Values a body may hold besides its lists (fields of the body and its attachment). */
export const FIELD_ALLOWANCE = 64;
