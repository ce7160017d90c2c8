import { expect } from 'chai';
import {
  createDecipheriv,
  createHash,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
} from 'node:crypto';
import { bytesToCrockford, initAuthCreds, proto, type BinaryNode } from '@whiskeysockets/baileys';
import { createLogger } from '@mgw/common';
import type { PasskeyAssertion, PasskeyFailure } from '@mgw/contracts';
import { PasskeyInputError, PasskeyStepError } from '../../src/index.js';
import { PasskeyLink, type PasskeyState } from '../../src/passkey-link.js';

/**
 * The companion's side of a passkey-gated link (passkey-link.ts) against a scripted primary that
 * derives everything on its own, as WhatsApp's server and phone would (whatsmeow b572e5bc,
 * whatsapp-rust 3fb4729e): the code both show, the key of the pairing request, the new ADV secret.
 * The simulator's test (libs/messenger-sim) runs the same through the real Baileys socket.
 */
const challenge = randomBytes(32).toString('base64url');
const options = (timeout = 600_000) => ({
  challenge,
  timeout,
  rpId: 'whatsapp.com',
  allowCredentials: [{ id: 'Y3JlZA', type: 'public-key' }],
  userVerification: 'required',
});
const child = (node: BinaryNode, tag: string) => (node.content as BinaryNode[]).find((c) => c.tag === tag)!;
const bytes = (node: BinaryNode) => Buffer.from(node.content as Uint8Array);

function assertion(forChallenge = challenge): PasskeyAssertion {
  const clientData = JSON.stringify({
    type: 'webauthn.get',
    challenge: forChallenge,
    origin: 'https://web.whatsapp.com',
  });
  return {
    id: 'Y3JlZA',
    rawId: 'Y3JlZA',
    type: 'public-key',
    response: {
      clientDataJSON: Buffer.from(clientData).toString('base64url'),
      authenticatorData: randomBytes(37).toString('base64url'),
      signature: randomBytes(70).toString('base64url'),
      userHandle: null,
    },
  };
}

/** The primary's half, answering the companion's iqs as the server would. */
class Primary {
  readonly sent: BinaryNode[] = [];
  readonly keys = generateKeyPairSync('x25519');
  readonly nonce = randomBytes(32);
  ref = 'ref-' + randomBytes(4).toString('hex');
  refuseAssertion = false;
  prologue?: { identity: proto.CompanionEphemeralIdentity; payload: Buffer; commitment: Buffer };
  companionNonce?: Buffer;
  pairingRequest?: proto.PairingRequest;

  get publicRaw(): Buffer {
    return Buffer.from(this.keys.publicKey.export({ format: 'jwk' }).x!, 'base64url');
  }

  async query(node: BinaryNode): Promise<BinaryNode> {
    this.sent.push(node);
    const [c] = node.content as BinaryNode[];
    const result = (content?: BinaryNode[]): BinaryNode => ({
      tag: 'iq',
      attrs: { type: 'result' },
      content,
    });
    switch (c!.tag) {
      case 'passkey_request_options':
        return result([
          { tag: 'passkey_request_options', attrs: {}, content: Buffer.from(JSON.stringify(options())) },
        ]);
      case 'ref':
        return result([{ tag: 'ref', attrs: {}, content: Buffer.from(this.ref) }]);
      case 'passkey_prologue': {
        if (this.refuseAssertion) throw Object.assign(new Error('passkey-rejected'), { data: 401 });
        const payload = bytes(child(c!, 'prologue_payload'));
        const decoded = proto.ProloguePayload.decode(payload);
        this.prologue = {
          identity: proto.CompanionEphemeralIdentity.decode(decoded.companionEphemeralIdentity!),
          payload: Buffer.from(decoded.companionEphemeralIdentity!),
          commitment: Buffer.from(decoded.commitment!.hash!),
        };
        return result();
      }
      case 'companion_nonce':
        this.companionNonce = bytes(c!);
        return result();
      case 'encrypted_pairing_request': {
        const wrapped = proto.EncryptedPairingRequest.decode(bytes(c!));
        const data = Buffer.from(wrapped.encryptedPayload!);
        const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey(), Buffer.from(wrapped.iv!));
        decipher.setAuthTag(data.subarray(data.length - 16));
        this.pairingRequest = proto.PairingRequest.decode(
          Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]),
        );
        return result();
      }
      default:
        throw new Error(`unexpected iq ${c!.tag}`);
    }
  }

  continuation(): BinaryNode {
    const identity = proto.PrimaryEphemeralIdentity.encode({
      publicKey: this.publicRaw,
      nonce: this.nonce,
    }).finish();
    return {
      tag: 'notification',
      attrs: { type: 'crsc_continuation', from: 's.whatsapp.net' },
      content: [{ tag: 'primary_ephemeral_identity', attrs: {}, content: identity }],
    };
  }

  /** The code the phone shows: from what the companion revealed, on the primary's side. */
  code(): string {
    const companionPub = Buffer.from(this.prologue!.identity.publicKey!);
    const h = createHash('sha256').update(this.companionNonce!).update(this.publicRaw).digest();
    const out = Buffer.alloc(5);
    for (let i = 0; i < 5; i++) out[i] = this.nonce[i]! ^ h[i]!;
    expect(companionPub).to.have.length(32);
    const c = bytesToCrockford(out);
    return `${c.slice(0, 4)}-${c.slice(4)}`;
  }

  encryptionKey(): Buffer {
    const companionPub = createPublicKey({
      key: {
        kty: 'OKP',
        crv: 'X25519',
        x: Buffer.from(this.prologue!.identity.publicKey!).toString('base64url'),
      },
      format: 'jwk',
    });
    const shared = diffieHellman({ privateKey: this.keys.privateKey, publicKey: companionPub });
    const salt = `Companion Pairing ${this.prologue!.identity.deviceType} with ref ${this.prologue!.identity.ref}`;
    return Buffer.from(
      hkdfSync('sha256', shared, Buffer.from(salt), 'Pairing Information Encryption Key', 32),
    );
  }
}

describe('messenger: a passkey-gated link, the companion side (PasskeyLink)', () => {
  const logger = createLogger({ service: 'test', level: 'silent' });

  function start(primary: Primary, continuationTimeoutMs = 5000) {
    const creds = initAuthCreds();
    const states: PasskeyState[] = [];
    const failures: PasskeyFailure[] = [];
    let saved = 0;
    const link = new PasskeyLink({
      query: (n) => primary.query(n),
      creds,
      saveCreds: () => saved++,
      platformType: 1,
      continuationTimeoutMs,
      logger,
    });
    link.on('state', (s) => states.push(s));
    link.on('failed', (r) => failures.push(r));
    return { link, creds, states, failures, saved: () => saved };
  }
  const request = (withOptions = true, timeout?: number): BinaryNode => ({
    tag: 'notification',
    attrs: { type: 'passkey_prologue_request', from: 's.whatsapp.net' },
    content: withOptions
      ? [
          {
            tag: 'passkey_request_options',
            attrs: {},
            content: Buffer.from(JSON.stringify(options(timeout))),
          },
        ]
      : [],
  });

  it('When WhatsApp asks for a passkey and the operator hands an assertion and confirms the code, then both sides derive the same code and key, and the pairing request carries our keys and a new ADV secret', async () => {
    const primary = new Primary();
    const { link, creds, states, failures, saved } = start(primary);
    const oldSecret = creds.advSecretKey;
    await link.onRequest(request());
    expect(states.at(-1)).to.include({ step: 'assertion' });
    expect(states.at(-1)!.options.challenge).to.equal(challenge);
    expect(await link.submitAssertion(assertion())).to.equal(true);
    const prologue = primary.sent.find((n) => (n.content as BinaryNode[])[0]!.tag === 'passkey_prologue')!;
    const parts = (prologue.content as BinaryNode[])[0]!.content as BinaryNode[];
    expect(parts.map((p) => p.tag)).to.deep.equal([
      'credential_id',
      'webauthn_assertion',
      'prologue_payload',
    ]);
    expect(JSON.parse(bytes(parts[1]!).toString())).to.have.keys('id', 'rawId', 'type', 'response');
    expect(primary.prologue!.identity.ref).to.equal(primary.ref);
    expect(states.at(-1)!.step).to.equal('verifying');

    await link.onContinuation(primary.continuation());
    // The commitment opens with the nonce revealed now.
    expect(
      createHash('sha256').update(primary.prologue!.payload).update(primary.companionNonce!).digest(),
    ).to.deep.equal(primary.prologue!.commitment);
    expect(states.at(-1)).to.include({ step: 'confirm_code', code: primary.code() });
    await link.confirm(primary.code().toLowerCase().replace('-', ''));
    expect(states.at(-1)!.step).to.equal('finishing');
    const req = primary.pairingRequest!;
    expect(Buffer.from(req.companionPublicKey!)).to.deep.equal(Buffer.from(creds.noiseKey.public));
    expect(Buffer.from(req.companionIdentityKey!)).to.deep.equal(Buffer.from(creds.signedIdentityKey.public));
    expect(Buffer.from(req.advSecret!).toString('base64'))
      .to.equal(creds.advSecretKey)
      .and.not.equal(oldSecret);
    expect(saved()).to.equal(1);
    expect(failures).to.deep.equal([]);
    link.close();
  });

  it('When the notification leaves the options out, then they are asked for', async () => {
    const primary = new Primary();
    const { link, states } = start(primary);
    await link.onRequest(request(false));
    expect((primary.sent[0]!.content as BinaryNode[])[0]!.tag).to.equal('passkey_request_options');
    expect(states.at(-1)!.step).to.equal('assertion');
    link.close();
  });

  it('When the options are left out and asking for them fails, then the attempt ends passkey_options_unavailable', async () => {
    const primary = new Primary();
    primary.query = () => Promise.reject(new Error('item-not-found'));
    const { link, failures } = start(primary);
    await link.onRequest(request(false));
    expect(failures).to.deep.equal(['passkey_options_unavailable']);
  });

  it('When the assertion answers another challenge, or comes at the wrong step, then it is refused here and nothing goes to WhatsApp', async () => {
    const primary = new Primary();
    const { link } = start(primary);
    await link.onRequest(request());
    let err = await link
      .submitAssertion(assertion(randomBytes(32).toString('base64url')))
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(PasskeyInputError);
    err = await link.confirm().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(PasskeyStepError);
    expect(primary.sent).to.deep.equal([]);
    link.close();
  });

  it('When WhatsApp refuses the assertion, when its answer never comes, or when the request expires, then the attempt ends with that reason', async () => {
    const refusing = new Primary();
    refusing.refuseAssertion = true;
    const a = start(refusing);
    await a.link.onRequest(request());
    expect(await a.link.submitAssertion(assertion())).to.equal(false);
    expect(a.failures).to.deep.equal(['passkey_rejected']);

    const silent = start(new Primary(), 100);
    await silent.link.onRequest(request());
    await silent.link.submitAssertion(assertion());
    await new Promise((r) => setTimeout(r, 300));
    expect(silent.failures).to.deep.equal(['passkey_no_continuation']);

    const late = start(new Primary());
    await late.link.onRequest(request(true, 100));
    await new Promise((r) => setTimeout(r, 300));
    expect(late.failures).to.deep.equal(['passkey_expired']);
    // Ended: a late assertion is refused, not sent.
    expect(await late.link.submitAssertion(assertion()).catch((e: unknown) => e)).to.be.instanceOf(
      PasskeyStepError,
    );
  });

  it('When the continuation arrives before the answer to the prologue is read (a loaded host), then the code stays and no continuation timeout ends the link', async () => {
    const primary = new Primary();
    const answer = primary.query.bind(primary);
    const { link, states, failures } = start(primary, 100);
    let continued: Promise<void> | undefined;
    // The prologue's answer is read only after the continuation was handled.
    primary.query = async (node) => {
      const result = await answer(node);
      if ((node.content as BinaryNode[])[0]!.tag === 'passkey_prologue')
        await (continued = link.onContinuation(primary.continuation()));
      return result;
    };
    await link.onRequest(request());
    expect(await link.submitAssertion(assertion())).to.equal(true);
    expect(continued).to.not.equal(undefined);
    expect(states.at(-1)).to.include({ step: 'confirm_code', code: primary.code() });
    await new Promise((r) => setTimeout(r, 300));
    expect(failures).to.deep.equal([]);
    expect(states.at(-1)!.step).to.equal('confirm_code');
    link.close();
  });

  it('When a wrong code is confirmed, then it is refused and the link still waits for the right one', async () => {
    const primary = new Primary();
    const { link, states } = start(primary);
    await link.onRequest(request());
    await link.submitAssertion(assertion());
    await link.onContinuation(primary.continuation());
    const wrong = primary.code() === 'AAAA-AAAA' ? 'BBBB-BBBB' : 'AAAA-AAAA';
    expect(await link.confirm(wrong).catch((e: unknown) => e)).to.be.instanceOf(PasskeyInputError);
    expect(states.at(-1)!.step).to.equal('confirm_code');
    expect(primary.pairingRequest).to.equal(undefined);
    link.close();
  });
});
