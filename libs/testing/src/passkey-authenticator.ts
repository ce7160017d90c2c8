import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/*
 * A software WebAuthn authenticator for the tests of passkey-gated linking (docs/passkeys.md): one
 * ECDSA P-256 credential, as a platform passkey holds it. The simulator is told its credential id
 * and public key (`POST /accounts/:phone/passkey/authenticator`); a test asserts with it directly,
 * or hands its private key to a browser's virtual authenticator (the DevTools WebAuthn domain).
 */

const sha256 = (...parts: Buffer[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const b64url = (b: Buffer) => b.toString('base64url');

/** Changes to a valid assertion, to prove each check of the server. */
export interface AssertionTweak {
  type?: string;
  challenge?: string;
  origin?: string;
  rpId?: string;
  /** authenticatorData flags (UP 0x01, UV 0x04); default 0x05. */
  flags?: number;
  /** Sign with this key instead of the registered one. */
  signWith?: KeyObject;
  /** Flip a bit of the signature. */
  corruptSignature?: boolean;
  /** The credential id sent (both the `<credential_id>` node and the JSON's rawId). */
  credentialId?: Buffer;
}

/** A software WebAuthn authenticator: one ECDSA P-256 credential, as a platform passkey holds it. */
export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  /** The public key as SPKI DER, base64 (what `POST …/passkey/authenticator` takes). */
  get spki(): string {
    return this.keys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  }

  get jwk() {
    return this.keys.publicKey.export({ format: 'jwk' });
  }

  /** The private key, PKCS#8 DER in base64 (what `WebAuthn.addCredential` takes). */
  get pkcs8(): string {
    return this.keys.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
  }

  /** `PublicKeyCredential.toJSON()` of an assertion for `challenge` (what the gateway's API takes). */
  credential(challenge: string, tweak: AssertionTweak = {}): Record<string, unknown> {
    return JSON.parse(this.assert(challenge, tweak).json.toString()) as Record<string, unknown>;
  }

  /** `navigator.credentials.get` for the request's challenge: the `<passkey_prologue>` inputs. */
  assert(challenge: string, tweak: AssertionTweak = {}): { credentialId: Buffer; json: Buffer } {
    const credentialId = tweak.credentialId ?? this.credentialId;
    const clientData = Buffer.from(
      JSON.stringify({
        type: tweak.type ?? 'webauthn.get',
        challenge: tweak.challenge ?? challenge,
        origin: tweak.origin ?? 'https://web.whatsapp.com',
        crossOrigin: false,
      }),
    );
    const signCount = Buffer.alloc(4);
    signCount.writeUInt32BE(1);
    const authData = Buffer.concat([
      sha256(Buffer.from(tweak.rpId ?? 'whatsapp.com')),
      Buffer.from([tweak.flags ?? 0x05]),
      signCount,
    ]);
    const signature = sign(
      'sha256',
      Buffer.concat([authData, sha256(clientData)]),
      tweak.signWith ?? this.keys.privateKey,
    );
    if (tweak.corruptSignature) signature[signature.length - 1]! ^= 0x01;
    const json = JSON.stringify({
      id: b64url(credentialId),
      rawId: b64url(credentialId),
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: null,
      },
    });
    return { credentialId, json: Buffer.from(json) };
  }
}
