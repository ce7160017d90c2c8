import { EventEmitter } from 'node:events';
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
  S_WHATSAPP_NET,
  bytesToCrockford,
  getBinaryNodeChild,
  proto,
  type AuthenticationCreds,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import { serializeError, type Logger } from '@mgw/common';
import type { PasskeyAssertion, PasskeyFailure, PasskeyStep } from '@mgw/contracts';

/*
 * Linking an account that a passkey guards: WhatsApp's 2026 "SHORTCAKE_PASSKEY" gate, the
 * companion's side. Baileys rc14 acknowledges the server's `passkey_prologue_request` and drops it;
 * this does what tulir/whatsmeow does since b572e5bc ("pair: add support for passkeys",
 * pair-passkey.go, notification.go) and oxidezap/whatsapp-rust since 3fb4729e
 * (src/passkey/flow.rs, wacore/src/shortcake.rs), through Baileys' own extension points: the
 * notification frames (`CB:notification,type:…`), `sock.query` and the auth creds.
 *
 * 1. `passkey_prologue_request` carries the WebAuthn request options (or we ask for them with
 *    `<iq get md><passkey_request_options/>`): the link waits for an assertion, which only a
 *    browser on a whatsapp.com page can make (rpId whatsapp.com, user verification).
 * 2. With the assertion: `<iq get md><ref/>`, a fresh X25519 ephemeral key and nonce, the
 *    prologue payload (our ephemeral identity and its commitment SHA-256(identity ‖ nonce)), and
 *    `<iq set md><passkey_prologue>` (credential id, assertion JSON, payload, and on a re-link only
 *    the handoff proof: whatsapp-rust 32c47d9f).
 * 3. `crsc_continuation` carries the primary's ephemeral identity: we reveal our nonce
 *    (`<companion_nonce>`), and derive the 8-character code the phone shows and the key that
 *    encrypts the pairing request.
 * 4. Once the operator confirmed the code (skipped when the handoff proof was accepted), the
 *    `<encrypted_pairing_request>` (our noise and identity keys, a NEW ADV secret). The link then
 *    ends with an ordinary `pair-success`, signed under the new secret. As whatsapp-rust does,
 *    the new secret replaces the old one only when it is sent (an abandoned attempt never rotates
 *    to a secret the primary never got).
 */

/** HKDF info of the handoff key (from the ADV secret before the rotation). */
const HANDOFF_INFO = 'shortcake-passkey-handoff-v1';
/** HKDF info of the pairing request's key; its salt names the platform and the ref. */
const PAIRING_KEY_INFO = 'Pairing Information Encryption Key';
/** Bytes of the code (5 → 8 base32 characters). */
const CODE_BYTES = 5;
/** What a request's options say when they name no timeout (WhatsApp's: 600 s). */
const DEFAULT_TIMEOUT_MS = 600_000;

/** What the link shows of itself: its step, when the request expires, and the code once known. */
export interface PasskeyState {
  step: PasskeyStep;
  /** When the passkey request expires (epoch ms). */
  expiresAt: number;
  /** The WebAuthn request options as WhatsApp sent them (JSON), for the browser that asserts. */
  options: Record<string, unknown>;
  /** The code the phone shows (`XXXX-XXXX`), from `confirm_code` on. */
  code?: string;
}

export interface PasskeyLinkEvents {
  state: [PasskeyState];
  /** The attempt ended without a link, for this reason. */
  failed: [PasskeyFailure];
}

export interface PasskeyLinkOptions {
  query: (node: BinaryNode) => Promise<BinaryNode>;
  creds: AuthenticationCreds;
  /** Writes the creds (the rotated ADV secret). */
  saveCreds: () => void;
  /** `DeviceProps.PlatformType` of this companion (its browser: CHROME = 1). */
  platformType: number;
  /** After the prologue was taken, how long the continuation may take. */
  continuationTimeoutMs: number;
  logger: Logger;
}

/** A bad assertion handed in by the operator (not WhatsApp's refusal): its request is answered 400. */
export class PasskeyInputError extends Error {
  override name = 'PasskeyInputError';
}

/** A step asked for at the wrong time (no request, another step): its request is answered 409. */
export class PasskeyStepError extends Error {
  override name = 'PasskeyStepError';
}

interface Attempt {
  keys: { privateKey: KeyObject; publicRaw: Buffer };
  nonce: Buffer;
  identity: Buffer;
  ref: string;
  newAdvSecret: Buffer;
  skipHandoff: boolean;
  encryptionKey?: Buffer;
}

const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const bytesOf = (node: BinaryNode | undefined): Buffer | undefined =>
  node?.content instanceof Uint8Array ? Buffer.from(node.content) : undefined;

/**
 * One passkey-gated link of a pairing socket (see the top of this file). The pairing session
 * feeds it the two notifications and the operator's steps; it reports its state and how it ended.
 */
export class PasskeyLink extends EventEmitter<PasskeyLinkEvents> {
  private state: PasskeyState | undefined;
  private attempt: Attempt | undefined;
  private handoffKey: Buffer | undefined;
  private expiry: NodeJS.Timeout | undefined;
  private continuation: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(private readonly o: PasskeyLinkOptions) {
    super();
  }

  /** The state shown now (undefined before the request came). */
  get current(): PasskeyState | undefined {
    return this.state;
  }

  /** `passkey_prologue_request`: the link waits for an assertion. */
  async onRequest(node: BinaryNode): Promise<void> {
    if (this.ended || this.state) return;
    let options = parseOptions(getBinaryNodeChild(node, 'passkey_request_options'));
    if (!options) {
      // Left out of the notification: asked for (whatsmeow getPasskeyRequestOptions).
      try {
        const answer = await this.o.query({
          tag: 'iq',
          attrs: { to: S_WHATSAPP_NET, type: 'get', xmlns: 'md' },
          content: [{ tag: 'passkey_request_options', attrs: {} }],
        });
        options = parseOptions(getBinaryNodeChild(answer, 'passkey_request_options'));
      } catch (err) {
        this.o.logger.warn('passkey request options could not be fetched', { err: serializeError(err) });
      }
    }
    if (!options) return this.fail('passkey_options_unavailable');
    // Only a re-link proves continuity with the old secret (whatsapp-rust 32c47d9f): on a first
    // link the phone always shows the code. `account` (the signed identity) exists only once a
    // link succeeded; `me` does not tell (Baileys sets it when it asks for a pairing code).
    if (this.o.creds.account && this.o.creds.advSecretKey)
      this.handoffKey = Buffer.from(
        hkdfSync(
          'sha256',
          Buffer.from(this.o.creds.advSecretKey, 'base64'),
          Buffer.alloc(0),
          HANDOFF_INFO,
          32,
        ),
      );
    const timeout =
      typeof options.timeout === 'number' && options.timeout > 0 ? options.timeout : DEFAULT_TIMEOUT_MS;
    const expiresAt = Date.now() + timeout;
    this.expiry = setTimeout(() => this.fail('passkey_expired'), timeout);
    this.expiry.unref();
    this.show({ step: 'assertion', expiresAt, options });
  }

  /**
   * The operator's assertion (`PublicKeyCredential.toJSON()`, checked by the API's schema): sent
   * with our prologue. True when WhatsApp took it; false when it refused it (that ends the
   * attempt: `passkey_rejected`). Throws `PasskeyInputError` for one that cannot be this
   * request's, `PasskeyStepError` when no assertion is awaited.
   */
  async submitAssertion(assertion: PasskeyAssertion): Promise<boolean> {
    const state = this.state;
    if (this.ended || state?.step !== 'assertion')
      throw new PasskeyStepError('no passkey assertion is awaited now');
    checkChallenge(assertion, state.options);
    this.show({ ...state, step: 'verifying' });
    try {
      const ref = await this.fetchRef();
      const { privateKey, publicKey } = generateKeyPairSync('x25519');
      const publicRaw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
      const nonce = randomBytes(32);
      const identity = Buffer.from(
        proto.CompanionEphemeralIdentity.encode({
          publicKey: publicRaw,
          deviceType: this.o.platformType,
          ref,
        }).finish(),
      );
      const commitment = createHash('sha256').update(identity).update(nonce).digest();
      const payload = Buffer.from(
        proto.ProloguePayload.encode({
          companionEphemeralIdentity: identity,
          commitment: { hash: commitment },
        }).finish(),
      );
      const proof = this.handoffKey
        ? createHmac('sha256', this.handoffKey).update(payload).digest()
        : undefined;
      this.attempt = {
        keys: { privateKey, publicRaw },
        nonce,
        identity,
        ref,
        newAdvSecret: randomBytes(32),
        skipHandoff: proof !== undefined,
      };
      // Armed before the prologue goes: WhatsApp's continuation can arrive before the answer to
      // the prologue is read (a loaded host), and must then find the timer to clear.
      this.continuation = setTimeout(
        () => this.fail('passkey_no_continuation'),
        this.o.continuationTimeoutMs,
      );
      this.continuation.unref();
      await this.o.query(
        mdSet('passkey_prologue', [
          { tag: 'credential_id', attrs: {}, content: Buffer.from(assertion.rawId, 'base64url') },
          { tag: 'webauthn_assertion', attrs: {}, content: Buffer.from(assertionJson(assertion)) },
          { tag: 'prologue_payload', attrs: {}, content: payload },
          ...(proof ? [{ tag: 'pairing_handoff_proof', attrs: {}, content: proof }] : []),
        ]),
      );
      this.handoffKey = undefined;
    } catch (err) {
      clearTimeout(this.continuation);
      if (this.ended) return false;
      this.o.logger.warn('passkey assertion refused', { err: serializeError(err) });
      this.fail('passkey_rejected');
      return false;
    }
    return true;
  }

  /** `crsc_continuation`: the primary's ephemeral identity; our nonce goes back, the code is known. */
  async onContinuation(node: BinaryNode): Promise<void> {
    const attempt = this.attempt;
    const state = this.state;
    if (this.ended || !attempt || state?.step !== 'verifying') {
      this.o.logger.warn('passkey continuation without a prologue: ignored');
      return;
    }
    clearTimeout(this.continuation);
    try {
      const primary = proto.PrimaryEphemeralIdentity.decode(
        bytesOf(getBinaryNodeChild(node, 'primary_ephemeral_identity')) ?? Buffer.alloc(0),
      );
      const primaryPub = Buffer.from(primary.publicKey ?? []);
      const primaryNonce = Buffer.from(primary.nonce ?? []);
      if (primaryPub.length !== 32 || primaryNonce.length !== 32)
        throw new Error('primary ephemeral identity: a key and a nonce of 32 bytes expected');
      const shared = diffieHellman({
        privateKey: attempt.keys.privateKey,
        publicKey: createPublicKey({
          key: { kty: 'OKP', crv: 'X25519', x: b64url(primaryPub) },
          format: 'jwk',
        }),
      });
      await this.o.query(mdSet('companion_nonce', attempt.nonce));
      const salt = `Companion Pairing ${this.o.platformType} with ref ${attempt.ref}`;
      attempt.encryptionKey = Buffer.from(
        hkdfSync('sha256', shared, Buffer.from(salt), PAIRING_KEY_INFO, 32),
      );
      const digest = createHash('sha256').update(attempt.nonce).update(primaryPub).digest();
      const bare = Buffer.alloc(CODE_BYTES);
      for (let i = 0; i < CODE_BYTES; i++) bare[i] = primaryNonce[i]! ^ digest[i]!;
      const code = bytesToCrockford(bare);
      this.show({ ...state, step: 'confirm_code', code: `${code.slice(0, 4)}-${code.slice(4)}` });
    } catch (err) {
      this.o.logger.warn('passkey continuation failed', { err: serializeError(err) });
      return this.fail('passkey_failed');
    }
    // The server accepted our proof of the old secret: the phone shows no code to compare.
    if (attempt.skipHandoff) await this.confirm();
  }

  /**
   * The operator compared the code with the phone's (`code`, when given, must be ours): the
   * encrypted pairing request goes, and `pair-success` ends the link.
   */
  async confirm(code?: string): Promise<void> {
    const attempt = this.attempt;
    const state = this.state;
    if (this.ended || !attempt?.encryptionKey || state?.step !== 'confirm_code')
      throw new PasskeyStepError('no code waits for a confirmation now');
    if (code !== undefined && normalCode(code) !== normalCode(state.code ?? ''))
      throw new PasskeyInputError('the code is not the one this link shows');
    this.show({ ...state, step: 'finishing' });
    const { creds } = this.o;
    const request = proto.PairingRequest.encode({
      companionPublicKey: creds.noiseKey.public,
      companionIdentityKey: creds.signedIdentityKey.public,
      advSecret: attempt.newAdvSecret,
    }).finish();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', attempt.encryptionKey, iv);
    const encrypted = Buffer.concat([cipher.update(request), cipher.final(), cipher.getAuthTag()]);
    const previous = creds.advSecretKey;
    // pair-success is checked against the secret in the creds: the new one from now on.
    creds.advSecretKey = attempt.newAdvSecret.toString('base64');
    try {
      await this.o.query(
        mdSet(
          'encrypted_pairing_request',
          Buffer.from(proto.EncryptedPairingRequest.encode({ encryptedPayload: encrypted, iv }).finish()),
        ),
      );
      this.o.saveCreds();
    } catch (err) {
      creds.advSecretKey = previous;
      if (this.ended) return;
      this.o.logger.warn('passkey pairing request refused', { err: serializeError(err) });
      this.fail('passkey_failed');
    }
  }

  /** The socket ended (or the link succeeded): no timer may fire any more. */
  close(): void {
    this.ended = true;
    clearTimeout(this.expiry);
    clearTimeout(this.continuation);
  }

  private async fetchRef(): Promise<string> {
    const answer = await this.o.query({
      tag: 'iq',
      attrs: { to: S_WHATSAPP_NET, type: 'get', xmlns: 'md' },
      content: [{ tag: 'ref', attrs: {} }],
    });
    const ref = bytesOf(getBinaryNodeChild(answer, 'ref'));
    if (!ref?.length) throw new Error('no <ref> in the answer');
    return ref.toString('utf8');
  }

  private show(state: PasskeyState): void {
    this.state = state;
    this.emit('state', state);
  }

  private fail(reason: PasskeyFailure): void {
    if (this.ended) return;
    this.close();
    this.emit('failed', reason);
  }
}

/** `<iq set md>` with one child. */
function mdSet(tag: string, content: BinaryNode[] | Buffer): BinaryNode {
  return {
    tag: 'iq',
    attrs: { to: S_WHATSAPP_NET, type: 'set', xmlns: 'md' },
    content: [{ tag, attrs: {}, content }],
  };
}

/** The request options' JSON (an object with a challenge), or undefined. */
function parseOptions(node: BinaryNode | undefined): Record<string, unknown> | undefined {
  const raw = bytesOf(node);
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw.toString('utf8')) as unknown;
    if (v && typeof v === 'object' && typeof (v as { challenge?: unknown }).challenge === 'string')
      return v as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return undefined;
}

/** The assertion must answer this request's challenge (a stale or foreign one is refused here). */
function checkChallenge(assertion: PasskeyAssertion, options: Record<string, unknown>): void {
  let client: { type?: unknown; challenge?: unknown };
  try {
    client = JSON.parse(
      Buffer.from(assertion.response.clientDataJSON, 'base64url').toString('utf8'),
    ) as typeof client;
  } catch {
    throw new PasskeyInputError('response.clientDataJSON is not JSON');
  }
  if (client.type !== 'webauthn.get') throw new PasskeyInputError('the assertion is not a webauthn.get');
  if (client.challenge !== options.challenge)
    throw new PasskeyInputError('the assertion answers another challenge than this link’s');
}

/** The assertion as WhatsApp Web sends it (whatsmeow types.WebAuthnResponse), from checked fields only. */
function assertionJson(a: PasskeyAssertion): string {
  return JSON.stringify({
    id: a.id,
    rawId: a.rawId,
    type: 'public-key',
    response: {
      clientDataJSON: a.response.clientDataJSON,
      authenticatorData: a.response.authenticatorData,
      signature: a.response.signature,
      userHandle: a.response.userHandle ?? null,
    },
  });
}

const normalCode = (code: string) => code.replace(/[\s-]/g, '').toUpperCase();
