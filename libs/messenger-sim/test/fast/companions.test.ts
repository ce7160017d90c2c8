import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  BufferJSON,
  configureSuccessfulPairing,
  Curve,
  generateSignalPubKey,
  initAuthCreds,
  WA_ADV_DEVICE_SIG_PREFIX,
  proto,
  type AuthenticationCreds,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import {
  companionKeysBody,
  freePort,
  newCompanion,
  pairedCreds,
  simControl,
  TestDevice,
  until,
  type NewCompanion,
} from '@mgw/testing';
import { startSimulator, type ProvisionedCompanion, type SimulatorHandle } from '../../src/index.js';

/** The pair-success stanza the provisioned companion stands for (what a QR link would have sent). */
function pairSuccess(p: ProvisionedCompanion): BinaryNode {
  return {
    tag: 'iq',
    attrs: { id: 'pair-1', from: 's.whatsapp.net', type: 'set' },
    content: [
      {
        tag: 'pair-success',
        attrs: {},
        content: [
          { tag: 'device-identity', attrs: {}, content: Buffer.from(p.deviceIdentity, 'base64') },
          { tag: 'platform', attrs: { name: p.platform } },
          { tag: 'device', attrs: { jid: p.jid, lid: p.lid } },
          { tag: 'biz', attrs: { name: p.businessName } },
        ],
      },
    ],
  };
}

const asStored = (creds: AuthenticationCreds) => JSON.parse(JSON.stringify(creds, BufferJSON.replacer));

describe('messenger-sim: companions provisioned for the fast link', function () {
  this.timeout(60_000);
  let dir: string;
  let sim: SimulatorHandle | undefined;
  let device: TestDevice | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-sim-companions-'));
  });
  afterEach(async () => {
    await device?.end();
    device = undefined;
    await sim?.close();
    sim = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const provision = async (phone: string, companion: NewCompanion, name?: string) => {
    const res = await simControl(sim!)('POST', `/accounts/${phone}/companions`, {
      ...companionKeysBody(companion.creds),
      ...(name ? { name } : {}),
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as unknown as ProvisionedCompanion;
  };

  it("When a companion is provisioned, then its credentials are the ones Baileys' own pair-success makes of the same stanza, field for field, and every signature verifies", async () => {
    sim = await startSimulator({ port: 0 });
    const companion = newCompanion();
    // The same fields initAuthCreds makes, and a signed pre-key Baileys' check accepts.
    expect(Object.keys(companion.creds).sort()).to.deep.equal(Object.keys(initAuthCreds()).sort());
    const { signedPreKey, signedIdentityKey } = companion.creds;
    expect(
      Curve.verify(
        signedIdentityKey.public,
        generateSignalPubKey(signedPreKey.keyPair.public),
        signedPreKey.signature,
      ),
    ).to.equal(true);

    const provisioned = await provision('15550041001', companion, 'Fast Account');
    expect(provisioned).to.include({ phone: '15550041001', deviceId: 1, platform: 'android' });
    expect(provisioned.businessName).to.equal('Fast Account');
    expect(provisioned.jid).to.equal('15550041001:1@s.whatsapp.net');
    expect(provisioned.lid).to.match(/^\d+:1@lid$/);

    // Baileys' handler also checks the account's signature (made natively by the simulator).
    const { creds: update } = configureSuccessfulPairing(pairSuccess(provisioned), companion.creds);
    const byBaileys = asStored({ ...companion.creds, ...update });
    const fast = asStored(pairedCreds(companion, provisioned));
    // Signatures are randomised (libsignal) or not (Ed25519): each must verify, the rest be equal.
    const signatures = [fast, byBaileys].map((c) => {
      const sig = Buffer.from(c.account.deviceSignature, 'base64');
      delete c.account.deviceSignature;
      return sig;
    });
    expect(fast).to.deep.equal(byBaileys);
    const account = proto.ADVSignedDeviceIdentity.decode(
      proto.ADVSignedDeviceIdentityHMAC.decode(Buffer.from(provisioned.deviceIdentity, 'base64')).details!,
    );
    const signed = Buffer.concat([
      WA_ADV_DEVICE_SIG_PREFIX,
      account.details!,
      signedIdentityKey.public,
      account.accountSignatureKey!,
    ]);
    for (const sig of signatures) expect(Curve.verify(signedIdentityKey.public, signed, sig)).to.equal(true);
  });

  it('When a provisioned companion connects with those credentials, then it logs in, uploads its pre-keys and sends; after a restart on its state file it logs in again', async () => {
    const stateFile = path.join(dir, 'state.json');
    const port = await freePort();
    const start = () => startSimulator({ port, stateFile, receiptDelayMs: 100, readDelayMs: 200 });
    sim = await start();
    const account = '15550041002';
    const contact = '15550041003';
    const companion = newCompanion();
    const creds = pairedCreds(companion, await provision(account, companion));

    device = new TestDevice(sim.info);
    Object.assign(device.auth.creds, creds);
    device.connect();
    await device.waitForOpen(20_000);
    await until(() => (sim!.devices(account)[0]?.preKeys ?? 0) > 0);
    expect(sim.devices(account)).to.have.length(1);
    expect(sim.devices(account)[0]).to.include({ id: 1, connected: true });
    const sent = await device.sock!.sendMessage(`${contact}@s.whatsapp.net`, { text: 'fast and linked' });
    const got = await until(() => sim!.inbox(contact).find((m) => m.id === sent!.key.id));
    expect(got).to.include({ from: account, text: 'fast and linked' });

    await device.end();
    await sim.close();
    sim = await start();
    device.connect();
    await device.waitForOpen(20_000);
    expect(sim.devices(account).map((d) => d.connected)).to.deep.equal([true]);
  });

  it('When companions are provisioned in a batch, then each gets its own device number, and a batch with one bad entry provisions none', async () => {
    sim = await startSimulator({ port: 0 });
    const call = simControl(sim);
    const body = (phone: string) => ({ phone, ...companionKeysBody(newCompanion().creds) });
    const ok = await call('POST', '/companions', {
      companions: [body('15550041004'), body('15550041004'), body('15550041005')],
    });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    const answers = ok.body.companions as ProvisionedCompanion[];
    expect(answers.map((c) => [c.phone, c.deviceId])).to.deep.equal([
      ['15550041004', 1],
      ['15550041004', 2],
      ['15550041005', 1],
    ]);

    const bad = await call('POST', '/companions', {
      companions: [body('15550041006'), { ...body('15550041007'), identityKey: 'c2hvcnQ=' }],
    });
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.equal('companions[1].identityKey must be 32 bytes, base64');
    expect((await call('GET', '/devices/15550041006')).status).to.equal(404);
    expect((await call('POST', '/companions', { companions: [] })).status).to.equal(400);
    const noKeys = await call('POST', '/accounts/15550041008/companions', {});
    expect(noKeys.status).to.equal(400);
  });
});
