import { CHANNEL_ERRORS, ERRORS } from '@mgw/contracts';
import { FIELD_ALLOWANCE, MAX_JSON_DEPTH, type BodySpec } from '../../http/route-table.js';
import { SEND_BODY_LIMIT_BYTES } from '../send/index.js';

/*
 * The channels' body bounds, one definition for both surfaces: the admin rows (the dashboard's)
 * take what the public routes take, at the public API's depth.
 */

/** A channel's name, description and picture (up to ~600 KB of base64). */
export const channelBody: BodySpec = {
  json: {
    limitBytes: 800 * 1024,
    tooLargeError: CHANNEL_ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
  },
};

/** A channel post: its text, or an attachment of up to 10 MB as base64 (as /send takes it). */
export const postBody: BodySpec = {
  json: {
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
  },
};
