import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { aesDecryptGCM, bytesToCrockford, Curve, proto } from '@whiskeysockets/baileys';
import { sha256 } from './passkey-webauthn.js';

/**
 * The primary's half of the ephemeral-identity handshake that follows an accepted passkey
 * assertion ("SHORTCAKE_PASSKEY"), mirroring the companion's half as whatsmeow
 * (tulir/whatsmeow b572e5bc, pair-passkey.go) and whatsapp-rust (oxidezap/whatsapp-rust 3fb4729e,
 * wacore/src/shortcake.rs) read it from WhatsApp Web:
 *
 * - the companion commits to its ephemeral identity: `commitment = SHA-256(identity ‖ nonce)`;
 * - the primary answers with its ephemeral X25519 key and a nonce (`crsc_continuation`);
 * - the companion reveals its nonce; both derive the 8-character verification code
 *   `base32(primaryNonce[i] ^ SHA-256(companionNonce ‖ primaryPub)[i], i < 5)`;
 * - the companion encrypts a `PairingRequest` (its Noise and identity keys and a NEW ADV secret)
 *   under `HKDF-SHA256(X25519, salt "Companion Pairing <deviceType> with ref <ref>",
 *   info "Pairing Information Encryption Key")`, AES-256-GCM without additional data;
 * - a re-linking companion may prove it held the QR's ADV secret: `HMAC-SHA256(HKDF(advSecret,
 *   no salt, "shortcake-passkey-handoff-v1"), prologuePayload)`.
 */

const HANDOFF_INFO = 'shortcake-passkey-handoff-v1';
const PAIRING_KEY_INFO = 'Pairing Information Encryption Key';
/** whatsapp-rust's VERIFICATION_CODE_BYTES: 5 bytes, 8 base32 characters. */
const CODE_BYTES = 5;

const hkdf32 = (ikm: Buffer, salt: Buffer | string, info: string): Buffer =>
  Buffer.from(hkdfSync('sha256', ikm, salt, info, 32));

/** The `<prologue_payload>` a passkey assertion came with, parsed and checked for shape. */
export interface Prologue {
  /** The `CompanionEphemeralIdentity` bytes the commitment covers. */
  identityBytes: Buffer;
  /** The companion's ephemeral X25519 key (raw 32 bytes, no 0x05 prefix). */
  companionKey: Buffer;
  /** `DeviceProps.PlatformType` as a number (it goes into the encryption key's salt). */
  deviceType: number;
  ref: string;
  commitment: Buffer;
}

/** Parses a `ProloguePayload`; answers a refusal reason when it is malformed. */
export function parsePrologue(bytes: Buffer | undefined): Prologue | string {
  if (!bytes) return 'prologue-payload';
  try {
    const payload = proto.ProloguePayload.decode(bytes);
    const identityBytes = Buffer.from(payload.companionEphemeralIdentity ?? []);
    const identity = proto.CompanionEphemeralIdentity.decode(identityBytes);
    const companionKey = Buffer.from(identity.publicKey ?? []);
    const commitment = Buffer.from(payload.commitment?.hash ?? []);
    if (companionKey.length !== 32) return 'prologue-payload';
    if (commitment.length !== 32) return 'commitment';
    return {
      identityBytes,
      companionKey,
      deviceType: identity.deviceType ?? 0,
      ref: identity.ref ?? '',
      commitment,
    };
  } catch {
    return 'prologue-payload';
  }
}

/** The `<pairing_handoff_proof>` a companion holding `advSecret` computes over the prologue. */
export function handoffProof(advSecret: Buffer, prologuePayload: Buffer): Buffer {
  const key = hkdf32(advSecret, Buffer.alloc(0), HANDOFF_INFO);
  return createHmac('sha256', key).update(prologuePayload).digest();
}

/** The primary's ephemeral identity: an X25519 key pair and a nonce. */
export interface PrimaryEphemeral {
  private: Buffer;
  public: Buffer;
  nonce: Buffer;
}

export function newPrimaryEphemeral(): PrimaryEphemeral {
  const pair = Curve.generateKeyPair();
  return { private: Buffer.from(pair.private), public: Buffer.from(pair.public), nonce: randomBytes(32) };
}

/** `PrimaryEphemeralIdentity` bytes for the `crsc_continuation` notification. */
export const primaryIdentityBytes = (primary: PrimaryEphemeral): Buffer =>
  Buffer.from(
    proto.PrimaryEphemeralIdentity.encode({ publicKey: primary.public, nonce: primary.nonce }).finish(),
  );

/** Whether the revealed nonce opens the commitment: SHA-256(identity ‖ nonce). */
export const opensCommitment = (prologue: Prologue, nonce: Buffer): boolean =>
  nonce.length === 32 && sha256(Buffer.concat([prologue.identityBytes, nonce])).equals(prologue.commitment);

/** The code both sides show, "XXXX-XXXX" (the pairing-code alphabet, 123456789ABCDEFGHJKLMNPQRSTVWXYZ). */
export function verificationCode(companionNonce: Buffer, primary: PrimaryEphemeral): string {
  const digest = sha256(Buffer.concat([companionNonce, primary.public]));
  const out = Buffer.alloc(CODE_BYTES);
  for (let i = 0; i < CODE_BYTES; i++) out[i] = primary.nonce[i]! ^ digest[i]!;
  const code = bytesToCrockford(out);
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * Decrypts an `EncryptedPairingRequest` with the key both sides derive; throws when it does not
 * decrypt or parse.
 */
export function openPairingRequest(
  bytes: Buffer,
  prologue: Prologue,
  primary: PrimaryEphemeral,
): proto.PairingRequest {
  const wrapped = proto.EncryptedPairingRequest.decode(bytes);
  const iv = Buffer.from(wrapped.iv ?? []);
  const payload = Buffer.from(wrapped.encryptedPayload ?? []);
  if (iv.length !== 12 || payload.length <= 16) throw new Error('malformed EncryptedPairingRequest');
  const shared = Buffer.from(Curve.sharedKey(primary.private, prologue.companionKey));
  const key = hkdf32(
    shared,
    `Companion Pairing ${prologue.deviceType} with ref ${prologue.ref}`,
    PAIRING_KEY_INFO,
  );
  return proto.PairingRequest.decode(aesDecryptGCM(payload, key, iv, Buffer.alloc(0)));
}
