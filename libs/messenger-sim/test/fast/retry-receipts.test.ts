import { expect } from 'chai';
import { getBinaryNodeChild, getBinaryNodeChildBuffer, type BinaryNode } from '@whiskeysockets/baileys';
import type { SimulatorHandle } from '../../src/index.js';
import { until, type TestDevice, linkTestDevice, startTestSimulator } from '@mgw/testing';

const ACCOUNT = '15550004001';

/**
 * The contacts' phones that cannot decrypt (POST /faults/undecryptable) and their retry receipts,
 * as a bare Baileys client sees them: with Baileys' own answering (its recent-message cache).
 */
describe('messenger-sim: retry receipts from a phone that cannot decrypt', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let device: TestDevice;
  const receipts: BinaryNode[] = [];

  before(async () => {
    sim = await startTestSimulator();
    device = await linkTestDevice(sim, ACCOUNT);
    device.sock!.ws.on('CB:receipt,type:retry', (node: BinaryNode) => receipts.push(node));
  });
  after(async () => {
    await device?.end();
    await sim.close();
  });
  afterEach(() => sim.clearFaults());

  const asks = (id: string) => receipts.filter((r) => r.attrs.id === id);
  const registrationOf = (r: BinaryNode) =>
    Buffer.from(getBinaryNodeChildBuffer(r, 'registration')!).readUInt32BE(0);
  const identityOf = (r: BinaryNode) => getBinaryNodeChildBuffer(getBinaryNodeChild(r, 'keys'), 'identity');

  it('When the phone fails once, then it sends one retry receipt (count 1, its registration id, no keys) and reads the re-sent copy', async () => {
    const contact = '15550004002';
    sim.upsertContact({ phone: contact });
    sim.failDecrypt({ phone: contact, mode: 'once' });
    const sent = await device.sock!.sendMessage(`${contact}@s.whatsapp.net`, { text: 'once' });
    const id = sent!.key.id!;
    await until(() => sim.inbox(contact).find((m) => m.id === id), 10_000, 'the re-sent copy read');
    const [ask] = asks(id);
    expect(asks(id)).to.have.length(1);
    expect(ask!.attrs).to.include({ id, type: 'retry', from: `${contact}@s.whatsapp.net` });
    expect(getBinaryNodeChild(ask, 'retry')!.attrs).to.include({ count: '1', id, v: '1' });
    expect(registrationOf(ask!)).to.equal(sim.simulator.directory.get(contact)!.signal.registrationId);
    expect(getBinaryNodeChild(ask, 'keys')).to.equal(undefined);
    expect(sim.undecryptable(contact).map((m) => m.id)).to.deep.equal([id]);
    expect(sim.inbox(contact).filter((m) => m.id === id)).to.have.length(1);
  });

  it('When the phone fails always, then each ask counts up and carries its keys from the second on; it never reads the message', async () => {
    const contact = '15550004003';
    sim.upsertContact({ phone: contact });
    sim.failDecrypt({ phone: contact, mode: 'always' });
    const sent = await device.sock!.sendMessage(`${contact}@s.whatsapp.net`, { text: 'always' });
    const id = sent!.key.id!;
    // Baileys rc14 on its own answers the first two asks (it counts each twice against 5)
    await until(() => asks(id).length >= 3, 10_000, 'three asks');
    expect(asks(id).map((r) => getBinaryNodeChild(r, 'retry')!.attrs.count)).to.deep.equal(['1', '2', '3']);
    expect(getBinaryNodeChild(asks(id)[0], 'keys')).to.equal(undefined);
    for (const r of asks(id).slice(1)) {
      const keys = getBinaryNodeChild(r, 'keys')!;
      expect(getBinaryNodeChildBuffer(keys, 'type')).to.deep.equal(Buffer.from([5]));
      expect(identityOf(r)).to.have.length(32);
      expect(getBinaryNodeChild(keys, 'key')).to.not.equal(undefined);
      expect(getBinaryNodeChild(keys, 'skey')).to.not.equal(undefined);
    }
    expect(sim.inbox(contact).filter((m) => m.id === id)).to.have.length(0);
    expect(sim.undecryptable(contact).filter((m) => m.id === id)).to.have.length(3);
  });

  it('When the phone was re-installed, then its first ask carries the new identity and registration, and the copy sent to the new session is read', async () => {
    const contact = '15550004004';
    sim.upsertContact({ phone: contact });
    const first = await device.sock!.sendMessage(`${contact}@s.whatsapp.net`, { text: 'before' });
    await until(() => sim.inbox(contact).find((m) => m.id === first!.key.id), 10_000, 'first read');
    const old = sim.simulator.directory.get(contact)!.signal;
    sim.failDecrypt({ phone: contact, mode: 'reinstalled' });
    const sent = await device.sock!.sendMessage(`${contact}@s.whatsapp.net`, { text: 'after' });
    const id = sent!.key.id!;
    await until(() => sim.inbox(contact).find((m) => m.id === id), 10_000, 'read by the re-installed phone');
    const now = sim.simulator.directory.get(contact)!.signal;
    expect(now).to.not.equal(old);
    const [ask] = asks(id);
    expect(getBinaryNodeChild(ask, 'retry')!.attrs.count).to.equal('1');
    expect(registrationOf(ask!)).to.equal(now.registrationId);
    expect(identityOf(ask!)).to.deep.equal(Buffer.from(now.identity.public));
    expect(identityOf(ask!)).to.not.deep.equal(Buffer.from(old.identity.public));
    // the copy encrypted for the old phone could not be decrypted (no session), for real
    expect(sim.undecryptable(contact).find((m) => m.id === id)!.error).to.not.include('undecryptable fault');
  });

  it('When the fault is armed with a bad mode or delay, then the control API answers 400', async () => {
    const post = (body: unknown) =>
      fetch(`${sim.controlUrl}/faults/undecryptable`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post({ mode: 'sometimes' })).status).to.equal(400);
    expect((await post({ mode: 'once', delayMs: -1 })).status).to.equal(400);
    expect((await post({ phone: '15550004009', mode: 'once' })).status).to.equal(200);
  });
});
