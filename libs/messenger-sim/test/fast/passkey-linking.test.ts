import { expect } from 'chai';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { getBinaryNodeChild, hmacSign, jidDecode, proto, type BinaryNode } from '@whiskeysockets/baileys';
import type { LinkResult, SimulatorHandle } from '../../src/index.js';
import {
  linkTestDevice,
  simControl,
  sleep,
  startTestSimulator,
  TestDevice,
  until,
  waitFor,
} from '@mgw/testing';
import { PasskeyCompanion, SoftwareAuthenticator, type IqRefusal } from '../support/passkey-companion.js';

type Json = Record<string, unknown>;

const REJECTED: IqRefusal = { code: 401, text: 'passkey-rejected' };

describe('messenger-sim: passkey-gated linking', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let ctl: ReturnType<typeof simControl>;
  const devices: TestDevice[] = [];
  let nextPhone = 15550090001;

  before(async () => {
    sim = await startTestSimulator();
    ctl = simControl(sim);
  });

  after(async () => {
    for (const device of devices) await device.end();
    await sim.close();
  });

  const passkeyOf = async (phone: string) => (await ctl('GET', `/accounts/${phone}/passkey`)).body;
  const linkOf = async (phone: string) => (await passkeyOf(phone)).link as Json;

  /** An account with `gate` and a registered software authenticator (its key as SPKI, or a JWK). */
  async function gatedAccount(gate: string, { jwk = false, faults }: { jwk?: boolean; faults?: Json } = {}) {
    const phone = String(nextPhone++);
    const authenticator = new SoftwareAuthenticator();
    const registered = await ctl('POST', `/accounts/${phone}/passkey/authenticator`, {
      credentialId: authenticator.credentialId.toString('base64url'),
      publicKey: jwk ? authenticator.jwk : authenticator.spki,
    });
    expect(registered.status).to.equal(200);
    expect((await ctl('POST', `/accounts/${phone}/passkey/gate`, { gate })).status).to.equal(200);
    if (faults) expect((await ctl('POST', `/accounts/${phone}/passkey/faults`, faults)).status).to.equal(200);
    return { phone, authenticator };
  }

  /** A fresh device showing its QR, with the companion's passkey side listening on its socket. */
  async function waitingDevice() {
    const device = new TestDevice(sim.info);
    devices.push(device);
    const companion = new PasskeyCompanion(device.connect());
    const qr = await device.nextQr();
    return { device, companion, qr, qrAdvSecret: Buffer.from(device.auth.creds.advSecretKey, 'base64') };
  }

  /** The phone scans a gated account's QR: the control API answers once the passkey is asked for. */
  async function scanGated(gate = 'qr', options: { jwk?: boolean; faults?: Json } = {}) {
    const account = await gatedAccount(gate, options);
    const waiting = await waitingDevice();
    const scan = await ctl('POST', '/phone/link', { qr: waiting.qr, phone: account.phone, name: 'Gated' });
    expect(scan.status).to.equal(200);
    return { ...account, ...waiting, scan };
  }

  /** The companion's assertion and prologue, up to the continuation; answers the challenge it signed. */
  async function passAssertion(
    companion: PasskeyCompanion,
    authenticator: SoftwareAuthenticator,
    proof?: (payload: Buffer) => Buffer,
  ) {
    const options = (await companion.requestOptions()) ?? ((await companion.fetchOptions()) as Json);
    const prologue = companion.newPrologue(await companion.fetchRef());
    const answer = await companion.sendPrologue(
      authenticator.assert(options.challenge as string),
      prologue,
      proof?.(prologue.payload),
    );
    expect(answer).to.not.have.property('code');
    return options;
  }

  /** pair-success's device identity verifies under `advSecret` (Baileys' own check). */
  const hmacVerifies = (pairSuccess: BinaryNode, advSecret: Buffer) => {
    const identity = getBinaryNodeChild(getBinaryNodeChild(pairSuccess, 'pair-success'), 'device-identity');
    const { details, hmac } = proto.ADVSignedDeviceIdentityHMAC.decode(identity!.content as Uint8Array);
    return Buffer.from(hmacSign(details!, advSecret)).equals(Buffer.from(hmac!));
  };

  describe('control API', () => {
    it('When an account was never gated, then its passkey view says gate none, no authenticator and no link', async () => {
      const view = await ctl('GET', '/accounts/15550099999/passkey');

      expect(view.status).to.equal(200);
      expect(view.body).to.deep.equal({
        phone: '15550099999',
        gate: 'none',
        authenticator: null,
        faults: {
          rejectAssertion: false,
          withholdContinuation: false,
          omitOptions: false,
          codeWithoutWrappedKey: false,
          timeoutMs: null,
        },
        link: null,
      });
    });

    it('When a gate, an authenticator (SPKI or JWK) and faults are set, then the view shows them; DELETE clears', async () => {
      const authenticator = new SoftwareAuthenticator();
      const phone = '15550099998';

      await ctl('POST', `/accounts/${phone}/passkey/gate`, { gate: 'both' });
      const spki = await ctl('POST', `/accounts/${phone}/passkey/authenticator`, {
        credentialId: authenticator.credentialId.toString('base64url'),
        publicKey: authenticator.spki,
      });
      const jwk = await ctl('POST', `/accounts/${phone}/passkey/authenticator`, {
        credentialId: authenticator.credentialId.toString('base64'),
        publicKey: authenticator.jwk,
      });
      const faults = await ctl('POST', `/accounts/${phone}/passkey/faults`, {
        omitOptions: true,
        timeoutMs: 5000,
      });
      const ungated = await ctl('DELETE', `/accounts/${phone}/passkey/gate`);
      const forgotten = await ctl('DELETE', `/accounts/${phone}/passkey/authenticator`);
      await ctl('POST', `/accounts/${phone}/passkey/faults`, { omitOptions: true });
      const cleared = await ctl('DELETE', '/faults');

      expect(spki.body.gate).to.equal('both');
      expect(spki.body.authenticator).to.deep.equal({
        credentialId: authenticator.credentialId.toString('base64url'),
      });
      expect(jwk.body.authenticator).to.deep.equal(spki.body.authenticator);
      expect(faults.body.faults).to.include({ omitOptions: true, rejectAssertion: false, timeoutMs: 5000 });
      expect(ungated.body.gate).to.equal('none');
      expect(forgotten.body.authenticator).to.equal(null);
      expect(cleared.status).to.equal(200);
      expect((await passkeyOf(phone)).faults).to.include({ omitOptions: false, timeoutMs: null });
    });

    it('When a body is wrong, then the call is refused with 400 and says why', async () => {
      const phone = '15550099997';
      const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
      const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey;
      const key = (k: typeof rsa) => k.export({ format: 'der', type: 'spki' }).toString('base64');
      const calls = [
        ctl('POST', `/accounts/${phone}/passkey/gate`, { gate: 'always' }),
        ctl('POST', `/accounts/${phone}/passkey/gate`, {}),
        ctl('POST', `/accounts/${phone}/passkey/authenticator`, {
          publicKey: new SoftwareAuthenticator().spki,
        }),
        ctl('POST', `/accounts/${phone}/passkey/authenticator`, {
          credentialId: 'AQID',
          publicKey: 'bm90IGEga2V5',
        }),
        ctl('POST', `/accounts/${phone}/passkey/authenticator`, {
          credentialId: 'AQID',
          publicKey: key(rsa),
        }),
        ctl('POST', `/accounts/${phone}/passkey/authenticator`, {
          credentialId: 'AQID',
          publicKey: key(p384),
        }),
        ctl('POST', `/accounts/${phone}/passkey/faults`, { rejectAssertion: 'yes' }),
        ctl('POST', `/accounts/${phone}/passkey/faults`, { timeoutMs: 0 }),
        ctl('POST', `/accounts/${phone}/passkey/confirm`, { code: 12345678 }),
        ctl('POST', '/accounts/+/passkey/gate', { gate: 'qr' }),
      ];
      const answers = await Promise.all(calls);

      expect(answers.map((a) => a.status)).to.deep.equal(Array(answers.length).fill(400));
      expect(answers.map((a) => a.body.error)).to.deep.equal([
        'gate must be one of none, qr, code, both',
        'gate must be one of none, qr, code, both',
        'credentialId is required (the credential id, base64url)',
        'publicKey must be an SPKI DER key in base64 or a JWK',
        'publicKey must be an ECDSA P-256 key',
        'publicKey must be an ECDSA P-256 key',
        'rejectAssertion must be true or false',
        'timeoutMs must be a number of ms from 1 to 2147483647, or null (600 s)',
        'code must be a string',
        'phone must have digits',
      ]);
    });

    it('When the phone is asked to confirm a code while no link waits, then it answers 409', async () => {
      const confirm = await ctl('POST', '/accounts/15550099996/passkey/confirm', {});

      expect(confirm.status).to.equal(409);
      expect(confirm.body.error).to.equal('15550099996 has no pending passkey link');
    });

    it('When a gated account has no registered authenticator, then the scan is refused with 409 and nothing is sent', async () => {
      const phone = String(nextPhone++);
      await ctl('POST', `/accounts/${phone}/passkey/gate`, { gate: 'qr' });
      const { companion, qr } = await waitingDevice();

      const scan = await ctl('POST', '/phone/link', { qr, phone });
      await sleep(200);

      expect(scan.status).to.equal(409);
      expect(scan.body.error).to.match(/is passkey-gated but has no registered authenticator/);
      expect(companion.requests).to.have.length(0);
      expect(companion.pairSuccesses).to.have.length(0);
    });
  });

  it('When the phone scans a QR-gated account, then the passkey steps and the phone’s confirmation link the device under the new ADV secret, and it logs in', async () => {
    const { phone, authenticator, device, companion, scan, qrAdvSecret } = await scanGated('qr');

    // 1. the phone asks for the passkey instead of pair-success
    expect(scan.body).to.deep.include({ phone });
    expect(scan.body.passkey).to.include({
      flow: 'qr',
      step: 'awaiting-assertion',
      code: null,
      rejections: 0,
    });
    const options = (await companion.requestOptions())!;
    expect(jidDecode(companion.requests[0]!.attrs.from)).to.include({ user: '', server: 's.whatsapp.net' });
    expect(Buffer.from(options.challenge as string, 'base64url')).to.have.length(32);
    expect(options.challenge).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(options).to.deep.equal({
      challenge: options.challenge,
      timeout: 600_000,
      rpId: 'whatsapp.com',
      allowCredentials: [
        {
          id: authenticator.credentialId.toString('base64url'),
          type: 'public-key',
          transports: ['internal', 'hybrid'],
        },
      ],
      userVerification: 'required',
    });
    expect(await companion.fetchOptions()).to.deep.equal(options);

    // 2. assertion + prologue → crsc_continuation
    await passAssertion(companion, authenticator);
    const primary = await companion.primaryIdentity();
    expect(primary.publicKey).to.have.length(32);
    expect(primary.nonce).to.have.length(32);
    expect(await linkOf(phone)).to.include({
      step: 'awaiting-nonce',
      continuationSent: true,
      handoffProof: 'absent',
    });

    // 3. the nonce opens the commitment: both sides show the same code
    expect(await companion.revealNonce()).to.not.have.property('code');
    expect(companion.code).to.match(/^[1-9A-HJ-NP-TV-Z]{4}-[1-9A-HJ-NP-TV-Z]{4}$/);
    expect(await linkOf(phone)).to.include({ step: 'awaiting-pairing-request', code: companion.code });

    // 4. the encrypted pairing request with a new ADV secret; nothing more until the phone confirms
    const newAdvSecret = randomBytes(32);
    device.auth.creds.advSecretKey = newAdvSecret.toString('base64');
    expect(await companion.sendPairingRequest(newAdvSecret)).to.not.have.property('code');
    await sleep(300);
    expect(await linkOf(phone)).to.include({ step: 'awaiting-confirmation', confirmed: false });
    expect(companion.pairSuccesses).to.have.length(0);
    expect(sim.devices(phone)).to.deep.equal([]);

    // 5. the phone confirms the code it shows: pair-success, 515, login
    const wrong = await ctl('POST', `/accounts/${phone}/passkey/confirm`, { code: 'AAAA-AAAA' });
    const opened = device.waitForOpen(20_000);
    const confirmed = await ctl('POST', `/accounts/${phone}/passkey/confirm`, {
      code: companion.code!.toLowerCase(),
    });
    await opened;

    expect(wrong.status).to.equal(400);
    expect(wrong.body.error).to.equal('code does not match the code the phone shows');
    expect(confirmed.status).to.equal(200);
    expect((confirmed.body.link as Json).confirmed).to.equal(true);
    expect(companion.pairSuccesses).to.have.length(1);
    expect(hmacVerifies(companion.pairSuccesses[0]!, newAdvSecret)).to.equal(true);
    expect(hmacVerifies(companion.pairSuccesses[0]!, qrAdvSecret)).to.equal(false);
    expect(device.closes.map((c) => c.statusCode)).to.deep.equal([515]);
    const link = await linkOf(phone);
    expect(link).to.include({ step: 'linked', deviceId: 1, jid: `${phone}:1@s.whatsapp.net` });
    expect(device.auth.creds.me?.id).to.equal(link.jid);
    expect(sim.devices(phone).map((d) => d.connected)).to.deep.equal([true]);

    // the linked device logs in again with its saved credentials
    await device.end();
    const reopened = device.waitForOpen(15_000);
    device.connect();
    await reopened;
    expect(sim.devices(phone).map((d) => d.connected)).to.deep.equal([true]);
  });

  it('When the phone takes a code-gated account’s pairing code, then primary_hello lacks the wrapped key and the phone’s early confirmation links after the pairing request', async () => {
    const { phone, authenticator } = await gatedAccount('code', { jwk: true });
    const { device, companion, qrAdvSecret } = await waitingDevice();
    const code = await device.sock!.requestPairingCode(phone);

    const entered = await ctl('POST', '/phone/link', { pairingCode: code, phone, name: 'Code Gated' });
    const hello = await until(() => companion.primaryHellos[0], 10_000, 'primary_hello');
    const reg = getBinaryNodeChild(hello, 'link_code_companion_reg')!;
    // the companion holds an ADV secret the server never saw: its proof cannot verify
    await passAssertion(companion, authenticator, (payload) =>
      PasskeyCompanion.handoffProof(qrAdvSecret, payload),
    );
    await companion.revealNonce();
    const early = await ctl('POST', `/accounts/${phone}/passkey/confirm`, { code: companion.code });
    const newAdvSecret = randomBytes(32);
    device.auth.creds.advSecretKey = newAdvSecret.toString('base64');
    const opened = device.waitForOpen(20_000);
    await companion.sendPairingRequest(newAdvSecret);
    await opened;

    expect(entered.status).to.equal(200);
    expect(entered.body.passkey).to.include({ flow: 'code', step: 'awaiting-assertion' });
    expect(reg.attrs.stage).to.equal('primary_hello');
    expect(getBinaryNodeChild(reg, 'link_code_pairing_ref')).to.not.equal(undefined);
    expect(getBinaryNodeChild(reg, 'primary_identity_pub')).to.not.equal(undefined);
    expect(getBinaryNodeChild(reg, 'link_code_pairing_wrapped_primary_ephemeral_pub')).to.equal(undefined);
    expect(companion.requests).to.have.length(1);
    expect(early.body.link as Json).to.include({ step: 'awaiting-pairing-request', confirmed: true });
    expect(await linkOf(phone)).to.include({ step: 'linked', handoffProof: 'refused', proofAccepted: false });
    expect(hmacVerifies(companion.pairSuccesses[0]!, newAdvSecret)).to.equal(true);
    expect(device.auth.creds.me?.id).to.equal(`${phone}:1@s.whatsapp.net`);
    expect(sim.devices(phone)).to.have.length(1);
  });

  it('When the companion proves it held the QR’s ADV secret, then the proof is accepted and pair-success comes without the phone’s confirmation', async () => {
    const { phone, authenticator, device, companion, qrAdvSecret } = await scanGated('both');

    await passAssertion(companion, authenticator, (payload) =>
      PasskeyCompanion.handoffProof(qrAdvSecret, payload),
    );
    const accepted = await linkOf(phone);
    await companion.revealNonce();
    const newAdvSecret = randomBytes(32);
    device.auth.creds.advSecretKey = newAdvSecret.toString('base64');
    const opened = device.waitForOpen(20_000);
    await companion.sendPairingRequest(newAdvSecret);
    await opened;

    expect(accepted).to.include({ handoffProof: 'accepted', proofAccepted: true });
    expect(await linkOf(phone)).to.include({ step: 'linked', confirmed: false, proofAccepted: true });
    expect(hmacVerifies(companion.pairSuccesses[0]!, newAdvSecret)).to.equal(true);
  });

  it('When the proof is not HMACed with the QR’s ADV secret, then it is refused and the phone must confirm', async () => {
    const { phone, authenticator, companion } = await scanGated('qr');

    await passAssertion(companion, authenticator, (payload) =>
      PasskeyCompanion.handoffProof(randomBytes(32), payload),
    );
    await companion.revealNonce();
    await companion.sendPairingRequest(randomBytes(32));
    await sleep(300);

    expect(await linkOf(phone)).to.include({ handoffProof: 'refused', step: 'awaiting-confirmation' });
    expect(companion.pairSuccesses).to.have.length(0);
  });

  describe('each check of the companion’s steps', () => {
    let phone: string;
    let authenticator: SoftwareAuthenticator;
    let companion: PasskeyCompanion;
    let challenge: string;
    let ref: string;

    before(async () => {
      ({ phone, authenticator, companion } = await scanGated('qr'));
      challenge = (await companion.requestOptions())!.challenge as string;
      ref = await companion.fetchRef();
    });

    /** A prologue with this assertion tweak (and a payload for `ref`) is refused for `reason`. */
    async function refused(
      assertion: ReturnType<SoftwareAuthenticator['assert']>,
      reason: string,
      prologue = companion.newPrologue(ref),
    ) {
      const count = (await linkOf(phone)).rejections as number;
      const answer = await companion.sendPrologue(assertion, prologue);
      const link = await linkOf(phone);
      expect(answer).to.deep.equal(REJECTED);
      expect(link).to.include({ step: 'awaiting-assertion', lastRejection: reason, rejections: count + 1 });
      expect(companion.continuations).to.have.length(0);
    }

    it('When the credential id is not the registered one, then the prologue is refused (credential)', async () => {
      await refused(authenticator.assert(challenge, { credentialId: randomBytes(16) }), 'credential');
    });

    it('When the assertion answers another challenge, then it is refused (challenge)', async () => {
      await refused(
        authenticator.assert(challenge, { challenge: randomBytes(32).toString('base64url') }),
        'challenge',
      );
    });

    it('When clientDataJSON is not a webauthn.get, then it is refused (client-data-type)', async () => {
      await refused(authenticator.assert(challenge, { type: 'webauthn.create' }), 'client-data-type');
    });

    it('When the origin is not https://web.whatsapp.com, then it is refused (origin)', async () => {
      await refused(authenticator.assert(challenge, { origin: 'https://evil.example' }), 'origin');
    });

    it('When authenticatorData hashes another rpId, then it is refused (rp-id-hash)', async () => {
      await refused(authenticator.assert(challenge, { rpId: 'web.whatsapp.com' }), 'rp-id-hash');
    });

    it('When the user-verified flag is missing, then it is refused (user-verification)', async () => {
      await refused(authenticator.assert(challenge, { flags: 0x01 }), 'user-verification');
    });

    it('When the user-present flag is missing, then it is refused (user-presence)', async () => {
      await refused(authenticator.assert(challenge, { flags: 0x04 }), 'user-presence');
    });

    it('When the signature is corrupted or made by another key, then it is refused (signature)', async () => {
      const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      await refused(authenticator.assert(challenge, { corruptSignature: true }), 'signature');
      await refused(authenticator.assert(challenge, { signWith: other }), 'signature');
    });

    it('When the ephemeral identity names a ref the server never issued, then it is refused (ref)', async () => {
      await refused(authenticator.assert(challenge), 'ref', companion.newPrologue('2@never-issued'));
    });

    it('When the prologue carries no commitment, then it is refused (commitment)', async () => {
      await refused(
        authenticator.assert(challenge),
        'commitment',
        companion.newPrologue(ref, { commitment: false }),
      );
    });

    it('When a valid assertion follows the refusals, then the still pending request takes it', async () => {
      const answer = await companion.sendPrologue(
        authenticator.assert(challenge),
        companion.newPrologue(ref),
      );
      await companion.primaryIdentity();

      expect(answer).to.not.have.property('code');
      expect(await linkOf(phone)).to.include({ step: 'awaiting-nonce', rejections: 11 });
      expect(await companion.fetchOptions()).to.deep.equal({ code: 404, text: 'item-not-found' });
    });

    it('When the nonce does not open the commitment, then it is refused (commitment-mismatch); the right one is taken', async () => {
      const wrong = await companion.revealNonce(randomBytes(32));
      const right = await companion.revealNonce();

      expect(wrong).to.deep.equal({ code: 401, text: 'commitment-mismatch' });
      expect(right).to.not.have.property('code');
      expect(await linkOf(phone)).to.include({ step: 'awaiting-pairing-request', rejections: 12 });
    });

    it('When the pairing request does not decrypt or names another Noise key, then it is refused; a good one is taken', async () => {
      const advSecret = randomBytes(32);
      const garbage = await companion.sendPairingRequest(advSecret, { garbage: true });
      const garbageReason = (await linkOf(phone)).lastRejection;
      const otherKey = await companion.sendPairingRequest(advSecret, { noiseKey: randomBytes(32) });
      const otherKeyReason = (await linkOf(phone)).lastRejection;
      const good = await companion.sendPairingRequest(advSecret);

      expect(garbage).to.deep.equal({ code: 401, text: 'pairing-request-rejected' });
      expect(garbageReason).to.equal('pairing-request');
      expect(otherKey).to.deep.equal({ code: 401, text: 'pairing-request-rejected' });
      expect(otherKeyReason).to.equal('noise-key');
      expect(good).to.not.have.property('code');
      expect(await linkOf(phone)).to.include({ step: 'awaiting-confirmation', rejections: 14 });
    });
  });

  describe('fault modes', () => {
    it('When assertions are to be rejected, then even a valid one gets 401 (fault) until the fault is lifted', async () => {
      const { phone, authenticator, companion } = await scanGated('qr', {
        faults: { rejectAssertion: true },
      });
      const challenge = (await companion.requestOptions())!.challenge as string;
      const ref = await companion.fetchRef();

      const refusedAnswer = await companion.sendPrologue(
        authenticator.assert(challenge),
        companion.newPrologue(ref),
      );
      const refusedLink = await linkOf(phone);
      await ctl('POST', `/accounts/${phone}/passkey/faults`, { rejectAssertion: false });
      const accepted = await companion.sendPrologue(
        authenticator.assert(challenge),
        companion.newPrologue(ref),
      );

      expect(refusedAnswer).to.deep.equal(REJECTED);
      expect(refusedLink).to.include({ lastRejection: 'fault', rejections: 1 });
      expect(accepted).to.not.have.property('code');
      await companion.primaryIdentity();
    });

    it('When the continuation is never sent, then the prologue is taken but no crsc_continuation comes', async () => {
      const { phone, authenticator, companion } = await scanGated('qr', {
        faults: { withholdContinuation: true },
      });

      await passAssertion(companion, authenticator);
      await sleep(500);

      expect(companion.continuations).to.have.length(0);
      expect(await linkOf(phone)).to.include({ step: 'awaiting-nonce', continuationSent: false });
    });

    it('When the options are left out of the notification, then the companion fetches them and its assertion is taken', async () => {
      const { authenticator, companion } = await scanGated('qr', { faults: { omitOptions: true } });

      const inNotification = await companion.requestOptions();
      const fetched = (await companion.fetchOptions()) as Json;
      await passAssertion(companion, authenticator);

      expect(getBinaryNodeChild(companion.requests[0]!, 'passkey_request_options')).to.equal(undefined);
      expect(inNotification).to.equal(undefined);
      expect(fetched).to.include({ rpId: 'whatsapp.com', timeout: 600_000 });
      await companion.primaryIdentity();
    });

    it('When the code comes without the wrapped key on an ungated account, then primary_hello lacks it and nothing asks for a passkey', async () => {
      const phone = String(nextPhone++);
      await ctl('POST', `/accounts/${phone}/passkey/faults`, { codeWithoutWrappedKey: true });
      const { device, companion } = await waitingDevice();
      const code = await device.sock!.requestPairingCode(phone);

      // the phone then waits for a companion_finish that cannot come (Baileys #2694)
      void sim.linkWithPairingCode({ pairingCode: code, phone }).catch(() => undefined);
      const hello = await until(() => companion.primaryHellos[0], 10_000, 'primary_hello');
      await sleep(500);
      const reg = getBinaryNodeChild(hello, 'link_code_companion_reg')!;

      expect(getBinaryNodeChild(reg, 'primary_identity_pub')).to.not.equal(undefined);
      expect(getBinaryNodeChild(reg, 'link_code_pairing_wrapped_primary_ephemeral_pub')).to.equal(undefined);
      expect(companion.requests).to.have.length(0);
      expect(sim.devices(phone)).to.deep.equal([]);
    });

    it('When the request expires, then a prologue gets 408 passkey-request-expired, nothing more is sent and the link fails 408', async () => {
      const { phone, authenticator } = await gatedAccount('qr', { faults: { timeoutMs: 400 } });
      const { companion, qr } = await waitingDevice();

      const linking = sim.linkWithQr({ qr, phone }).then(
        (r: LinkResult) => r,
        (err: Error & { status?: number }) => err,
      );
      const options = (await companion.requestOptions())!;
      const ref = await companion.fetchRef();
      await waitFor(async () => (await linkOf(phone)).step === 'expired', {
        timeoutMs: 5000,
        what: 'expiry',
      });
      const late = await companion.sendPrologue(
        authenticator.assert(options.challenge as string),
        companion.newPrologue(ref),
      );
      const lateOptions = await companion.fetchOptions();
      await sleep(300);
      const outcome = (await linking) as Error & { status?: number };

      expect(options.timeout).to.equal(400);
      expect(late).to.deep.equal({ code: 408, text: 'passkey-request-expired' });
      expect(lateOptions).to.deep.equal({ code: 408, text: 'passkey-request-expired' });
      expect(companion.continuations).to.have.length(0);
      expect(companion.pairSuccesses).to.have.length(0);
      expect(await linkOf(phone)).to.include({ step: 'expired', rejections: 0 });
      expect(outcome.status).to.equal(408);
      expect(outcome.message).to.equal('the passkey request expired');
      expect(sim.devices(phone)).to.deep.equal([]);
    });
  });

  it('When an account is not gated (or gated only for codes), then a QR links it exactly as before', async () => {
    const ungated = await linkTestDevice(sim, String(nextPhone++), 'Ungated');
    devices.push(ungated);
    const { phone } = await gatedAccount('code');
    const { device, companion, qr } = await waitingDevice();

    const opened = device.waitForOpen(20_000);
    const linked = await ctl('POST', '/phone/link', { qr, phone, name: 'QR while code-gated' });
    await opened;

    expect(ungated.closes.map((c) => c.statusCode)).to.deep.equal([515]);
    expect(linked.status).to.equal(200);
    expect(linked.body).to.have.all.keys('phone', 'deviceId', 'jid', 'lid');
    expect(linked.body).to.include({ phone, deviceId: 1, jid: `${phone}:1@s.whatsapp.net` });
    expect(linked.body.lid).to.match(/^\d+:1@lid$/);
    expect(companion.requests).to.have.length(0);
    expect(companion.pairSuccesses).to.have.length(1);
    expect(await passkeyOf(phone)).to.include({ link: null });
  });
});
