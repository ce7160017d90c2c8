import { createHash, createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';

/**
 * The WebAuthn half of WhatsApp's 2026 passkey gate on linking ("SHORTCAKE_PASSKEY"), server side:
 * the request options the server sends with `passkey_prologue_request`, and the checks a relying
 * party makes of the assertion the companion answers with (`<webauthn_assertion>`). The request
 * and assertion shapes follow whatsmeow (tulir/whatsmeow b572e5bc, types/passkey.go) and
 * whatsapp-rust (oxidezap/whatsapp-rust 3fb4729e, src/passkey/mod.rs); the checks are the
 * WebAuthn Level 2 "verifying an authentication assertion" steps a server would make.
 */

/** The relying party the options name; the authenticator hashes it into `authenticatorData`. */
export const PASSKEY_RP_ID = 'whatsapp.com';
/** The origin a browser puts in `clientDataJSON` for WhatsApp Web. */
export const PASSKEY_ORIGIN = 'https://web.whatsapp.com';
/** How long a passkey request stays pending (the options' `timeout`), unless a fault shortens it. */
export const PASSKEY_TIMEOUT_MS = 600_000;

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;

/** The authenticator registered to an account: its credential id and ECDSA P-256 public key. */
export interface RegisteredPasskey {
  credentialId: Buffer;
  publicKey: KeyObject;
}

/** The public key of `POST /accounts/:phone/passkey/authenticator`: SPKI DER in base64, or a JWK. */
export function parsePasskeyPublicKey(input: unknown): KeyObject {
  let key: KeyObject;
  try {
    if (typeof input === 'string') {
      key = createPublicKey({ key: Buffer.from(input, 'base64'), format: 'der', type: 'spki' });
    } else if (input && typeof input === 'object' && !Array.isArray(input)) {
      key = createPublicKey({ key: input as JsonWebKey, format: 'jwk' });
    } else throw new Error('missing');
  } catch {
    throw new Error('publicKey must be an SPKI DER key in base64 or a JWK');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new Error('publicKey must be an ECDSA P-256 key');
  return key;
}

/**
 * Base64url bytes of a JSON field (Node's decoder also takes standard base64); undefined when
 * the field is not a non-empty string.
 */
export const b64urlField = (value: unknown): Buffer | undefined =>
  typeof value === 'string' && value ? Buffer.from(value, 'base64url') : undefined;

/** `PublicKeyCredentialRequestOptions` JSON, as the `<passkey_request_options>` bytes. */
export function requestOptionsJson(challenge: Buffer, credentialId: Buffer, timeoutMs: number): Buffer {
  return Buffer.from(
    JSON.stringify({
      challenge: challenge.toString('base64url'),
      timeout: timeoutMs,
      rpId: PASSKEY_RP_ID,
      allowCredentials: [
        { id: credentialId.toString('base64url'), type: 'public-key', transports: ['internal', 'hybrid'] },
      ],
      userVerification: 'required',
    }),
  );
}

/** What the companion sent in `<passkey_prologue>` that the WebAuthn checks read. */
export interface AssertionInput {
  /** The `<credential_id>` node: the credential's rawId bytes. */
  credentialId: Buffer | undefined;
  /** The `<webauthn_assertion>` node: the PublicKeyCredential JSON. */
  assertionJson: Buffer | undefined;
}

/**
 * Checks an assertion against the pending request's challenge and the registered authenticator;
 * answers why it is refused (a short reason, shown as `lastRejection`), or undefined when valid.
 */
export function assertionRefusal(
  input: AssertionInput,
  challenge: Buffer,
  registered: RegisteredPasskey,
): string | undefined {
  if (!input.credentialId?.equals(registered.credentialId)) return 'credential';
  let credential: Record<string, unknown>;
  try {
    credential = JSON.parse(input.assertionJson?.toString('utf8') ?? '') as Record<string, unknown>;
  } catch {
    return 'assertion-json';
  }
  if (!credential || typeof credential !== 'object') return 'assertion-json';
  const rawId = b64urlField(credential.rawId);
  if (!rawId?.equals(registered.credentialId)) return 'credential';
  const response = credential.response as Record<string, unknown> | undefined;
  const clientDataJson = b64urlField(response?.clientDataJSON);
  const authData = b64urlField(response?.authenticatorData);
  const signature = b64urlField(response?.signature);
  if (!clientDataJson || !authData || !signature) return 'assertion-json';

  let clientData: Record<string, unknown>;
  try {
    clientData = JSON.parse(clientDataJson.toString('utf8')) as Record<string, unknown>;
  } catch {
    return 'client-data';
  }
  if (clientData?.type !== 'webauthn.get') return 'client-data-type';
  if (!b64urlField(clientData.challenge)?.equals(challenge)) return 'challenge';
  if (clientData.origin !== PASSKEY_ORIGIN) return 'origin';

  // authenticatorData: rpIdHash (32) ‖ flags (1) ‖ signCount (4) ‖ extensions…
  if (authData.length < 37) return 'authenticator-data';
  if (!authData.subarray(0, 32).equals(sha256(Buffer.from(PASSKEY_RP_ID)))) return 'rp-id-hash';
  const flags = authData[32]!;
  if (!(flags & FLAG_USER_PRESENT)) return 'user-presence';
  if (!(flags & FLAG_USER_VERIFIED)) return 'user-verification';

  const signed = Buffer.concat([authData, sha256(clientDataJson)]);
  let valid = false;
  try {
    valid = verify('sha256', signed, { key: registered.publicKey, dsaEncoding: 'der' }, signature);
  } catch {
    valid = false;
  }
  return valid ? undefined : 'signature';
}

export const sha256 = (bytes: Buffer): Buffer => createHash('sha256').update(bytes).digest();
