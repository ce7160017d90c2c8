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
