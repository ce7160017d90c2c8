import { Joi } from './text.js';

/**
 * Linking an account that a passkey guards (docs/passkeys.md): where the link stands, the reasons
 * it can end with, and the assertion the operator hands in.
 *
 * - `assertion`: WhatsApp asks for a passkey; the link waits for a WebAuthn assertion made on a
 *   whatsapp.com page (the browser extension, or the operator's browser) until `expiresAt`;
 * - `verifying`: the assertion went to WhatsApp, which answers with the phone's side;
 * - `confirm_code`: the phone shows a code; the operator compares it with `code` and confirms;
 * - `finishing`: the pairing request went; WhatsApp ends the link as any other.
 */
export const PASSKEY_STEPS = ['assertion', 'verifying', 'confirm_code', 'finishing'] as const;
export type PasskeyStep = (typeof PASSKEY_STEPS)[number];

/**
 * How a passkey-gated link can end without a link (the pairing's `reason`, GET /status's, the
 * `session.status` event's): the request expired; WhatsApp refused the assertion; its answer (the
 * continuation) never came; the request's options could not be had; another step failed.
 */
export const PASSKEY_FAILURES = [
  'passkey_expired',
  'passkey_rejected',
  'passkey_no_continuation',
  'passkey_options_unavailable',
  'passkey_failed',
] as const;
export type PasskeyFailure = (typeof PASSKEY_FAILURES)[number];

/** `PublicKeyCredential.toJSON()` of an assertion: every binary field base64url. */
export interface PasskeyAssertion {
  id: string;
  rawId: string;
  type: 'public-key';
  response: {
    clientDataJSON: string;
    authenticatorData: string;
    signature: string;
    userHandle?: string | null;
  };
  authenticatorAttachment?: string | null;
  clientExtensionResults?: Record<string, unknown>;
}

const b64url = (max: number) =>
  Joi.string()
    .pattern(/^[A-Za-z0-9_-]+$/)
    .max(max)
    .messages({ 'string.pattern.base': '{{#label}} must be base64url' });

/**
 * POST /connect/passkey: the assertion, as the browser's `PublicKeyCredential.toJSON()` gives it
 * (bounded: a real one is well under these sizes). Nothing else of the credential is forwarded.
 */
export const passkeyAssertionBodySchema = Joi.object<{ assertion: PasskeyAssertion }>({
  assertion: Joi.object({
    id: b64url(1024).required(),
    rawId: b64url(1024).required(),
    type: Joi.string().valid('public-key').required(),
    response: Joi.object({
      clientDataJSON: b64url(4096).required(),
      authenticatorData: b64url(2048).required(),
      signature: b64url(1024).required(),
      userHandle: b64url(1024).allow(null),
    })
      .unknown(true)
      .required(),
    authenticatorAttachment: Joi.string().max(32).allow(null),
    clientExtensionResults: Joi.object().max(16),
  })
    .unknown(true)
    .required(),
});

/** POST /connect/passkey/confirm: the code the operator compared with the phone's. */
export const passkeyConfirmBodySchema = Joi.object<{ code: string }>({
  code: Joi.string()
    .pattern(/^[1-9A-HJ-NP-TV-Za-hj-np-tv-z]{4}-?[1-9A-HJ-NP-TV-Za-hj-np-tv-z]{4}$/)
    .required()
    .messages({ 'string.pattern.base': 'code must be the 8 characters the phone shows (XXXX-XXXX)' }),
});
