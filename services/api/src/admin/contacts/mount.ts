import { contactRoutes } from '../../features/contacts/mount.js';
import { deviceIdOf, type AdminMount } from '../admin-routes.js';

/**
 * A device's contacts for the dashboard (docs/usernames.md): POST …/contacts/username, the public
 * POST /contacts/username (features/contacts) with the device named by the path, behind the admin
 * guard. A lookup counts against the device's daily lookup cap as the public one does.
 */
export const contacts: AdminMount = ({ s, guard, body }) => {
  const r = contactRoutes(s, deviceIdOf);
  return [
    { method: 'post', path: '/devices/:deviceId/contacts/username', handlers: [guard, body, r.username] },
  ];
};
