import { expect } from 'chai';
import type { WACallEvent, WAMessage } from '@whiskeysockets/baileys';
import type { SimCall, SimulatorHandle } from '../../src/index.js';
import { readReceiptsOf } from '../../src/read-receipts.js';
import { until, type TestDevice, linkTestDevice, startTestSimulator } from '@mgw/testing';

const ACCOUNT = '15550003001';
const CONTACT = '15550003002';

/**
 * Calls and read receipts between the simulator and a real Baileys client (no gateway): the
 * offer, accept and terminate stanzas reach the client as its `call` events, its reject ends the
 * call at the server, and its read receipts (`read`, or `read-self` when the account's
 * read-receipts privacy is off) are recorded for the contact they are about.
 */
describe('messenger-sim: calls and read receipts through a linked device', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let device: TestDevice;
  const calls: WACallEvent[] = [];
  const received: WAMessage[] = [];
  const control = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${sim.controlUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as T;
    if (!res.ok) throw new Error(`${method} ${path} -> ${res.status} ${JSON.stringify(json)}`);
    return json;
  };

  before(async () => {
    sim = await startTestSimulator();
    device = await linkTestDevice(sim, ACCOUNT);
    device.sock!.ev.on('call', (events) => calls.push(...events));
    device.sock!.ev.on('messages.upsert', ({ messages }) => received.push(...messages));
  });
  after(async () => {
    await device?.end();
    await sim.close();
  });

  it('When a contact calls with video and the device rejects, then the client saw the offer and the call ends rejected at the server', async () => {
    const call = await control<SimCall>('POST', '/calls', { from: CONTACT, to: ACCOUNT, video: true });
    const offer = await until(
      () => calls.find((c) => c.id === call.id && c.status === 'offer'),
      10_000,
      'offer',
    );
    expect(offer).to.include({ isVideo: true, isGroup: false });
    expect(offer.from).to.equal(`${CONTACT}@s.whatsapp.net`);
    await device.sock!.rejectCall(call.id, offer.from);
    const after = await control<SimCall>('GET', `/calls/${call.id}`);
    expect(after.state).to.equal('rejected');
    expect(after.rejectedAfterMs).to.be.a('number');
    // Ended: no second reject, no terminate.
    const again = await fetch(`${sim.controlUrl}/calls/${call.id}/terminate`, { method: 'POST' });
    expect(again.status).to.equal(409);
  });

  it('When the device rejects with a tctoken in the reject (whatsmeow 00ce57f2, taken back in 592721a0), then the server ignores it and the call keeps ringing until a plain reject', async () => {
    const call = await control<SimCall>('POST', '/calls', { from: CONTACT, to: ACCOUNT });
    const offer = await until(
      () => calls.find((c) => c.id === call.id && c.status === 'offer'),
      10_000,
      'offer',
    );
    const sock = device.sock!;
    await sock.query({
      tag: 'call',
      attrs: { from: sock.authState.creds.me!.id, to: offer.from },
      content: [
        {
          tag: 'reject',
          attrs: { 'call-id': call.id, 'call-creator': offer.from, count: '0' },
          content: [{ tag: 'tctoken', attrs: {}, content: Buffer.from('a contact token') }],
        },
      ],
    });
    const ringing = await control<SimCall>('GET', `/calls/${call.id}`);
    expect(ringing).to.include({ state: 'ringing', rejectsWithTctoken: 1 });
    await sock.rejectCall(call.id, offer.from);
    expect((await control<SimCall>('GET', `/calls/${call.id}`)).state).to.equal('rejected');
  });

  it('When the phone answers a group call and the caller hangs up, then the client sees accept and terminate', async () => {
    const call = await control<SimCall>('POST', '/calls', {
      from: CONTACT,
      to: ACCOUNT,
      groupId: '120363000000000777@g.us',
    });
    await until(() => calls.find((c) => c.id === call.id && c.status === 'offer'), 10_000, 'offer');
    expect((await control<SimCall>('POST', `/calls/${call.id}/accept`, {})).state).to.equal('accepted');
    expect((await control<SimCall>('POST', `/calls/${call.id}/terminate`, {})).state).to.equal('ended');
    await until(() => calls.find((c) => c.id === call.id && c.status === 'terminate'), 10_000, 'terminate');
    const steps = calls.filter((c) => c.id === call.id).map((c) => c.status);
    expect(steps).to.deep.equal(['offer', 'accept', 'terminate']);
    expect(calls.find((c) => c.id === call.id && c.status === 'offer')).to.include({
      isGroup: true,
      groupJid: '120363000000000777@g.us',
    });
    const bad = await fetch(`${sim.controlUrl}/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: CONTACT, to: ACCOUNT, groupId: 'nope' }),
    });
    expect(bad.status).to.equal(400);
  });

  it('When the device reads messages, then the contact sees `read`; with the account’s read receipts off, only `read-self` goes and the contact sees nothing', async () => {
    const sock = device.sock!;
    const first = await sim.sendInbound(CONTACT, ACCOUNT, 'one');
    const msg = await until(() => received.find((m) => m.key.id === first.id), 10_000, 'message');
    expect((await sock.fetchPrivacySettings(true)).readreceipts).to.equal('all');
    await sock.readMessages([msg.key]);
    const shown = await until(() => readReceiptsOf(sim.simulator, CONTACT)[0], 10_000, 'receipt');
    expect(shown).to.include({ from: ACCOUNT, id: first.id, type: 'read', shown: true });

    await control('PUT', `/accounts/${ACCOUNT}/privacy`, { readreceipts: 'none' });
    expect(await control('GET', `/accounts/${ACCOUNT}/privacy`)).to.include({ readreceipts: 'none' });
    const second = await sim.sendInbound(CONTACT, ACCOUNT, 'two');
    const msg2 = await until(() => received.find((m) => m.key.id === second.id), 10_000, 'message');
    // Baileys keeps the settings it read: asked again, it sees the change and sends read-self.
    expect((await sock.fetchPrivacySettings(true)).readreceipts).to.equal('none');
    await sock.readMessages([msg2.key]);
    const selfRead = await until(() => readReceiptsOf(sim.simulator, CONTACT)[1], 10_000, 'second receipt');
    expect(selfRead).to.include({ id: second.id, type: 'read-self', shown: false });
    const listed = await control<{ receipts: unknown[] }>('GET', `/contacts/${CONTACT}/read-receipts`);
    expect(listed.receipts).to.have.length(2);
  });
});
