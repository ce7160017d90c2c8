import type { ApiConfig } from '../config.js';
import { FEATURES } from '../features/mounts.js';
import { API_BASE, openApiPath, type AnyFeature, type ApiRoute, type Method } from '../http/route-table.js';
import { headers, schemas } from './components.js';
import type { JsonSchema } from './joi-schema.js';
import { operation } from './operation.js';
import { OPENAPI_TAGS } from './tags.js';

export { API_BASE };

/**
 * The paths of the document, from the features' public routes: each route's operation, as its
 * feature describes it under the route's handler name. A public route without an operation, or an
 * operation without a public route, is an error here (and so in every test that builds the
 * document): the mounted API and its description cannot drift. Admin routes are not documented.
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
