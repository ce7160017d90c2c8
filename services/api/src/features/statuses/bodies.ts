import { STATUS_ERRORS, STATUS_LIMITS } from '@mgw/contracts';
import { FIELD_ALLOWANCE, MAX_JSON_DEPTH, type BodySpec } from '../../http/route-table.js';
import { SEND_BODY_LIMIT_BYTES } from '../send/index.js';

/*
 * The statuses' body bounds, one definition for both surfaces: the admin rows (the dashboard's)
 * take what the public routes take, at the public API's depth.
 */

/** POST /statuses: an attachment of up to 10 MB beside up to 5,000 viewers. */
export const statusBody: BodySpec = {
  json: {
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: STATUS_ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: STATUS_LIMITS.audience + FIELD_ALLOWANCE,
    lists: { audience: STATUS_LIMITS.audience },
  },
};

/** PUT /statuses/settings: one flag. */
export const settingsBody: BodySpec = {
  json: {
    limitBytes: 1024,
    tooLargeError: STATUS_ERRORS.settingsBodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
  },
};
