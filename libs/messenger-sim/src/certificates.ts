import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from 'node:crypto';
import { Curve, proto } from '@whiskeysockets/baileys';

export interface KeyPair {
  public: Buffer;
  private: Buffer;
}

/**
 * The Noise trust chain the client checks: root (stands in for WA_CERT_DETAILS.PUBLIC_KEY)
 * signs the intermediate, the intermediate signs the leaf. The client never compares the leaf
 * key with the server static key, but we keep them equal so the chain is honest.
 */
export interface NoiseCertChain {
  root: KeyPair;
  staticKey: KeyPair;
  encoded: Uint8Array;
}

const ROOT_SERIAL = 0;

/** Curve25519 pair as Buffers (Baileys' Curve hands out Uint8Arrays typed loosely). */
export function generateKeyPair(): KeyPair {
  const pair = Curve.generateKeyPair();
  return { public: Buffer.from(pair.public), private: Buffer.from(pair.private) };
}

/** PKCS#8 DER of an X25519 private key, up to its 32 raw bytes (RFC 8410). */
const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

/**
 * A Curve25519 key pair that signs (XEdDSA, as libsignal's `calculateSignature`) with Node's
 * native Ed25519 instead of libsignal's pure-JS curve25519, which costs milliseconds a
 * signature: the simulator mints one identity for every new contact, so that was most of its
 * CPU in a campaign to new numbers.
 *
 * The pair starts as an Ed25519 key: its secret scalar (the clamped first half of SHA-512 of the
 * seed, RFC 8032) is the Curve25519 private key, and the Curve25519 public key is the Montgomery
 * form of the Ed25519 public key, so both sign and agree like any Curve25519 pair. A native
 * Ed25519 signature is then the XEdDSA signature, with the Edwards sign bit carried in the top
 * bit of its last byte as libsignal expects (that bit of S is always 0).
 */
export class SigningKeyPair implements KeyPair {
  readonly public: Buffer;
  readonly private: Buffer;
  private readonly edPrivate: KeyObject;
  private readonly signBit: number;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
    const scalar = createHash('sha512').update(seed).digest().subarray(0, 32);
    scalar[0]! &= 248;
    scalar[31]! &= 127;
    scalar[31]! |= 64;
    const x25519 = createPrivateKey({
      key: Buffer.concat([X25519_PKCS8_PREFIX, scalar]),
      format: 'der',
      type: 'pkcs8',
    });
    this.private = Buffer.from(scalar);
    this.public = Buffer.from(createPublicKey(x25519).export({ format: 'jwk' }).x!, 'base64url');
    this.signBit = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url')[31]! & 0x80;
    this.edPrivate = privateKey;
  }

  /** The XEdDSA signature of `message`, as `Curve.sign(this.private, message)` would verify. */
  sign(message: Uint8Array): Buffer {
    const signature = sign(null, message, this.edPrivate);
    signature[63]! |= this.signBit;
    return signature;
  }
}

/**
 * One root per process: WA_CERT_DETAILS is process-wide, so several simulators started in the
 * same test process (one per suite) must all chain to the key the client already trusts.
 */
let processRoot: KeyPair | undefined;

export function createNoiseCertChain(): NoiseCertChain {
  const root = (processRoot ??= generateKeyPair());
  const intermediate = generateKeyPair();
  const staticKey = generateKeyPair();
  const now = Math.floor(Date.now() / 1000);
  const intermediateDetails = proto.CertChain.NoiseCertificate.Details.encode({
    serial: 1,
    issuerSerial: ROOT_SERIAL,
    key: intermediate.public,
    notBefore: now - 60,
    notAfter: now + 365 * 24 * 3600,
  }).finish();
  const leafDetails = proto.CertChain.NoiseCertificate.Details.encode({
    serial: 2,
    issuerSerial: 1,
    key: staticKey.public,
    notBefore: now - 60,
    notAfter: now + 30 * 24 * 3600,
  }).finish();
  const encoded = proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) },
    leaf: { details: leafDetails, signature: Curve.sign(intermediate.private, leafDetails) },
  }).finish();
  return { root, staticKey, encoded };
}
