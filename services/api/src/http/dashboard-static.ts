import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type Express, type Response } from 'express';
import { BUILT_CONSOLE_DIR } from '@mgw/console';
import type { AdminConfig } from '../config.js';

/**
 * What the dashboard may load: only the gateway itself (no CDN, no inline script), images from
 * here or data: URLs (the QR). Set on every dashboard answer; it replaces helmet's default, whose
 * `upgrade-insecure-requests` would break the page on a plain-HTTP address other than localhost.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function page(res: Response, status: number, text: string): void {
  res.status(status).type('text/plain; charset=utf-8').send(`${text}\n`);
}

/**
 * `/dashboard`: the built single-page app (the console, @mgw/console: libs/console). Every page (`/dashboard`, `/dashboard/devices`, …) is
 * the same index.html; the app itself asks the admin API whether a session exists and shows the
 * sign-in form when not, so without a session no page shows anything but the sign-in. Assets
 * hold no data. On whenever the admin API is (ADMIN_PASSWORD for the operator's sign-in, or
 * ADMIN_API_TOKEN alone: the workspaces' console users still sign in here); off (404) otherwise.
 */
export function mountDashboard(app: Express, config: AdminConfig): void {
  const dir = config.dashboardDir ?? BUILT_CONSOLE_DIR;
  const index = path.join(dir, 'index.html');
  app.use(['/dashboard', '/dashboard/*rest'], (req, res, next) => {
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    if (!config.password && !config.apiToken)
      return page(res, 404, 'The dashboard is off: set ADMIN_PASSWORD to turn it on.');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return page(res, 405, 'Method not allowed');
    }
    next();
  });
  app.use(
    '/dashboard/assets',
    express.static(path.join(dir, 'assets'), { index: false, maxAge: 0 }),
    (_req: unknown, res: Response) => page(res, 404, 'Not found'),
  );
  app.get(['/dashboard', '/dashboard/*rest'], (_req, res) => {
    if (!existsSync(index)) {
      return page(res, 503, 'The dashboard is not built: run `npm run build` (npm start does it).');
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
}
