/**
 * API outcomes that are not in the spec's error table but that clients and the sender must read
 * the same way: how an OTP failure is worded, and the failure reason of a message whose job never
 * made it into its queue.
 */
export const API_ERRORS = {
  /** 502 on /otp when the send job ended failed; the job's reason follows the prefix. */
  otpFailedPrefix: 'OTP could not be sent: ',
  /** 502 on /connect and /disconnect when the connection service's job failed (threw). */
  connectionFailed: 'The connection service could not handle the request',
  /** Default error of a connection reply with success:false and no error text. */
  connectionRefused: 'The connection request was refused',
  /** 400 detail when the Idempotency-Key header is malformed. */
  invalidIdempotencyKey: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
} as const;

/** Failure reason stored on a message record whose job could not be enqueued. */
export const ENQUEUE_FAILED = 'enqueue_failed';
