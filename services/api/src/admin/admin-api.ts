import type { Express, Request, RequestHandler } from 'express';
import { ERRORS } from '@mgw/contracts';
import {
  ContentStore,
  DeviceActivity,
  PoolStore,
  deviceHealth,
  sendingView,
  type SendingView,
} from '@mgw/store';
import { ApiError, methodNotAllowed } from '../http/api-error.js';
import type { ApiServices } from '../api-services.js';
import { jsonBody, noBody } from '../http/body.js';
import { deviceChatMessagesRoute, deviceChatsRoute } from './chats-routes.js';
import { deviceActivityRoute } from './activity-routes.js';
import { controlDeviceBatchRoute, deviceBatchesRoute } from './batches-routes.js';
import { poolDevices } from '../pools/pool-devices.js';
import { AdminAuth } from './admin-auth.js';
import { DeviceDirectory } from './device-directory.js';
import {
  connectDeviceRoute,
  deviceBatchRoute,
  deviceIdOf,
  deviceMessageRoute,
  deviceMessagesRoute,
  disconnectDeviceRoute,
  getDeviceRoute,
  listDevicesRoute,
} from './devices-routes.js';
import { clearRestrictionRoute, getPolicyRoute, putPolicyRoute } from './policy-routes.js';
import {
  addOptOutRoute,
  getOptOutSettingsRoute,
  listOptOutsRoute,
  putOptOutSettingsRoute,
  removeOptOutRoute,
} from './opt-outs-routes.js';
import {
  POOL_BODY_MAX_VALUES,
  createPoolRoute,
  deletePoolRoute,
  getPoolRoute,
  listPoolsRoute,
  updatePoolRoute,
} from './pools-routes.js';
import { deleteProxyRoute, getProxyRoute, putProxyRoute } from './proxy-routes.js';
import { accountAdminRoutes } from './account-routes.js';
import { adminEventStreamRoute } from './events-route.js';
import { sandboxRoute } from './sandbox-route.js';
import { createTokenRoute, listTokensRoute, revokeTokenRoute } from './tokens-routes.js';
import { deleteWebhookRoute, getWebhookRoute, putWebhookRoute } from '../features/webhooks/mount.js';

export const ADMIN_BASE = '/api/admin/v1';

/** Admin bodies are a few short fields. */
const ADMIN_BODY = { limitBytes: 16 * 1024, maxDepth: 4, maxValues: 64 };

/**
 * One admin route: its path, methods and handlers. The table is the admin API: adding an area
 * (webhooks per device, batches once the events work lands) is adding rows here.
 */
interface AdminRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  handlers: RequestHandler[];
}

/**
 * Mounts `/api/admin/v1`. Routes are registered with their full path (as the public API's are),
 * so access logs and metrics see their templates. Everything but the sign-in needs a session or
 * the admin token (401 otherwise, on unknown paths too); a change made with a session needs its
 * CSRF token. With neither ADMIN_PASSWORD nor ADMIN_API_TOKEN set, the admin API does not exist (404).
 */
export function mountAdminApi(app: Express, s: ApiServices): void {
  const { admin } = s.config;
  if (!admin.password && !admin.apiToken) {
    app.use(ADMIN_BASE, (_req, _res, next) => next(new ApiError(404, ERRORS.notFound)));
    return;
  }
  // Admin answers (sessions, tokens, account details) are never for a cache to keep.
  app.use(ADMIN_BASE, (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  const body = jsonBody({
    ...ADMIN_BODY,
    tooLargeError: 'Request body too large: admin bodies are limited to 16 KB',
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });
  // A pool's body lists up to 100 devices: more values than the other admin bodies hold.
  const poolBody = jsonBody({
    ...ADMIN_BODY,
    maxValues: POOL_BODY_MAX_VALUES,
    tooLargeError: 'Request body too large: admin bodies are limited to 16 KB',
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });
  const none = noBody();
  const auth = new AdminAuth({ redis: s.redis, config: admin });
  const devices = {
    directory: new DeviceDirectory(s.redis),
    connection: s.connection,
    messages: s.messages,
    revisions: s.revisions,
    kinds: s.kinds,
    redis: s.redis,
    inbound: s.inbound,
    index: s.index,
    // Reads only (ContentStore.shown): the message retention bounds nothing it writes.
    contents: new ContentStore(s.redis, s.encryption, s.config.store.messageRetentionSeconds),
    batches: s.batches,
    queueOf: (deviceId: string) => s.acceptor.queue(deviceId),
    sending: (deviceId: string) => sendingView(s.redis, deviceId, s.config.sendPolicy),
    health: (deviceId: string, view: SendingView) =>
      deviceHealth(s.redis, deviceId, s.config.sendPolicy, Date.now(), view),
  };
  const policy = {
    redis: s.redis,
    config: s.config.sendPolicy,
    queueOf: devices.queueOf,
  };
  const optOuts = { redis: s.redis, metrics: s.metrics };
  const proxies = { redis: s.redis, blocking: s.bullRedis, encryption: s.encryption };
  const pools = {
    pools: new PoolStore(s.redis),
    tokens: s.tokens,
    devices,
    spread: (ids: string[]) => poolDevices(s.redis, ids, s.config.sendPolicy, s.config.pools.minHealth),
  };
  const guard = auth.require();
  const byPath = (req: Request) => deviceIdOf(req);
  const routes: AdminRoute[] = [
    { method: 'post', path: '/session', handlers: [body, auth.signIn()] },
    { method: 'get', path: '/session', handlers: [guard, auth.whoAmI()] },
    { method: 'delete', path: '/session', handlers: [guard, none, auth.signOut()] },
    { method: 'get', path: '/tokens', handlers: [guard, listTokensRoute(s.tokens)] },
    { method: 'post', path: '/tokens', handlers: [guard, body, createTokenRoute(s.tokens, pools.pools)] },
    { method: 'delete', path: '/tokens/:id', handlers: [guard, none, revokeTokenRoute(s.tokens)] },
    { method: 'get', path: '/sandbox', handlers: [guard, sandboxRoute(admin.sandboxUrl)] },
    { method: 'get', path: '/devices', handlers: [guard, listDevicesRoute(devices)] },
    { method: 'get', path: '/devices/:deviceId', handlers: [guard, getDeviceRoute(devices)] },
    {
      method: 'post',
      path: '/devices/:deviceId/connect',
      handlers: [guard, body, connectDeviceRoute(devices)],
    },
    {
      method: 'post',
      path: '/devices/:deviceId/disconnect',
      handlers: [guard, none, disconnectDeviceRoute(devices)],
    },
    { method: 'get', path: '/devices/:deviceId/messages', handlers: [guard, deviceMessagesRoute(devices)] },
    {
      method: 'get',
      path: '/devices/:deviceId/messages/:messageId',
      handlers: [guard, deviceMessageRoute(devices)],
    },
    { method: 'get', path: '/devices/:deviceId/policy', handlers: [guard, getPolicyRoute(policy)] },
    { method: 'put', path: '/devices/:deviceId/policy', handlers: [guard, body, putPolicyRoute(policy)] },
    {
      method: 'delete',
      path: '/devices/:deviceId/restriction',
      handlers: [guard, none, clearRestrictionRoute(policy)],
    },
    // The device's chats and a chat's messages (the Chats page), as the public GET /chats….
    { method: 'get', path: '/devices/:deviceId/chats', handlers: [guard, deviceChatsRoute(s)] },
    {
      method: 'get',
      path: '/devices/:deviceId/chats/:chatId/messages',
      handlers: [guard, deviceChatMessagesRoute(s)],
    },
    // The device's sending per hour: the Campaigns page's chart.
    {
      method: 'get',
      path: '/devices/:deviceId/activity',
      handlers: [guard, deviceActivityRoute(new DeviceActivity(s.redis))],
    },
    // The device's lists (the Campaigns page): newest first, and their control as the public API's.
    { method: 'get', path: '/devices/:deviceId/batches', handlers: [guard, deviceBatchesRoute(s)] },
    {
      method: 'get',
      path: '/devices/:deviceId/batches/:batchId',
      handlers: [guard, deviceBatchRoute(devices)],
    },
    ...(['pause', 'resume', 'cancel'] as const).map((action): AdminRoute => ({
      method: 'post',
      path: `/devices/:deviceId/batches/:batchId/${action}`,
      handlers: [guard, none, controlDeviceBatchRoute(s, action)],
    })),
    // A device's suppression list (numbers that opted out) and its keywords and confirmations.
    { method: 'get', path: '/devices/:deviceId/opt-outs', handlers: [guard, listOptOutsRoute(optOuts)] },
    { method: 'post', path: '/devices/:deviceId/opt-outs', handlers: [guard, body, addOptOutRoute(optOuts)] },
    {
      method: 'delete',
      path: '/devices/:deviceId/opt-outs/:phone',
      handlers: [guard, none, removeOptOutRoute(optOuts)],
    },
    {
      method: 'get',
      path: '/devices/:deviceId/opt-out-settings',
      handlers: [guard, getOptOutSettingsRoute(optOuts)],
    },
    {
      method: 'put',
      path: '/devices/:deviceId/opt-out-settings',
      handlers: [guard, body, putOptOutSettingsRoute(optOuts)],
    },
    // A device's webhook: read, set (rotateSecret: true rotates), remove — as the public /webhook.
    { method: 'get', path: '/devices/:deviceId/webhook', handlers: [guard, getWebhookRoute(s, byPath)] },
    {
      method: 'put',
      path: '/devices/:deviceId/webhook',
      handlers: [guard, body, putWebhookRoute(s, byPath)],
    },
    {
      method: 'delete',
      path: '/devices/:deviceId/webhook',
      handlers: [guard, none, deleteWebhookRoute(s, byPath)],
    },
    // A device's proxy (docs/proxies.md): where it is (never its credentials), set, remove.
    { method: 'get', path: '/devices/:deviceId/proxy', handlers: [guard, getProxyRoute(proxies)] },
    { method: 'put', path: '/devices/:deviceId/proxy', handlers: [guard, body, putProxyRoute(proxies)] },
    {
      method: 'delete',
      path: '/devices/:deviceId/proxy',
      handlers: [guard, none, deleteProxyRoute(proxies)],
    },
    // A device's profile and blocklist (docs/account.md), as the public account routes.
    ...accountAdminRoutes(s, guard, body, none),
    // Pools: named sets of devices one list is spread over (docs/pools.md).
    { method: 'get', path: '/pools', handlers: [guard, listPoolsRoute(pools)] },
    { method: 'post', path: '/pools', handlers: [guard, poolBody, createPoolRoute(pools)] },
    { method: 'get', path: '/pools/:poolId', handlers: [guard, getPoolRoute(pools)] },
    { method: 'patch', path: '/pools/:poolId', handlers: [guard, poolBody, updatePoolRoute(pools)] },
    { method: 'delete', path: '/pools/:poolId', handlers: [guard, none, deletePoolRoute(pools)] },
    // The dashboard's live views: every device's events (or one device's), as Server-Sent Events.
    { method: 'get', path: '/events/stream', handlers: [guard, adminEventStreamRoute(s)] },
  ];
  const allowed = new Map<string, string[]>();
  for (const r of routes) {
    app[r.method](`${ADMIN_BASE}${r.path}`, ...r.handlers);
    allowed.set(r.path, [...(allowed.get(r.path) ?? []), r.method.toUpperCase()]);
  }
  for (const [path, methods] of allowed) {
    const allow = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    app.all(`${ADMIN_BASE}${path}`, guard, methodNotAllowed(allow.join(', ')));
  }
  app.use(ADMIN_BASE, guard, (_req, _res, next) => next(new ApiError(404, ERRORS.notFound)));
}
