import type { RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import { ERRORS, emptyQuerySchema } from '@mgw/contracts';
import { DeviceProxyStore, ProxyUrlError, type Encryption } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { reconnectDevice, type ReconnectDeps } from './reconnect-device.js';

export interface ProxyRoutesDeps extends ReconnectDeps {
  encryption: Encryption;
}

export type ProxyAdminName = 'getProxy' | 'putProxy' | 'deleteProxy';

/**
 * A device's proxy (docs/proxies.md): where it is (never its credentials), set, remove. The
 * operator's only (no `console`): a proxy is the operator's network — where its connection service
 * connects out from — not a setting of the workspace's (docs/workspaces.md "The console").
 */
export const proxyAdminRoutes: AdminRoute<ProxyAdminName>[] = [
  { surface: 'admin', method: 'get', path: '/devices/:deviceId/proxy', handler: 'getProxy' },
  {
    surface: 'admin',
    method: 'put',
    path: '/devices/:deviceId/proxy',
    body: ADMIN_JSON,
    handler: 'putProxy',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: '/devices/:deviceId/proxy',
    body: 'none',
    handler: 'deleteProxy',
  },
];

/** The handlers of the rows: a change asks the device's holder to reconnect through it. */
export function proxyAdminHandlers(
  s: Uses<'redis' | 'commands' | 'encryption'>,
): Record<ProxyAdminName, RequestHandler> {
  const d: ProxyRoutesDeps = { redis: s.redis, commands: s.commands, encryption: s.encryption };
  return { getProxy: getProxyRoute(d), putProxy: putProxyRoute(d), deleteProxy: deleteProxyRoute(d) };
}

/** Success message of DELETE /devices/:deviceId/proxy. */
export const PROXY_REMOVED = 'Proxy removed';

/** `{ url }` (a proxy) or `{ direct: true }` (no proxy, not even DEVICE_PROXY_URL): exactly one. */
export const proxyBodySchema = Joi.object<{ url?: string; direct?: true }>({
  url: Joi.string(),
  direct: Joi.boolean().valid(true),
}).xor('url', 'direct');

/** GET /devices/:deviceId/proxy — the device's own setting (where its proxy is, never its credentials; or `direct`); 404 when none. */
function getProxyRoute(d: ProxyRoutesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const data = await new DeviceProxyStore(d.redis, d.encryption).view(deviceIdOf(req));
    if (!data) throw new ApiError(404, ERRORS.proxyNotFound);
    res.status(200).json({ success: true, data });
  };
}

/**
 * PUT /devices/:deviceId/proxy `{ url }` — sets the device's proxy (sealed at rest) and has its
 * sender reconnect through it. A bad URL is a 400 naming `url`, and the URL is never echoed.
 * `{ direct: true }` instead: the device connects directly, past DEVICE_PROXY_URL.
 */
function putProxyRoute(d: ProxyRoutesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const { url } = parse(proxyBodySchema, req.body ?? {});
    const store = new DeviceProxyStore(d.redis, d.encryption);
    let data;
    try {
      data = url === undefined ? await store.setDirect(deviceId) : await store.set(deviceId, url);
    } catch (err) {
      if (!(err instanceof ProxyUrlError)) throw err;
      throw ApiError.invalid([{ path: ['url'], message: `"url" ${err.message}` }]);
    }
    res.status(200).json({ success: true, data, applied: await reconnectDevice(d, deviceId) });
  };
}

/** DELETE /devices/:deviceId/proxy — the device connects directly again (or through DEVICE_PROXY_URL). */
function deleteProxyRoute(d: ProxyRoutesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    if (!(await new DeviceProxyStore(d.redis, d.encryption).remove(deviceId)))
      throw new ApiError(404, ERRORS.proxyNotFound);
    res
      .status(200)
      .json({ success: true, message: PROXY_REMOVED, applied: await reconnectDevice(d, deviceId) });
  };
}
