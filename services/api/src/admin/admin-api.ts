import type { RequestHandler } from 'express';
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
import type { AdminAuth } from '../http/session/admin-auth.js';
import { feature, type AnyFeature } from '../http/route-table.js';
import { statuses } from './statuses/mount.js';
import { tokens } from './tokens/mount.js';
import { webhooks } from './webhooks/mount.js';

/** Admin bodies are a few short fields. */
const ADMIN_BODY = { limitBytes: 16 * 1024, maxDepth: 4, maxValues: 64 };

/**
 * The admin capabilities not yet moved into their feature's `admin.ts` (issue 69): their rows,
 * each with its handler chain (the guard and body inside it), as one feature the app mounts after
 * the others. TRANSITIONAL: it goes when the last folder has moved.
 */
const ADMIN_MOUNTS: readonly AdminMount[] = [
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

/** Runs express handlers one after another as one handler. */
function chain(handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err) return next(err);
      const handler = handlers[i++];
      if (!handler) return next();
      try {
        const ran = handler(req, res, step) as unknown;
        if (ran instanceof Promise) ran.catch(next);
      } catch (e) {
        next(e);
      }
    };
    step();
  };
}

export const legacyAdmin = feature<never, string>({
  name: 'legacy-admin',
  routes: [],
  handlers: () => ({}),
  operations: () => ({}),
});

/** The legacy admin feature for this app: its rows and handler chains, built with the app's services. */
export function legacyAdminFeature(s: ApiServices, auth: AdminAuth | undefined): AnyFeature {
  if (!auth) return legacyAdmin;
  const bodyOpts = {
    ...ADMIN_BODY,
    tooLargeError: 'Request body too large: admin bodies are limited to 16 KB',
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  };
  const body = jsonBody(bodyOpts);
  // A pool's body lists up to 100 devices: more values than the other admin bodies hold.
  const poolBody = jsonBody({ ...bodyOpts, maxValues: POOL_BODY_MAX_VALUES });
  const none = noBody();
  const guard = auth.require();
  const kit: AdminKit = { s, auth, guard, body, poolBody, none, devices: devicesDeps(s) };
  const rows = ADMIN_MOUNTS.flatMap((mount) => mount(kit));
  return feature<never, string>({
    name: 'legacy-admin',
    routes: rows.map((r, i) => ({
      surface: 'admin',
      method: r.method,
      path: r.path,
      auth: 'none',
      handler: `r${i}`,
    })),
    handlers: () => Object.fromEntries(rows.map((r, i) => [`r${i}`, chain(r.handlers)])),
    operations: () => ({}),
  });
}
