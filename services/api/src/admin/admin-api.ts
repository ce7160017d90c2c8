import type { Express } from 'express';
import { ERRORS } from '@mgw/contracts';
import { ApiError, methodNotAllowed } from '../http/api-error.js';
import type { ApiServices } from '../api-services.js';
import { jsonBody, noBody } from '../http/body.js';
import type { AdminKit, AdminMount } from './admin-routes.js';
import { account } from './account/mount.js';
import { activity } from './activity/mount.js';
import { batches } from './batches/mount.js';
import { channels } from './channels/mount.js';
import { chats } from './chats/mount.js';
import { contacts } from './contacts/mount.js';
import { devicesDeps } from './devices/devices.js';
import { devices } from './devices/mount.js';
import { eventLog } from './event-log/mount.js';
import { events } from './events/mount.js';
import { groups } from './groups/mount.js';
import { labels } from './labels/mount.js';
import { optOuts } from './opt-outs/mount.js';
import { policy } from './policy/mount.js';
import { POOL_BODY_MAX_VALUES, pools } from './pools/mount.js';
import { proxies } from './proxies/mount.js';
import { sandbox } from './sandbox/mount.js';
import { AdminAuth, session } from './session/mount.js';
import { statuses } from './statuses/mount.js';
import { tokens } from './tokens/mount.js';
import { webhooks } from './webhooks/mount.js';

export const ADMIN_BASE = '/api/admin/v1';

/** Admin bodies are a few short fields. */
const ADMIN_BODY = { limitBytes: 16 * 1024, maxDepth: 4, maxValues: 64 };

/**
 * The admin API, one capability per folder (each `mount.ts` gives its rows of the table), mounted
 * in this order: adding a capability is adding its folder and a line here.
 */
const ADMIN_MOUNTS: readonly AdminMount[] = [
  session,
  tokens,
  sandbox,
  devices,
  policy,
  chats,
  activity,
  batches,
  optOuts,
  webhooks,
  proxies,
  account,
  contacts,
  pools,
  events,
  eventLog,
  groups,
  labels,
  statuses,
  channels,
];

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
  const auth = new AdminAuth({ redis: s.redis, config: admin, logger: s.logger });
  const guard = auth.require();
  const kit: AdminKit = { s, auth, guard, body, poolBody, none, devices: devicesDeps(s) };
  const routes = ADMIN_MOUNTS.flatMap((mount) => mount(kit));
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
