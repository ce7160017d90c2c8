import type { RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import type { RedisClient } from '@mgw/common';
import { ERRORS, emptyQuerySchema, keys } from '@mgw/contracts';
import { DeviceCommandClient, DeviceProxyStore, ProxyUrlError, type Encryption } from '@mgw/store';
import { askHolder } from '../features/holder/ask-holder.js';
import { ApiError } from '../http/api-error.js';
import { parse } from '../http/validation.js';
import { deviceIdOf } from './devices-routes.js';

export interface ProxyRoutesDeps {
  redis: RedisClient;
  /** The template of the connections that wait for the sender's answer (BLPOP). */
  blocking: RedisClient;
  encryption: Encryption;
}

/** Success message of DELETE /devices/:deviceId/proxy. */
export const PROXY_REMOVED = 'Proxy removed';

/** How long a PUT or DELETE waits for the device's sender to start the reconnect. */
const RECONNECT_ASK_SECONDS = 5;

/** `{ url }` (a proxy) or `{ direct: true }` (no proxy, not even DEVICE_PROXY_URL): exactly one. */
const proxyBodySchema = Joi.object<{ url?: string; direct?: true }>({
  url: Joi.string(),
  direct: Joi.boolean().valid(true),
}).xor('url', 'direct');

/**
 * What became of the change now: `reconnecting` (the sender that holds the device is reconnecting
 * it through the new proxy), `not-connected` (no sender holds the device: its next connection
 * uses it), `unknown` (the holder did not answer in time: it reconnects when it hears the command).
 */
type Applied = 'reconnecting' | 'not-connected' | 'unknown';

async function reconnect(d: ProxyRoutesDeps, deviceId: string): Promise<Applied> {
  // No lease, no holder: nothing to wait for (the device's next connection reads the new proxy).
  if (!(await d.redis.exists(keys.lease(deviceId)))) return 'not-connected';
  const outcome = await askHolder(
    { commands: new DeviceCommandClient(d.redis, d.blocking) },
    deviceId,
    { type: 'proxy-changed' },
    { wait: RECONNECT_ASK_SECONDS, okWithoutData: true },
  );
  if (outcome.ok) return 'reconnecting';
  return outcome.reason === 'no_device' ? 'not-connected' : 'unknown';
}

/** GET /devices/:deviceId/proxy — the device's own setting (where its proxy is, never its credentials; or `direct`); 404 when none. */
export function getProxyRoute(d: ProxyRoutesDeps): RequestHandler {
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
export function putProxyRoute(d: ProxyRoutesDeps): RequestHandler {
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
    res.status(200).json({ success: true, data, applied: await reconnect(d, deviceId) });
  };
}

/** DELETE /devices/:deviceId/proxy — the device connects directly again (or through DEVICE_PROXY_URL). */
export function deleteProxyRoute(d: ProxyRoutesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    if (!(await new DeviceProxyStore(d.redis, d.encryption).remove(deviceId)))
      throw new ApiError(404, ERRORS.proxyNotFound);
    res.status(200).json({ success: true, message: PROXY_REMOVED, applied: await reconnect(d, deviceId) });
  };
}
