import type { RequestHandler, Response } from 'express';
import { API_BASE } from './route-table.js';

const PREFIX = `${API_BASE}/devices/`;

/**
 * How a request names the device it acts on, for a token that may act on several (a workspace
 * token, docs/workspaces.md): every path of the API is also served under
 * `/api/messenger/v1/devices/{deviceId}/…` (`…/devices/sales-1/send` is `/send` for `sales-1`).
 * A path prefix rather than a header or a query parameter: it reaches every route alike, an
 * EventSource or a WebSocket (which cannot set headers) and the logs, and no route's query
 * schema has to learn it. This strips the prefix before routing, so the route, its rate limit,
 * its 405 and its metrics are the contract path's, and leaves the id for `authenticate`, which
 * decides whether the token may act on it. `/devices` and `/devices/{id}` themselves are routes
 * of their own (the workspace's devices) and pass unchanged. An id no device could have is left for
 * the guard too, which answers it 404 `Device not found` after the token (a request without one is
 * 401 whatever its path names: docs/api.md).
 */
export function devicePath(): RequestHandler {
  return (req, res, next) => {
    if (!req.url.startsWith(PREFIX)) return next();
    const rest = req.url.slice(PREFIX.length);
    const end = rest.search(/[/?]/);
    if (end <= 0 || rest[end] !== '/') return next();
    const deviceId = rest.slice(0, end);
    req.url = API_BASE + rest.slice(end);
    res.locals.namedDevice = deviceId;
    next();
  };
}

/** The device a request's path named (`/devices/{deviceId}/…`), if it named one. */
export function namedDeviceOf(res: Response): string | undefined {
  return res.locals.namedDevice as string | undefined;
}
