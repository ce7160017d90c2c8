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

/** 2^255 − 19, the field of Curve25519 and Ed25519. */
const P25519 = 2n ** 255n - 19n;

/** A little-endian 32-byte field element and back. */
const fromLE = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).reverse().toString('hex')}`);
const toLE = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse();

function powMod(base: bigint, exp: bigint): bigint {
  let result = 1n;
  for (let b = base % P25519, e = exp; e > 0n; e >>= 1n, b = (b * b) % P25519) {
    if (e & 1n) result = (result * b) % P25519;
  }
  return result;
}

/** The Montgomery u of an Ed25519 public key (RFC 7748: u = (1 + y) / (1 − y)), its X25519 public key. */
function montgomeryU(edPublic: Uint8Array): Buffer {
  const y = fromLE(edPublic) & ((1n << 255n) - 1n); // the top bit is the sign of x
  return toLE(((1n + y) * powMod((1n - y + P25519) % P25519, P25519 - 2n)) % P25519);
}

/** The PKCS#8 DER of an Ed25519 private key up to its 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * A Curve25519 key pair that signs (XEdDSA, as libsignal's `calculateSignature`) with Node's
 * native Ed25519 instead of libsignal's pure-JS curve25519, which costs milliseconds a
 * signature: the simulator mints one identity for every new contact, so that was most of its
 * CPU in a batch to new numbers.
 *
 * The pair starts as an Ed25519 key: its secret scalar (the clamped first half of SHA-512 of the
 * seed, RFC 8032) is the Curve25519 private key, and the Curve25519 public key is the Montgomery
 * form of the Ed25519 public key, so both sign and agree like any Curve25519 pair. A native
 * Ed25519 signature is then the XEdDSA signature, with the Edwards sign bit carried in the top
 * bit of its last byte as libsignal expects (that bit of S is always 0).
 *
 * The generated pair comes out as DER and the signing key is imported from its bytes: on Node 20,
 * exporting a generated KeyObject (as a JWK, as this did) can deadlock the process for good — the
 * export holds the key's lock while allocating, the allocation collects the finished generation
 * job, and its destructor takes the same lock (seen in the simulator under a long batch).
 */
export class SigningKeyPair implements KeyPair {
  readonly public: Buffer;
  readonly private: Buffer;
  /** The Ed25519 seed everything else derives from: what a saved state keeps (persistence.ts). */
  readonly seed: Buffer;
  private readonly edPrivate: KeyObject;
  private readonly signBit: number;

  /** A new pair, or the pair of a saved `seed`. */
  constructor(savedSeed?: Buffer) {
    let pkcs8: Buffer;
    let spki: Buffer;
    if (savedSeed) {
      pkcs8 = Buffer.concat([PKCS8_ED25519_PREFIX, savedSeed]);
      spki = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })).export({
        format: 'der',
        type: 'spki',
      });
    } else {
      ({ privateKey: pkcs8, publicKey: spki } = generateKeyPairSync('ed25519', {
        privateKeyEncoding: { format: 'der', type: 'pkcs8' },
        publicKeyEncoding: { format: 'der', type: 'spki' },
      }));
    }
    // RFC 8410: the 32-byte seed ends the PKCS#8 DER, the 32-byte public key the SPKI DER.
    const seed = pkcs8.subarray(-32);
    this.seed = Buffer.from(seed);
    const edPublic = spki.subarray(-32);
    const scalar = createHash('sha512').update(seed).digest().subarray(0, 32);
    scalar[0]! &= 248;
    scalar[31]! &= 127;
    scalar[31]! |= 64;
    this.private = Buffer.from(scalar);
    this.public = montgomeryU(edPublic);
    this.signBit = edPublic[31]! & 0x80;
    this.edPrivate = createPrivateKey({
      key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: edPublic.toString('base64url') },
      format: 'jwk',
    });
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

/**
 * @param savedRoot the root of a saved state (persistence.ts), used unless this process already
 *   trusts another one
 */
export function createNoiseCertChain(savedRoot?: KeyPair): NoiseCertChain {
  const root = (processRoot ??= savedRoot ?? generateKeyPair());
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
