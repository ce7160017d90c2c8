import { randomBytes } from 'node:crypto';
import {
  aesDecryptCTR,
  aesDecryptGCM,
  aesEncryptCTR,
  Curve,
  derivePairingCodeKey,
  getBinaryNodeChild,
  hkdf,
  jidDecode,
  S_WHATSAPP_NET,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import { bytesOf, iqError, iqResult, newStanzaId, node, unixSeconds } from './stanza.js';

/** A companion that asked for pairing-code linking (stage companion_hello) and waits for the phone. */
export interface CodeRequest {
  conn: ClientConnection;
  phone: string;
  ref: string;
  wrappedCompanionEphemeral: Buffer;
  finish?: (node: BinaryNode) => void;
  /** The phone took the code for a passkey-gated link: no companion_finish is expected. */
  passkey?: boolean;
}

export function parseCompanionHello(conn: ClientConnection, iq: BinaryNode, reg: BinaryNode): CodeRequest {
  const jid = reg.attrs.jid;
  const wrapped = bytesOf(getBinaryNodeChild(reg, 'link_code_pairing_wrapped_companion_ephemeral_pub'));
  if (!jid || !wrapped || wrapped.length < 80) throw new Error('malformed companion_hello');
  const ref = randomBytes(16).toString('hex');
  conn.send(
    iqResult(iq, [
      node('link_code_companion_reg', {}, [node('link_code_pairing_ref', {}, Buffer.from(ref))]),
    ]),
  );
  return { conn, phone: jidDecode(jid)?.user ?? '', ref, wrappedCompanionEphemeral: wrapped };
}

/**
 * The phone's side of pairing-code linking: unwrap the companion's ephemeral key with the typed
 * code, answer primary_hello, then derive the same adv secret the client derives from
 * companion_finish. A wrong code shows up as a GCM failure on the key bundle.
 */
export async function runCodeExchange(
  request: CodeRequest,
  code: string,
  primaryIdentity: { public: Buffer; private: Buffer },
  options: { withoutWrappedKey?: boolean; from?: string } = {},
): Promise<Buffer> {
  const w = request.wrappedCompanionEphemeral;
  const companionKey = await derivePairingCodeKey(code, w.subarray(0, 32));
  const companionEphemeral = aesDecryptCTR(w.subarray(48, 80), companionKey, w.subarray(32, 48));

  const primaryEphemeral = Curve.generateKeyPair();
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const primaryKey = await derivePairingCodeKey(code, salt);
  const wrappedPrimary = Buffer.concat([salt, iv, aesEncryptCTR(primaryEphemeral.public, primaryKey, iv)]);

  const finished = new Promise<BinaryNode>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('companion never sent companion_finish')), 15_000);
    request.finish = (n) => {
      clearTimeout(timer);
      resolve(n);
    };
  });
  // the fault `codeWithoutWrappedKey` (passkey.ts): the companion cannot answer companion_finish
  sendPrimaryHello(
    request,
    primaryIdentity.public,
    options.withoutWrappedKey ? undefined : wrappedPrimary,
    options.from,
  );
  const finishIq = await finished;
  const reg = getBinaryNodeChild(finishIq, 'link_code_companion_reg');
  const bundle = bytesOf(getBinaryNodeChild(reg, 'link_code_pairing_wrapped_key_bundle'));
  const companionIdentity = bytesOf(getBinaryNodeChild(reg, 'companion_identity_public'));
  if (!bundle || !companionIdentity) {
    request.conn.send(iqError(finishIq, 400, 'bad-request'));
    throw new Error('malformed companion_finish');
  }
  const companionShared = Curve.sharedKey(primaryEphemeral.private, companionEphemeral);
  const bundleKey = Buffer.from(
    hkdf(companionShared, 32, {
      salt: bundle.subarray(0, 32),
      info: 'link_code_pairing_key_bundle_encryption_key',
    }),
  );
  let plain: Buffer;
  try {
    plain = aesDecryptGCM(bundle.subarray(44), bundleKey, bundle.subarray(32, 44), Buffer.alloc(0));
  } catch {
    request.conn.send(iqError(finishIq, 401, 'not-authorized'));
    throw new Error('pairing code does not match');
  }
  request.conn.send(iqResult(finishIq));
  const random = plain.subarray(64, 96);
  const identityShared = Curve.sharedKey(primaryIdentity.private, companionIdentity);
  return Buffer.from(
    hkdf(Buffer.concat([companionShared, identityShared, random]), 32, { info: 'adv_secret' }),
  );
}

/**
 * The phone's `primary_hello`. Without `wrappedPrimary` it is what a passkey-gated account's phone
 * sends (Baileys #2694, whatsmeow #1188/#1233): the companion cannot finish the code exchange and
 * a `passkey_prologue_request` follows (passkey.ts).
 */
export function sendPrimaryHello(
  request: CodeRequest,
  primaryIdentityPub: Buffer,
  wrappedPrimary?: Buffer,
  /** The server's address as `from` names it (forms.ts: with or without its `@`). */
  from: string = S_WHATSAPP_NET,
): void {
  request.conn.send(
    node('notification', { from, type: 'link_code_companion_reg', id: newStanzaId(), t: unixSeconds() }, [
      node('link_code_companion_reg', { stage: 'primary_hello' }, [
        node('link_code_pairing_ref', {}, Buffer.from(request.ref)),
        node('primary_identity_pub', {}, primaryIdentityPub),
        ...(wrappedPrimary
          ? [node('link_code_pairing_wrapped_primary_ephemeral_pub', {}, wrappedPrimary)]
          : []),
      ]),
    ]),
  );
}
