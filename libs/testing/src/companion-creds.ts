/**
 * A companion device's Baileys credentials made without a socket, for the fast link
 * (fast-link.ts): first as Baileys' `initAuthCreds` makes them for a device about to pair, then as
 * its pair-success handler (`configureSuccessfulPairing`) completes them from what the phone sent.
 * The fields, their types and their meaning are Baileys' own; what differs is only how the two
 * signatures of the companion's identity key are computed: natively (Ed25519 turned XEdDSA, the
 * simulator's `SigningKeyPair`) instead of by libsignal's pure-JS curve, ~10 ms each, which would
 * make a fast link cost what a QR link costs. The signatures verify the same (`Curve.verify`); the
 * test kit's tests compare these credentials with Baileys' own, field by field.
 */
import { randomBytes } from 'node:crypto';
import {
  createSignalIdentity,
  Curve,
  generateRegistrationId,
  generateSignalPubKey,
  hmacSign,
  initAuthCreds,
  proto,
  WA_ADV_DEVICE_SIG_PREFIX,
  type AuthenticationCreds,
} from '@whiskeysockets/baileys';
import { SigningKeyPair, type ProvisionedCompanion } from '@mgw/messenger-sim';

/** A companion about to be linked: its credentials and how it signs with its identity key. */
export interface NewCompanion {
  creds: AuthenticationCreds;
  /** Signs with `creds.signedIdentityKey` (XEdDSA, as `Curve.sign` with its private key). */
  sign(message: Uint8Array): Buffer;
}

/** What the simulator's `POST /companions` wants of a companion: its public keys, base64. */
export interface CompanionKeysBody {
  noiseKey: string;
  identityKey: string;
  registrationId: number;
  signedPreKey: { keyId: number; publicKey: string; signature: string };
  advSecret: string;
}

/** The creds fields `initAuthCreds` draws afresh for each device; every other one is a constant. */
type DrawnField =
  | 'noiseKey'
  | 'pairingEphemeralKeyPair'
  | 'signedIdentityKey'
  | 'signedPreKey'
  | 'registrationId'
  | 'advSecretKey';

let constants: Omit<AuthenticationCreds, DrawnField> | undefined;

/** The constant fields (counters, settings, empty lists) as Baileys' `initAuthCreds` sets them. */
function constantFields(): Omit<AuthenticationCreds, DrawnField> {
  if (!constants) {
    const {
      noiseKey: _noise,
      pairingEphemeralKeyPair: _ephemeral,
      signedIdentityKey: _identity,
      signedPreKey: _preKey,
      registrationId: _registration,
      advSecretKey: _adv,
      ...rest
    } = initAuthCreds();
    constants = rest;
  }
  return structuredClone(constants);
}

/** `initAuthCreds()`, its identity key one that signs natively. */
export function newCompanion(): NewCompanion {
  const identity = new SigningKeyPair();
  const preKey = Curve.generateKeyPair();
  const creds: AuthenticationCreds = {
    noiseKey: Curve.generateKeyPair(),
    pairingEphemeralKeyPair: Curve.generateKeyPair(),
    signedIdentityKey: { private: identity.private, public: identity.public },
    // Baileys' signedKeyPair(identity, 1): the identity signs the pre-key's Signal public key.
    signedPreKey: {
      keyPair: preKey,
      signature: identity.sign(generateSignalPubKey(preKey.public)),
      keyId: 1,
    },
    registrationId: generateRegistrationId(),
    advSecretKey: randomBytes(32).toString('base64'),
    ...constantFields(),
  };
  return { creds, sign: (message) => identity.sign(message) };
}

/** What the companion's registration (or its QR) tells the phone, as the simulator's body wants it. */
export function companionKeysBody(creds: AuthenticationCreds): CompanionKeysBody {
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  return {
    noiseKey: b64(creds.noiseKey.public),
    identityKey: b64(creds.signedIdentityKey.public),
    registrationId: creds.registrationId,
    signedPreKey: {
      keyId: creds.signedPreKey.keyId,
      publicKey: b64(creds.signedPreKey.keyPair.public),
      signature: b64(creds.signedPreKey.signature),
    },
    advSecret: creds.advSecretKey,
  };
}

/**
 * The credentials after pair-success, as Baileys' `configureSuccessfulPairing` and its
 * `creds.update` leave them: the device identity checked against the ADV secret, counter-signed
 * by the companion, `me`, the account's Signal identity and the platform. (Baileys also checks
 * the account's signature; the fast link trusts its simulator, whose identity HMAC it checks.)
 */
export function pairedCreds(companion: NewCompanion, paired: ProvisionedCompanion): AuthenticationCreds {
  const { creds } = companion;
  const { details, hmac, accountType } = proto.ADVSignedDeviceIdentityHMAC.decode(
    Buffer.from(paired.deviceIdentity, 'base64'),
  );
  if (accountType === proto.ADVEncryptionType.HOSTED) throw new Error('a hosted account is not fast-linked');
  if (
    !details ||
    !hmac ||
    !Buffer.from(hmac).equals(hmacSign(details, Buffer.from(creds.advSecretKey, 'base64')))
  )
    throw new Error('the device identity does not match the companion (invalid HMAC)');
  const account = proto.ADVSignedDeviceIdentity.decode(details);
  const { details: deviceDetails, accountSignatureKey } = account;
  if (!deviceDetails || !accountSignatureKey) throw new Error('the device identity is incomplete');
  account.deviceSignature = companion.sign(
    Buffer.concat([
      WA_ADV_DEVICE_SIG_PREFIX,
      deviceDetails,
      creds.signedIdentityKey.public,
      accountSignatureKey,
    ]),
  );
  return {
    ...creds,
    account,
    me: { id: paired.jid, name: paired.businessName, lid: paired.lid },
    signalIdentities: [
      ...(creds.signalIdentities ?? []),
      createSignalIdentity(paired.lid, accountSignatureKey),
    ],
    platform: paired.platform,
  };
}
