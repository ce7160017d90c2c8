/** Error strings of the API contract; every service imports them from here, never retypes them. */
export const ERRORS = {
  invalidToken: 'Invalid API token',
  invalidRequest: 'Invalid request data',
  rateLimited: 'Rate limit exceeded',
  noDevice: 'No connected messenger device found',
  attachmentTooLarge: 'Attachment too large: the limit is 10 MB',
  bodyTooLarge: 'Request body too large: attachments are limited to 10 MB',
  tooManyAuthFailures: 'Too many failed authentication attempts',
  notFound: 'Not found',
  messageNotFound: 'Message not found',
  serviceUnavailable: 'Service unavailable: storage is not reachable',
  internal: 'Internal server error',
  otpTimeout: 'OTP was queued but not sent in time; check it with GET /messages/:id',
  connectionTimeout: 'The connection service did not answer in time',
  idempotencyConflict: 'Idempotency-Key was already used with a different request',
  idempotencyInProgress: 'A request with this Idempotency-Key is still in progress',
  unsupportedMediaType: 'Request bodies must be application/json',
  /** 502 on /otp when the send job ended failed; the job's reason follows the prefix. */
  otpFailedPrefix: 'OTP could not be sent: ',
  /** 502 on /connect and /disconnect when the connection service's job failed (threw). */
  connectionFailed: 'The connection service could not handle the request',
  /** Error of a connection reply with success:false and no error text. */
  connectionRefused: 'The connection request was refused',
  /** 400 detail when the Idempotency-Key header is malformed. */
  invalidIdempotencyKey: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
} as const;

/** The message that the spec puts in `details` when neither text nor attachment is given. */
export const EITHER_TEXT_OR_ATTACHMENT = 'Either text or attachment must be provided';

/** Reasons a message ends `failed`; stored on the message record and used in metrics labels. */
export const FAILURE_REASONS = {
  deviceDisconnected: 'device_disconnected',
  loggedOut: 'logged_out',
  notOnWhatsApp: 'not_on_whatsapp',
  invalidNumber: 'invalid_number',
  attachmentTooLarge: 'attachment_too_large',
  attachmentUnreachable: 'attachment_unreachable',
  replyTargetNotFound: 'reply_target_not_found',
  rejectedByServer: 'rejected_by_server',
  sendFailed: 'send_failed',
  /** The job could not be added to its queue (the API answered 503); nothing was sent. */
  enqueueFailed: 'enqueue_failed',
} as const;
export type FailureReason = (typeof FAILURE_REASONS)[keyof typeof FAILURE_REASONS];
