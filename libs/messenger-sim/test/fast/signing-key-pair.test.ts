import { expect } from 'chai';
import { Curve, generateSignalPubKey } from '@whiskeysockets/baileys';
import { calculateSignature, verifySignature } from 'libsignal/src/curve.js';
import { SigningKeyPair } from '../../src/certificates.js';

describe('messenger-sim: Curve25519 identities signed natively', () => {
  it('When a message is signed natively, then libsignal verifies it against the Curve25519 public key, and not a tampered one', () => {
    for (let i = 0; i < 50; i++) {
      const pair = new SigningKeyPair();
      const message = generateSignalPubKey(Curve.generateKeyPair().public);
      const signature = pair.sign(message);
      const pub = generateSignalPubKey(pair.public);
      expect(verifySignature(pub, message, signature), `pair ${i}`).to.equal(true);
      // the same key signing the pure-JS way verifies too: one key, two signers
      expect(verifySignature(pub, message, calculateSignature(pair.private, message))).to.equal(true);
      const tampered = Buffer.from(message);
      tampered[5]! ^= 1;
      expect(verifySignature(pub, tampered, signature)).to.equal(false);
      const otherKey = generateSignalPubKey(new SigningKeyPair().public);
      expect(verifySignature(otherKey, message, signature)).to.equal(false);
    }
  });

  it('When it agrees a key with another Curve25519 pair, then both sides get the same secret', () => {
    const pair = new SigningKeyPair();
    const other = Curve.generateKeyPair();
    const ours = Curve.sharedKey(pair.private, other.public);
    expect(ours).to.have.length(32);
    expect(ours.equals(Curve.sharedKey(other.private, pair.public))).to.equal(true);
  });
});
