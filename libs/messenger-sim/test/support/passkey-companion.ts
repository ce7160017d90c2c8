import {
  createCipheriv,
  createHash,
  createHmac,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import {
  bytesToCrockford,
  getBinaryNodeChild,
  proto,
  S_WHATSAPP_NET,
  type BinaryNode,
  type WASocket,
} from '@whiskeysockets/baileys';
import { SoftwareAuthenticator, until } from '@mgw/testing';

export { SoftwareAuthenticator };

/*
 * The companion's side of WhatsApp's passkey gate on linking, which Baileys rc14 does not
 * implement: what whatsmeow (tulir/whatsmeow b572e5bc, pair-passkey.go) and whatsapp-rust
 * (oxidezap/whatsapp-rust 3fb4729e, src/passkey/flow.rs and wacore/src/shortcake.rs) do, written
 * here with node:crypto only — independently of the simulator's code, so the two sides check each
 * other — over a real Baileys socket (its notification frames, `sock.query`, its auth creds).
 */

const sha256 = (...parts: Buffer[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const b64url = (b: Buffer) => b.toString('base64url');
/** DeviceProps.PlatformType CHROME: what the companion's ephemeral identity says it is. */
const CHROME = 1;

/** An iq the server refused: its `<error code text>`. */
export interface IqRefusal {
  code: number;
  text: string;
}

/** One companion prologue: its ephemeral identity, nonce and the payload committing to them. */
export interface Prologue {
  privateKey: KeyObject;
  ref: string;
  nonce: Buffer;
  payload: Buffer;
}

/** The companion's steps over a Baileys socket; it records what the server sends it. */
export class PasskeyCompanion {
  readonly requests: BinaryNode[] = [];
  readonly continuations: BinaryNode[] = [];
  readonly primaryHellos: BinaryNode[] = [];
  readonly pairSuccesses: BinaryNode[] = [];
  prologue?: Prologue;
  code?: string;
  private encryptionKey?: Buffer;

  constructor(private readonly sock: WASocket) {
    const { ws } = sock;
    ws.on('CB:notification,type:passkey_prologue_request', (n: BinaryNode) => this.requests.push(n));
    ws.on('CB:notification,type:crsc_continuation', (n: BinaryNode) => this.continuations.push(n));
    ws.on('CB:notification,type:link_code_companion_reg', (n: BinaryNode) => this.primaryHellos.push(n));
    ws.on('CB:iq,,pair-success', (n: BinaryNode) => this.pairSuccesses.push(n));
  }

  /** The request options the notification carried (waits for it). */
  async requestOptions(): Promise<Record<string, unknown> | undefined> {
    const request = await until(() => this.requests[0], 10_000, 'passkey_prologue_request');
    const options = getBinaryNodeChild(request, 'passkey_request_options')?.content;
    return options instanceof Uint8Array ? parseJson(options) : undefined;
  }

  /** `<iq get md><passkey_request_options/>` (whatsmeow getPasskeyRequestOptions). */
  async fetchOptions(): Promise<Record<string, unknown> | IqRefusal> {
    const answer = await this.iq('get', 'passkey_request_options');
    if ('code' in answer) return answer;
    const content = getBinaryNodeChild(answer, 'passkey_request_options')?.content;
    return content instanceof Uint8Array ? parseJson(content) : {};
  }

  async fetchRef(): Promise<string> {
    const answer = await this.iq('get', 'ref');
    if ('code' in answer) throw new Error(`ref refused: ${answer.code}`);
    const ref = getBinaryNodeChild(answer, 'ref')?.content;
    if (!(ref instanceof Uint8Array)) throw new Error('no <ref> in the answer');
    return Buffer.from(ref).toString('utf8');
  }

  /** A fresh ephemeral identity for `ref`, committed to (`commitment: false` leaves it out). */
  newPrologue(ref: string, { commitment = true } = {}): Prologue {
    const { privateKey, publicKey } = generateKeyPairSync('x25519');
    const nonce = randomBytes(32);
    const identity = Buffer.from(
      proto.CompanionEphemeralIdentity.encode({
        publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'),
        deviceType: CHROME,
        ref,
      }).finish(),
    );
    const payload = Buffer.from(
      proto.ProloguePayload.encode({
        companionEphemeralIdentity: identity,
        ...(commitment ? { commitment: { hash: sha256(identity, nonce) } } : {}),
      }).finish(),
    );
    return { privateKey, ref, nonce, payload };
  }

  /** HMAC-SHA256(HKDF(advSecret, no salt, "shortcake-passkey-handoff-v1"), payload). */
  static handoffProof(advSecret: Buffer, payload: Buffer): Buffer {
    const key = Buffer.from(
      hkdfSync('sha256', advSecret, Buffer.alloc(0), 'shortcake-passkey-handoff-v1', 32),
    );
    return createHmac('sha256', key).update(payload).digest();
  }

  /** `<iq set md><passkey_prologue>`; on success this prologue is the one the next steps use. */
  async sendPrologue(
    assertion: { credentialId: Buffer; json: Buffer },
    prologue: Prologue,
    proof?: Buffer,
  ): Promise<BinaryNode | IqRefusal> {
    const answer = await this.iq('set', 'passkey_prologue', [
      { tag: 'credential_id', attrs: {}, content: assertion.credentialId },
      { tag: 'webauthn_assertion', attrs: {}, content: assertion.json },
      { tag: 'prologue_payload', attrs: {}, content: prologue.payload },
      ...(proof ? [{ tag: 'pairing_handoff_proof', attrs: {}, content: proof }] : []),
    ]);
    if (!('code' in answer)) this.prologue = prologue;
    return answer;
  }

  /** The primary's ephemeral identity from `crsc_continuation` (waits for it). */
  async primaryIdentity(): Promise<{ publicKey: Buffer; nonce: Buffer }> {
    const n = await until(() => this.continuations[0], 10_000, 'crsc_continuation');
    const bytes = getBinaryNodeChild(n, 'primary_ephemeral_identity')?.content as Uint8Array;
    const primary = proto.PrimaryEphemeralIdentity.decode(bytes);
    return { publicKey: Buffer.from(primary.publicKey!), nonce: Buffer.from(primary.nonce!) };
  }

  /**
   * `<iq set md><companion_nonce>` (`nonce` defaults to the committed one); on success derives
   * the code and the pairing request's key as the companion does.
   */
  async revealNonce(nonce?: Buffer): Promise<BinaryNode | IqRefusal> {
    const prologue = this.prologue!;
    const answer = await this.iq('set', 'companion_nonce', nonce ?? prologue.nonce);
    if ('code' in answer) return answer;
    const primary = await this.primaryIdentity();
    const shared = diffieHellman({
      privateKey: prologue.privateKey,
      publicKey: createPublicKey({
        key: { kty: 'OKP', crv: 'X25519', x: b64url(primary.publicKey) },
        format: 'jwk',
      }),
    });
    this.encryptionKey = Buffer.from(
      hkdfSync(
        'sha256',
        shared,
        Buffer.from(`Companion Pairing ${CHROME} with ref ${prologue.ref}`),
        'Pairing Information Encryption Key',
        32,
      ),
    );
    const digest = sha256(prologue.nonce, primary.publicKey);
    const out = Buffer.alloc(5);
    for (let i = 0; i < 5; i++) out[i] = primary.nonce[i]! ^ digest[i]!;
    const code = bytesToCrockford(out);
    this.code = `${code.slice(0, 4)}-${code.slice(4)}`;
    return answer;
  }

  /**
   * `<iq set md><encrypted_pairing_request>` with the socket's Noise and identity keys (or the
   * ones given) and `advSecret`; `garbage` sends bytes that do not decrypt.
   */
  async sendPairingRequest(
    advSecret: Buffer,
    over: { noiseKey?: Buffer; garbage?: boolean } = {},
  ): Promise<BinaryNode | IqRefusal> {
    const creds = this.sock.authState.creds;
    const request = proto.PairingRequest.encode({
      companionPublicKey: over.noiseKey ?? creds.noiseKey.public,
      companionIdentityKey: creds.signedIdentityKey.public,
      advSecret,
    }).finish();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey!, iv);
    const sealed = Buffer.concat([cipher.update(request), cipher.final(), cipher.getAuthTag()]);
    const payload = over.garbage ? randomBytes(sealed.length) : sealed;
    return this.iq(
      'set',
      'encrypted_pairing_request',
      Buffer.from(proto.EncryptedPairingRequest.encode({ encryptedPayload: payload, iv }).finish()),
    );
  }

  /** An `md` iq; a refusal comes back as `{ code, text }` instead of a throw. */
  private async iq(
    type: 'get' | 'set',
    tag: string,
    content?: BinaryNode['content'],
  ): Promise<BinaryNode | IqRefusal> {
    try {
      return await this.sock.query(
        {
          tag: 'iq',
          attrs: { to: S_WHATSAPP_NET, type, xmlns: 'md' },
          content: [{ tag, attrs: {}, ...(content === undefined ? {} : { content }) }],
        },
        10_000,
      );
    } catch (err) {
      const boom = err as { data?: unknown; message: string };
      if (typeof boom.data === 'number') return { code: boom.data, text: boom.message };
      throw err;
    }
  }
}

const parseJson = (bytes: Uint8Array) =>
  JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
