import type { ApiConfig } from '../config.js';
import { FEATURES } from '../features/mounts.js';
import {
  ADMIN_BASE,
  API_BASE,
  adminOpenApiPath,
  openApiPath,
  type AdminRoute,
  type AnyFeature,
  type ApiRoute,
  type Method,
} from '../http/route-table.js';
import {
  ADMIN_OPENAPI_TAGS,
  adminOperation,
  mirrored,
  mirroredName,
  withPathParams,
} from './admin-operation.js';
import { headers, schemas } from './components.js';
import type { JsonSchema } from './joi-schema.js';
import { operation } from './operation.js';
import { OPENAPI_TAGS } from './tags.js';

export { ADMIN_BASE, API_BASE };

/**
 * The paths of the document, from the features' public routes: each route's operation, as its
 * feature describes it under the route's handler name. A public route without an operation, or an
 * operation without a public route, is an error here (and so in every test that builds the
 * document): the mounted API and its description cannot drift. Admin routes are the admin
 * document's (adminFeaturePaths).
 */
export function featurePaths(config: ApiConfig, features: readonly AnyFeature[] = FEATURES) {
  const op = (spec: Parameters<typeof operation>[0]) => operation(spec, config);
  const paths: Record<string, Partial<Record<Method, JsonSchema>>> = {};
  for (const f of features) {
    const routes = f.routes.filter((r): r is ApiRoute => r.surface !== 'admin');
    const operations: Record<string, JsonSchema> = f.operations(config, op);
    const described = new Set<string>();
    for (const route of routes) {
      const operationOf = operations[route.handler];
      if (!operationOf)
        throw new Error(
          `openapi: ${route.method.toUpperCase()} ${route.path} (${f.name}) is mounted, not documented`,
        );
      (paths[openApiPath(route)] ??= {})[route.method] = operationOf;
      described.add(route.handler);
    }
    for (const name of Object.keys(operations))
      if (!described.has(name)) throw new Error(`openapi: ${name} (${f.name}) is documented, not mounted`);
  }
  return paths;
}

/**
 * The OpenAPI 3.1 document of the public API. Request bodies and query parameters are generated
 * from the joi schemas the API validates with (@mgw/contracts), so the two cannot drift; response
 * bodies are the closed schemas of components.ts and the features' own, which the API tests check
 * every answer against; the paths are the mounted routes' (featurePaths).
 */
export function buildOpenApi(config: ApiConfig, features: readonly AnyFeature[] = FEATURES): JsonSchema {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Messenger Gateway API',
      version: '1',
      description:
        'HTTP/JSON gateway for linking a WhatsApp account and sending text, media and OTP messages. Every failure is `{ "success": false, "error": "…" }`. Unknown paths answer 404 and known paths called with another method 405 (both after authentication). A workspace token (docs/workspaces.md) names the device it acts on in the path: every path under /api/messenger/v1 is also served under /api/messenger/v1/devices/{deviceId}/… (`x-device-path`).',
    },
    servers: [{ url: '/' }],
    'x-device-path': {
      prefix: `${API_BASE}/devices/{deviceId}`,
      description:
        'Every operation under /api/messenger/v1 (but the Workspace ones) is also served with this prefix before its path, for the device {deviceId}: /api/messenger/v1/devices/d0123456789abcdef/send is POST /send for that device. A workspace token must name its device so; a device token may name its own; any other device answers 404.',
    },
    tags: [...OPENAPI_TAGS],
    security: [{ bearerAuth: [] }, { queryToken: [] }],
    paths: featurePaths(config, features),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: '`Authorization: Bearer <API token>` (recommended).',
        },
        queryToken: { type: 'apiKey', in: 'query', name: 'token', description: '`?token=<API token>`.' },
      },
      schemas: Object.assign({}, schemas, ...features.map((f) => f.schemas ?? {})) as JsonSchema,
      headers,
    },
  };
}

/**
 * The paths of the admin document, from the features' admin routes as featurePaths takes the
 * public ones from their public routes: each route's operation, its feature's own
 * (`adminOperations`) or, for a route `admin<Name>` serving the public handler `<name>` for the
 * device its path names, the public operation's (`mirrored`). An admin route without an operation,
 * or an operation without an admin route, is an error here. Each operation names the path's
 * parameters, and `x-console` says who of a workspace's console may call it (the row's `console`;
 * `operator`: the operator only).
 */
export function adminFeaturePaths(config: ApiConfig, features: readonly AnyFeature[] = FEATURES) {
  const op = (spec: Parameters<typeof operation>[0]) => operation(spec, config);
  const paths: Record<string, Partial<Record<Method, JsonSchema>>> = {};
  for (const f of features) {
    const publicRoutes = f.routes.filter((r): r is ApiRoute => r.surface !== 'admin');
    const routes = f.routes.filter((r): r is AdminRoute => r.surface === 'admin');
    const publicOperations: Record<string, JsonSchema> = f.operations(config, op);
    const own: Partial<Record<string, JsonSchema>> =
      f.adminOperations?.(config, adminOperation, publicOperations) ?? {};
    const described = new Set<string>();
    for (const route of routes) {
      const base = mirroredName(route.handler);
      const publicRoute = base ? publicRoutes.find((r) => r.handler === base) : undefined;
      const operationOf =
        own[route.handler] ??
        (publicRoute &&
        publicRoute.method === route.method &&
        route.path === `/devices/:deviceId${publicRoute.path}`
          ? mirrored(publicOperations[publicRoute.handler]!)
          : undefined);
      if (!operationOf)
        throw new Error(
          `openapi: admin ${route.method.toUpperCase()} ${route.path} (${f.name}) is mounted, not documented`,
        );
      const path = adminOpenApiPath(route);
      (paths[path] ??= {})[route.method] = {
        ...withPathParams(operationOf, path),
        ...(route.auth === 'none' ? { security: [] } : {}),
        'x-console': route.console ?? 'operator',
      };
      described.add(route.handler);
    }
    for (const name of Object.keys(own))
      if (!described.has(name))
        throw new Error(`openapi: admin ${name} (${f.name}) is documented, not mounted`);
  }
  return paths;
}

/**
 * The OpenAPI 3.1 document of the admin API (the console's, and automation's with an admin token),
 * built from the admin routes as buildOpenApi is from the public ones; its components are the
 * public document's and the admin answers' own. The API tests check every admin answer against it
 * (test/helpers/openapi-check.ts), and the console's types are generated from it
 * (libs/console/src/kit/admin-schema.d.ts).
 */
export function buildAdminOpenApi(config: ApiConfig, features: readonly AnyFeature[] = FEATURES): JsonSchema {
  const paths = adminFeaturePaths(config, features);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Messenger Gateway admin API',
      version: '1',
      description:
        'The admin API under /api/admin/v1 (docs/dashboard.md "Admin API"): what the console calls, and automation with an admin token. Every failure is `{ "success": false, "error": "…" }`. A dashboard session (the cookie of POST /session) sends its `X-CSRF-Token` with every change; an admin token (`Authorization: Bearer`) needs none. A workspace console session may call the operations whose `x-console` names its role (`read`: both roles, `chat`: both roles, `admin`: its admin, `session`: everyone signed in; `operator`: the operator only, 404 for a console), for its own workspace, devices and pools only (404 for any other). Answers are never cached (`Cache-Control: no-store`).',
    },
    servers: [{ url: '/' }],
    tags: [...ADMIN_OPENAPI_TAGS],
    security: [{ adminSession: [] }, { adminToken: [] }],
    paths,
    components: {
      securitySchemes: {
        adminSession: {
          type: 'apiKey',
          in: 'cookie',
          name: '__Host-mgw_admin',
          description:
            'The session cookie POST /session sets (`mgw_admin` over plain HTTP); a change also sends the `X-CSRF-Token` header with the `csrfToken` of the session.',
        },
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            '`Authorization: Bearer <admin token>`: ADMIN_API_TOKEN, or an `adm_…` token of the token CLI.',
        },
      },
      schemas: reachable(
        paths,
        Object.assign(
          {},
          schemas,
          ...features.map((f) => f.schemas ?? {}),
          ...features.map((f) => f.adminSchemas ?? {}),
        ) as Record<string, JsonSchema>,
      ),
      headers,
    },
  };
}

/** The components `from` refers to, and those they refer to, by name (the others are left out). */
function reachable(from: unknown, all: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const kept: Record<string, JsonSchema> = {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      const name =
        key === '$ref' && typeof value === 'string'
          ? /^#\/components\/schemas\/(.+)$/.exec(value)?.[1]
          : undefined;
      if (name !== undefined && !(name in kept)) {
        if (!all[name]) throw new Error(`openapi: ${value} names no component`);
        kept[name] = all[name];
        visit(all[name]);
      } else visit(value);
    }
  };
  visit(from);
  return Object.fromEntries(
    Object.keys(all)
      .filter((name) => name in kept)
      .map((name) => [name, kept[name]!]),
  );
}
