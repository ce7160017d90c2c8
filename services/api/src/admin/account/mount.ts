import type { RequestHandler } from 'express';
import { ACCOUNT_ERRORS, emptyQuerySchema } from '@mgw/contracts';
import { jsonBody } from '../../http/body.js';
import { parse } from '../../http/validation.js';
import { PHOTO_BODY_LIMIT_BYTES, accountRoutes } from '../../features/account/mount.js';
import { readPresence } from '../../features/account/read-presence.js';
import { deviceIdOf, type AdminMount } from '../admin-routes.js';

/**
 * A device's profile, presence, contacts' profiles and presence, and blocklist for the dashboard
 * (docs/account.md): the public account routes (features/account) with the device named by the
 * path, behind the admin guard. A contact lookup counts against the device's daily lookup cap as
 * the public one does. One more, admin only: GET …/presence, the account's presence as the last
 * PUT /presence of its current connection set it (features/account/read-presence.ts).
 */
export const account: AdminMount = ({ s, guard, body, none }) => {
  const r = accountRoutes(s, deviceIdOf);
  const photoBody = jsonBody({
    limitBytes: PHOTO_BODY_LIMIT_BYTES,
    tooLargeError: ACCOUNT_ERRORS.photoBodyTooLarge,
    maxDepth: 4,
    maxValues: 16,
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });
  const device = '/devices/:deviceId';
  const getPresence: RequestHandler = async (req, res) => {
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, data: await readPresence(s, deviceIdOf(req)) });
  };
  return [
    { method: 'get', path: `${device}/profile`, handlers: [guard, r.getProfile] },
    { method: 'patch', path: `${device}/profile`, handlers: [guard, body, r.patchProfile] },
    { method: 'put', path: `${device}/profile/photo`, handlers: [guard, photoBody, r.putPhoto] },
    { method: 'delete', path: `${device}/profile/photo`, handlers: [guard, none, r.deletePhoto] },
    { method: 'get', path: `${device}/presence`, handlers: [guard, getPresence] },
    { method: 'put', path: `${device}/presence`, handlers: [guard, body, r.putPresence] },
    { method: 'get', path: `${device}/contacts/:number/profile`, handlers: [guard, r.contactProfile] },
    {
      method: 'post',
      path: `${device}/contacts/:number/presence`,
      handlers: [guard, none, r.subscribePresence],
    },
    { method: 'get', path: `${device}/blocklist`, handlers: [guard, r.getBlocklist] },
    { method: 'post', path: `${device}/blocklist`, handlers: [guard, body, r.block] },
    { method: 'delete', path: `${device}/blocklist/:number`, handlers: [guard, none, r.unblock] },
  ];
};
