import { ERRORS, MAX_CONTACT_CHECK } from '@mgw/contracts';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { contactCheckRoute } from '../../routes/contacts.js';
import { contactPaths } from './openapi.js';

/** A number check is at most 1,000 numbers of at most 15 digits: 64 KB is plenty. */
export const CONTACT_CHECK_BODY_LIMIT_BYTES = 64 * 1024;
const checkBody: BodySpec = {
  json: {
    limitBytes: CONTACT_CHECK_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.contactCheckBodyTooLarge,
    maxValues: MAX_CONTACT_CHECK + FIELD_ALLOWANCE,
    lists: { phones: MAX_CONTACT_CHECK },
  },
};

/** Which numbers are on WhatsApp, from the contact cache and the holder's lookups (docs/api.md). */
export const contacts = feature({
  name: 'contacts',
  routes: [{ method: 'post', path: '/contacts/check', limit: 'contacts', body: checkBody, handler: 'check' }],
  handlers: (s) => ({ check: contactCheckRoute(s) }),
  paths: contactPaths,
});
