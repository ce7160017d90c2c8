/**
 * Graph API errors as the Cloud API answers them.
 *
 * Shape: `{ error: { message, type, code, error_subcode?, error_data: { messaging_product, details },
 * fbtrace_id } }` — https://developers.facebook.com/docs/graph-api/guides/error-handling and
 * https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes/
 * (the message is `(#<code>) <title>`, the details say what was wrong).
 *
 * The HTTP status of each is the simulator's choice (the reference lists codes, not statuses):
 * 401 for the OAuth errors, 429 for the throughput and pair-rate limits (the ones Meta asks to be
 * retried later), 400 for the rest (README: "Choices where the reference is silent").
 */
import { randomBytes } from 'node:crypto';

export interface GraphErrorBody {
  error: {
    message: string;
    type: string;
    code: number;
    error_subcode?: number;
    error_data?: { messaging_product: 'whatsapp'; details: string };
    fbtrace_id: string;
  };
}

export class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    readonly title: string,
    readonly details: string,
    readonly subcode?: number,
    readonly type = 'OAuthException',
  ) {
    super(`(#${code}) ${title}`);
  }

  body(): GraphErrorBody {
    return {
      error: {
        message: this.message,
        type: this.type,
        code: this.code,
        ...(this.subcode === undefined ? {} : { error_subcode: this.subcode }),
        error_data: { messaging_product: 'whatsapp', details: this.details },
        fbtrace_id: randomBytes(8).toString('base64url'),
      },
    };
  }

  /** The `errors` entry of a failed status webhook: `{ code, title, message, error_data }`. */
  webhookEntry(): { code: number; title: string; message: string; error_data: { details: string } } {
    return { code: this.code, title: this.title, message: this.title, error_data: { details: this.details } };
  }
}

/** Graph API error-handling page: subcode 463 "Expired", 467 "Invalid access token". */
export const TOKEN_EXPIRED_SUBCODE = 463;
export const TOKEN_INVALID_SUBCODE = 467;

export const errors = {
  /** 190: the token is unknown or malformed (no bearer, or not one the simulator issued). */
  invalidToken: (details = 'Invalid OAuth access token - Cannot parse access token') =>
    new GraphError(401, 190, 'Invalid OAuth access token', details, TOKEN_INVALID_SUBCODE),
  /** 190 with subcode 463: the token expired (a control call expires it). */
  expiredToken: () =>
    new GraphError(
      401,
      190,
      'Error validating access token: Session has expired',
      'The access token has expired',
      TOKEN_EXPIRED_SUBCODE,
    ),
  /** 100: a missing or invalid parameter; details names it. */
  invalidParameter: (details: string) => new GraphError(400, 100, 'Invalid parameter', details),
  /** 100, subcode 33: an id that does not exist or the token may not reach (Graph's wording). */
  unknownObject: (id: string) =>
    new GraphError(
      400,
      100,
      `Unsupported request - method type: get or post. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation`,
      `Object with ID '${id}' does not exist or cannot be reached with this token`,
      33,
      'GraphMethodException',
    ),
  /** 100: a field that the node does not have (`?fields=`). */
  unknownField: (field: string, node: string) =>
    new GraphError(400, 100, `Tried accessing nonexisting field (${field}) on node type (${node})`, field),
  /** 131047: free-form message outside the 24-hour customer service window. */
  reengagement: () =>
    new GraphError(
      400,
      131047,
      'Re-engagement message',
      'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
    ),
  /** 130429: more messages per second than the number's throughput. */
  throughput: () =>
    new GraphError(429, 130429, 'Rate limit hit', 'Cloud API message throughput has been reached.'),
  /** 131056: too many messages to the same recipient in a short time. */
  pairRate: () =>
    new GraphError(
      429,
      131056,
      '(Business Account, Consumer Account) pair rate limit hit',
      'Too many messages sent from the sender phone number to the same recipient phone number in a short period of time.',
    ),
  /**
   * The messaging limit (unique recipients outside a window per moving 24 h): the reference
   * documents the limit but no dedicated code; the simulator answers 131048 (README).
   */
  messagingLimit: (limit: number) =>
    new GraphError(
      400,
      131048,
      'Spam rate limit hit',
      `Message failed to send because this number reached its messaging limit of ${limit} unique recipients in a moving 24-hour period.`,
    ),
  /** 132001: no template of that name in that language. */
  templateMissing: (name: string, language: string) =>
    new GraphError(
      400,
      132001,
      'Template name does not exist in the translation',
      `template name (${name}) does not exist in ${language}`,
    ),
  /** 132015: the template is paused. */
  templatePaused: (name: string) =>
    new GraphError(400, 132015, 'Template is Paused', `Template ${name} is paused due to low quality.`),
  /** 132016: the template is disabled (or not approved yet). */
  templateDisabled: (name: string, status: string) =>
    new GraphError(400, 132016, 'Template is disabled', `Template ${name} has status ${status}.`),
  /** 131053: an upload the simulator refuses (size or type). */
  mediaUpload: (details: string) => new GraphError(400, 131053, 'Media upload error', details),
};
