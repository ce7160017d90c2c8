import type { RequestHandler } from 'express';
import { emptyQuerySchema } from '@mgw/contracts';
import { parse } from '../../http/validation.js';
import type { AdminMount } from '../admin-routes.js';

/** Whether the gateway runs against the simulator: the linking panel's hint. */
export const sandbox: AdminMount = ({ s, guard }) => [
  { method: 'get', path: '/sandbox', handlers: [guard, sandboxRoute(s.config.admin.sandboxUrl)] },
];

/**
 * GET /sandbox — whether the gateway runs against the simulator (MESSENGER_SANDBOX_URL), and the
 * simulator's phone-link URL, so the linking panel can show the exact command that lets a
 * simulated phone scan the QR. **Choice:** the page shows the command; neither the API nor the
 * browser calls the simulator (the API makes no request the environment did not already make, and
 * the page loads nothing from anywhere but the gateway).
 */
export function sandboxRoute(sandboxUrl: string | undefined): RequestHandler {
  const sandbox = sandboxUrl ? { phoneLinkUrl: `${sandboxUrl.replace(/\/+$/, '')}/phone/link` } : null;
  return (req, res) => {
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, sandbox });
  };
}
