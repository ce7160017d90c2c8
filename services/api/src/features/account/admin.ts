import type { RequestHandler } from 'express';
import { ACCOUNT_ERRORS, emptyQuerySchema } from '@mgw/contracts';
import type { Uses } from '../../api-services.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import { ADMIN_JSON, type AdminRoute, type BodySpec } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import type { AccountName } from './mount.js';
import { readPresence } from './read-presence.js';
import { PHOTO_BODY_LIMIT_BYTES } from './set-photo.js';

/** The admin routes' handlers: the public ones' names with `admin` in front, and the presence read. */
export type AccountAdminName = `admin${Capitalize<AccountName>}` | 'adminGetPresence';

/**
 * A photo's body: the public PUT /profile/photo's bounds, at an admin body's depth. Its own object,
 * not the public route's: a body parser is built once per spec, with the depth of its surface.
 */
const photoBody: BodySpec = {
  json: {
    limitBytes: PHOTO_BODY_LIMIT_BYTES,
    tooLargeError: ACCOUNT_ERRORS.photoBodyTooLarge,
    maxValues: 16,
  },
};

const device = '/devices/:deviceId';

/**
 * A device's profile, presence, contacts' profiles and presence, and blocklist for the dashboard
 * (docs/account.md): the public account routes with the device named by the path. A contact lookup
 * counts against the device's daily lookup cap as the public one does. One more, admin only: GET
 * …/presence, the account's presence as the last PUT /presence of its current connection set it
 * (read-presence.ts).
 */
export const accountAdminRoutes: AdminRoute<AccountAdminName>[] = [
  { surface: 'admin', method: 'get', path: `${device}/profile`, handler: 'adminGetProfile', console: 'read' },
  {
    surface: 'admin',
    method: 'patch',
    path: `${device}/profile`,
    body: ADMIN_JSON,
    handler: 'adminPatchProfile',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'put',
    path: `${device}/profile/photo`,
    body: photoBody,
    handler: 'adminPutPhoto',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: `${device}/profile/photo`,
    body: 'none',
    handler: 'adminDeletePhoto',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'get',
    path: `${device}/presence`,
    handler: 'adminGetPresence',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'put',
    path: `${device}/presence`,
    body: ADMIN_JSON,
    handler: 'adminPutPresence',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'get',
    path: `${device}/contacts/:number/profile`,
    handler: 'adminContactProfile',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'post',
    path: `${device}/contacts/:number/presence`,
    body: 'none',
    handler: 'adminSubscribePresence',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'get',
    path: `${device}/blocklist`,
    handler: 'adminGetBlocklist',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'post',
    path: `${device}/blocklist`,
    body: ADMIN_JSON,
    handler: 'adminBlock',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: `${device}/blocklist/:number`,
    body: 'none',
    handler: 'adminUnblock',
    console: 'admin',
  },
];

/**
 * The admin routes' handlers: the public routes' handlers built for the device the path names
 * (mount.ts builds them: `accountRoutes(s, deviceIdOf)`), and GET …/presence.
 */
export function accountAdminHandlers(
  s: Uses<'redis'>,
  forPathDevice: Record<AccountName, RequestHandler>,
): Record<AccountAdminName, RequestHandler> {
  const r = forPathDevice;
  const getPresence: RequestHandler = async (req, res) => {
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, data: await readPresence(s, deviceIdOf(req)) });
  };
  return {
    adminGetProfile: r.getProfile,
    adminPatchProfile: r.patchProfile,
    adminPutPhoto: r.putPhoto,
    adminDeletePhoto: r.deletePhoto,
    adminGetPresence: getPresence,
    adminPutPresence: r.putPresence,
    adminContactProfile: r.contactProfile,
    adminSubscribePresence: r.subscribePresence,
    adminGetBlocklist: r.getBlocklist,
    adminBlock: r.block,
    adminUnblock: r.unblock,
  };
}
