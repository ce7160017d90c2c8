import type { RequestHandler } from 'express';
import { emptyQuerySchema } from '@mgw/contracts';
import type { Uses } from '../../api-services.js';
import type { AdminRoute } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';

export type SandboxAdminName = 'sandbox';

/** Whether the gateway runs against the simulator: the linking panel's hint. */
export const sandboxAdminRoutes: AdminRoute<SandboxAdminName>[] = [
  { surface: 'admin', method: 'get', path: '/sandbox', handler: 'sandbox', console: 'read' },
];

export function sandboxAdminHandlers(s: Uses<'config'>): Record<SandboxAdminName, RequestHandler> {
  return { sandbox: sandboxRoute(s.config.admin.sandboxUrl) };
}

/**
 * GET /sandbox — whether the gateway runs against the simulator (MESSENGER_SANDBOX_URL), and the
 * simulator's phone-link URL, so the linking panel can show the exact command that lets a
 * simulated phone scan the QR. **Choice:** the page shows the command; neither the API nor the
 * browser calls the simulator (the API makes no request the environment did not already make, and
 * the page loads nothing from anywhere but the gateway).
 */
function sandboxRoute(sandboxUrl: string | undefined): RequestHandler {
  const sandbox = sandboxUrl ? { phoneLinkUrl: `${sandboxUrl.replace(/\/+$/, '')}/phone/link` } : null;
  return (req, res) => {
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, sandbox });
  };
}
