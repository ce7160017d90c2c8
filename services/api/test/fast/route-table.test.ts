import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { loadApiConfig } from '../../src/config.js';
import { FEATURES } from '../../src/features/mounts.js';
import {
  API_BASE,
  allowedMethods,
  feature,
  openApiPath,
  type AdminRoute,
  type AnyFeature,
  type ApiRoute,
} from '../../src/http/route-table.js';
import { buildOpenApi, featurePaths } from '../../src/openapi/document.js';

const config = loadApiConfig({ MGW_ENCRYPTION_KEY: `doc:${Buffer.alloc(32, 7).toString('base64')}` });
/** The public API's routes (the admin API's are not in the document). */
const routes = FEATURES.flatMap((f) => f.routes).filter((r): r is ApiRoute => r.surface !== 'admin');

/** The document as last reviewed (the test below says how to refresh it). */
const SNAPSHOT = new URL('../openapi/fixtures/openapi-snapshot.json.gz', import.meta.url);

/** The same JSON with every object's keys in order: two documents equal "apart from ordering". */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  return value;
}

/** Where two JSON values differ, as JSON pointers (the first 40). */
function differences(a: unknown, b: unknown, at = '', out: string[] = []): string[] {
  if (out.length >= 40 || JSON.stringify(a) === JSON.stringify(b)) return out;
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') {
    out.push(at || '/');
    return out;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys)
    differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}/${k}`, out);
  return out;
}

const probe = (over: Partial<AnyFeature>): AnyFeature =>
  feature<string, string>({
    name: 'probe',
    routes: [{ method: 'get', path: '/probe/:id', limit: 'none', handler: 'get' }],
    handlers: () => ({ get: () => undefined }),
    operations: () => ({ get: { summary: 'probe' } }),
    ...over,
  });

describe('The route table (features/mounts.ts): mounted once, documented from the same list', () => {
  it('When the document is built, then every mounted route has its operation and every operation its route', () => {
    const paths = featurePaths(config);
    const documented = Object.entries(paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`));
    const mounted = routes.map((r) => `${r.method} ${openApiPath(r)}`);
    expect(documented.sort()).to.deep.equal([...mounted].sort());
    expect(new Set(mounted).size, 'no route mounted twice').to.equal(mounted.length);
    expect(mounted.length).to.be.greaterThan(80);
  });

  it('When a feature mounts a route it does not document, or documents one it does not mount, then the document is refused', () => {
    expect(() => featurePaths(config, [probe({ operations: () => ({}) })])).to.throw(
      'GET /probe/:id (probe) is mounted, not documented',
    );
    expect(() => featurePaths(config, [probe({ operations: () => ({ get: {}, remove: {} }) })])).to.throw(
      'remove (probe) is documented, not mounted',
    );
    expect(featurePaths(config, [probe({})])).to.have.keys(`${API_BASE}/probe/{id}`);
  });

  it('When a known path is called with another method, then its 405 names exactly the methods the table mounts', () => {
    const allow = Object.fromEntries(
      [...allowedMethods(routes)].map(([path, methods]) => [path.replace(API_BASE, ''), methods]),
    );
    // The table as it was written by hand in app.ts before the features (c61fd0a), with the
    // account routes' own table and the unauthenticated paths.
    expect(allow).to.deep.equal({
      '/healthz': 'GET, HEAD',
      '/readyz': 'GET, HEAD',
      '/openapi.json': 'GET, HEAD',
      '/api/cloud/v1/webhook': 'GET, HEAD, POST',
      '/connect': 'GET, POST',
      '/cloud': 'GET, HEAD, PUT, DELETE',
      '/cloud/templates': 'GET, HEAD',
      '/connect/passkey': 'GET, HEAD, POST',
      '/connect/passkey/confirm': 'POST',
      '/disconnect': 'POST',
      '/status': 'GET, HEAD',
      '/send': 'POST',
      '/otp': 'POST',
      '/messages': 'GET, HEAD',
      '/messages/:id': 'GET, HEAD',
      '/messages/:id/media': 'GET, HEAD',
      '/media': 'POST',
      '/media/settings': 'GET, HEAD, PUT',
      '/media/:id': 'GET, HEAD, DELETE',
      '/batches': 'GET, HEAD',
      '/batches/:batchId': 'GET, HEAD',
      '/batches/:batchId/pause': 'POST',
      '/batches/:batchId/resume': 'POST',
      '/batches/:batchId/cancel': 'POST',
      '/events': 'GET, HEAD',
      '/events/stream': 'GET, HEAD',
      '/events/ws': 'GET',
      '/events/brokers': 'GET, HEAD, PUT',
      '/webhook': 'GET, HEAD, PUT, DELETE',
      '/contacts/check': 'POST',
      '/contacts/username': 'POST',
      '/groups': 'GET, HEAD, POST',
      '/groups/join': 'POST',
      '/groups/:id': 'GET, HEAD, PATCH',
      '/groups/:id/participants': 'POST',
      '/groups/:id/leave': 'POST',
      '/statuses': 'GET, HEAD, POST',
      '/statuses/settings': 'GET, HEAD, PUT',
      '/statuses/:id': 'DELETE',
      '/channels': 'GET, HEAD, POST',
      '/channels/:id': 'GET, HEAD, PATCH, DELETE',
      '/channels/:id/follow': 'POST',
      '/channels/:id/unfollow': 'POST',
      '/channels/:id/posts': 'GET, HEAD, POST',
      '/channels/:id/posts/:messageId': 'PATCH, DELETE',
      '/chats': 'GET, HEAD',
      '/chats/:chatId/messages': 'GET, HEAD',
      '/chats/:chatId/read': 'POST',
      '/messages/:id/read': 'POST',
      '/settings': 'GET, HEAD, PATCH',
      '/groups/:id/invite': 'GET, HEAD',
      '/groups/:id/invite/revoke': 'POST',
      '/labels': 'GET, HEAD, POST',
      '/labels/:labelId': 'PATCH, DELETE',
      '/labels/:labelId/chats': 'GET, HEAD',
      '/chats/:chatId/labels': 'GET, HEAD, POST',
      '/chats/:chatId/labels/:labelId': 'DELETE',
      '/chats/:chatId': 'PATCH',
      '/mcp': 'POST',
      '/profile': 'GET, HEAD, PATCH',
      '/profile/photo': 'PUT, DELETE',
      '/presence': 'PUT',
      '/contacts/:number/profile': 'GET, HEAD',
      '/contacts/:number/presence': 'POST',
      '/blocklist': 'GET, HEAD, POST',
      '/blocklist/:number': 'DELETE',
      // Workspaces (after c61fd0a): a workspace token's own routes.
      '/workspace': 'GET, HEAD',
      '/workspace/usage': 'GET, HEAD',
      '/devices': 'GET, HEAD, POST',
      '/devices/:deviceId': 'GET, HEAD',
      '/tokens': 'GET, HEAD, POST',
      '/tokens/:tokenId': 'DELETE',
    });
  });

  it("When the admin rows are read, then each says who of a workspace's console may call it: a GET reads, a change is its admin's, but for the rows named here", () => {
    // Reviewed by hand (docs/workspaces.md "The console"): an exception here is a decision.
    const exceptions: Record<string, string> = {
      // Who may sign in to the workspace is its admins' to know.
      'GET /workspaces/:workspaceId/users': 'admin',
      // An agent answers chats.
      'POST /devices/:deviceId/chats/:chatId/messages': 'chat',
      'POST /devices/:deviceId/chats/:chatId/read': 'chat',
      // The operator's: workspaces made, changed (status, quotas), given a device; a device's proxy.
      'POST /workspaces': 'operator',
      'PATCH /workspaces/:workspaceId': 'operator',
      'PUT /workspaces/:workspaceId/devices/:deviceId': 'operator',
      'GET /devices/:deviceId/proxy': 'operator',
      'PUT /devices/:deviceId/proxy': 'operator',
      'DELETE /devices/:deviceId/proxy': 'operator',
      // Everyone signed in: the handlers decide.
      'POST /session': 'session',
      'GET /session': 'session',
      'DELETE /session': 'session',
      'PUT /session/workspace': 'session',
      'DELETE /session/workspace': 'session',
    };
    const admin = FEATURES.flatMap((f) => f.routes).filter((r): r is AdminRoute => r.surface === 'admin');
    expect(admin.length).to.be.greaterThan(100);
    const wrong = admin
      .map((r) => {
        const key = `${r.method.toUpperCase()} ${r.path}`;
        const expected = exceptions[key] ?? (r.method === 'get' ? 'read' : 'admin');
        return { key, expected, actual: r.console ?? 'operator' };
      })
      .filter((r) => r.expected !== r.actual);
    expect(wrong).to.deep.equal([]);
    const keys = new Set(admin.map((r) => `${r.method.toUpperCase()} ${r.path}`));
    expect(
      Object.keys(exceptions).filter((k) => !keys.has(k)),
      'exceptions naming no row',
    ).to.deep.equal([]);
  });

  it('When the document is compared with its reviewed snapshot, then only the order of keys differs', () => {
    // A change to the API changes the document: review it, then refresh the snapshot with
    // `UPDATE_OPENAPI_SNAPSHOT=1 npx mocha services/api/test/fast/route-table.test.ts` and commit it.
    const now = canonical(JSON.parse(JSON.stringify(buildOpenApi(config))));
    if (process.env.UPDATE_OPENAPI_SNAPSHOT === '1') writeFileSync(SNAPSHOT, gzipSync(JSON.stringify(now)));
    const reviewed = JSON.parse(gunzipSync(readFileSync(SNAPSHOT)).toString('utf8')) as unknown;
    expect(differences(reviewed, now), 'where the document differs from its snapshot').to.deep.equal([]);
  });

  it('When configuration.md is read, then the RATE_LIMIT_MESSAGES row names every route the table counts with it', () => {
    const counted = routes
      .filter((r) => r.limit === 'messages')
      .map((r) => `${r.method.toUpperCase()} ${r.path}`);
    const row = readFileSync(new URL('../../../../docs/configuration.md', import.meta.url), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('| `RATE_LIMIT_MESSAGES` |'));
    expect(counted.length, 'routes counted with RATE_LIMIT_MESSAGES').to.be.greaterThan(10);
    expect(counted.filter((r) => !row?.includes(`\`${r}\``))).to.deep.equal([]);
  });
});
